#!/usr/bin/env bash
# kiln record --otlp-endpoint: each session also goes out as OTLP profiles over HTTP, read
# by a receiver built on the OpenTelemetry Collector's own data model (pdata/pprofile,
# from the Go module proxy). The receiver sees the same samples as the .col file, the
# service name and host as resource attributes, one resource per process with its
# executable name, CPU samples with their period, and the workload's own stacks; an
# endpoint that is down only costs a logged error.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
need_root
command -v go >/dev/null || skip "go is not installed"
OQ=$(go_tool otlpq 24) || { echo "$OQ"; exit 2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$OQ" receive "127.0.0.1:$port" "$T/received" & reap $!
for _ in $(seq 50); do
	curl -s -o /dev/null "http://127.0.0.1:$port/" && break
	sleep 0.1
done
build_c ratio
"$WB/ratio" 2 30 & reap $!
sleep 0.3
record -d 4 -f 199 --no-flamegraph --service-name otlp-e2e --otlp-endpoint "http://127.0.0.1:$port"
for _ in $(seq 50); do
	[ -s "$T/received" ] && break
	sleep 0.1
done
head -c 600 "$T/received"; echo
grep -q '^request content-type application/x-protobuf$' "$T/received" || fail "no OTLP request arrived"
col_total=$(awk '!/^#/ { s += $NF } END { print s + 0 }' "$COL")
otlp_total=$(awk '/^profile / { s += $NF } END { print s + 0 }' "$T/received")
echo "samples: .col $col_total, OTLP $otlp_total"
[ "$col_total" -gt 0 ] && [ "$otlp_total" = "$col_total" ] || fail "OTLP has $otlp_total samples, the .col $col_total"
grep -q "^profile {host.name=$(hostname),process.executable.name=ratio,service.name=otlp-e2e} samples/count period 502512[56] total [1-9]" \
	"$T/received" || fail "no ratio resource with its attributes: $(grep '^profile' "$T/received" | head -5)"
ratio_col=$(colcheck count "$COL" ratio)
ratio_otlp=$(awk '/^profile .*process.executable.name=ratio,/ { print $NF }' "$T/received")
[ "$ratio_col" = "$ratio_otlp" ] || fail "ratio: .col $ratio_col, OTLP $ratio_otlp"
grep -q '^stack .*;dispatch;alpha [0-9]' "$T/received" || fail "no ratio stack through dispatch;alpha"

# the receiver gone: the session still ends, with the error in the log
kill "${_cleanup_pids[0]}" 2>/dev/null
sleep 0.2
record -d 1 -f 99 --no-flamegraph --otlp-endpoint "http://127.0.0.1:$port"
grep -q "OTLP export to http://127.0.0.1:$port/v1development/profiles failed" "$T/record.log" ||
	fail "no error for a receiver that is down: $(cat "$T/record.log")"
pass "$otlp_total samples"
