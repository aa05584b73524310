#!/usr/bin/env bash
# OTLP profiles into kiln serve: a request built with the OpenTelemetry Collector's own
# data model (pdata/pprofile, from the Go module proxy) and sent over OTLP/HTTP, gzipped.
# Each OTLP profile is stored by its type under its service: resource and sample
# attributes become labels (host.name: host, container.id: container,
# process.executable.name: process, thread.name: thread), inlined functions become _[i]
# frames and kernel frames _[k]; timestamps count as samples; a resource without a
# service name is "unknown_service:<executable>". Bad bodies are refused with nothing
# stored.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
OQ=$(go_tool otlpq 24) || { echo "$OQ"; exit 2; }

start_server "$T/data"
"$OQ" send "${URL}v1development/profiles" || fail "the OTLP push failed"

col() {
	curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$1" --data-urlencode from=now-1h \
		--data-urlencode until=now --data-urlencode format=collapsed | grep -v '^#' | sort
}
got=$(col 'otlpapp.cpu')
want=$(printf '%s\n' 'main;handle;parse 4' 'main;handle;parse;do_syscall_64_[k] 2' \
	'main;handle;render;fmt.Sprintf_[i] 4' 'main;idle 3' | sort)
[ "$got" = "$want" ] || fail "otlpapp stacks: $got"
# the CPU samples are kiln's own CPU type, so the Connect querier and kiln's UI list them
curl -sf "${URL}api/apps" | grep -q '"name":"otlpapp.cpu","spyName":"otlp","sampleRate":100' ||
	fail "otlpapp.cpu is not a 100 Hz otlp service: $(curl -sf "${URL}api/apps")"
labels=$(curl -sf "${URL}api/labels?query=otlpapp.cpu")
[ "$labels" = '{"container":["c0ffee"],"host":["h1"],"process":["worker"],"thread":["t1","t2"]}' ] ||
	fail "otlpapp labels: $labels"
[ "$(col 'otlpapp.cpu{thread="t2"}')" = 'main;handle;render;fmt.Sprintf_[i] 4' ] ||
	fail "thread t2: $(col 'otlpapp.cpu{thread="t2"}')"
[ "$(col 'unknown_service_batch.alloc_space')" = 'main;grow 4096' ] ||
	fail "the batch heap profile: $(col 'unknown_service_batch.alloc_space')"
curl -sf "${URL}api/apps" | grep -q '"name":"unknown_service_batch.alloc_space"[^}]*"units":"bytes"' ||
	fail "alloc_space is not in bytes"

# bad requests: refused, nothing stored
before=$(curl -sf "${URL}api/apps")
code=$(printf 'not a protobuf' | curl -s -o "$T/reply" -w '%{http_code}' -X POST \
	-H 'Content-Type: application/x-protobuf' --data-binary @- "${URL}v1development/profiles")
[ "$code" = 400 ] || fail "garbage got $code: $(cat "$T/reply")"
code=$(curl -s -o "$T/reply" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' \
	"${URL}v1development/profiles")
[ "$code" = 415 ] || fail "JSON got $code"
# a stack index outside the stack table (a request field 1 with one profile whose sample
# points at stack 5 of a dictionary with none)
PYTHONPATH="$ROOT/tests/tools" python3 - >"$T/bad.bin" <<'PY'
import sys
from protowire import field, varint
sample = varint(1 << 3) + varint(5) + varint(4 << 3) + varint(1)
profile = field(2, sample)
scope = field(2, profile)
resource = field(2, scope)
dictionary = field(5, b"") + field(7, b"")
sys.stdout.buffer.write(field(1, resource) + field(2, dictionary))
PY
code=$(curl -s -o "$T/reply" -w '%{http_code}' -X POST -H 'Content-Type: application/x-protobuf' \
	--data-binary @"$T/bad.bin" "${URL}v1development/profiles")
[ "$code" = 400 ] && grep -q "outside" "$T/reply" || fail "a bad stack index got $code: $(cat "$T/reply")"
[ "$(curl -sf "${URL}api/apps")" = "$before" ] || fail "a refused request stored something"
pass
