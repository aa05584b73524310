#!/usr/bin/env bash
# Profile types in the server: a real Go heap profile pushed to Pyroscope's /ingest is
# stored as one series per sample type (alloc_objects, alloc_space, inuse_objects,
# inuse_space) and each comes back with the totals `go tool pprof -raw` gives for it, by
# its legacy name or by its profile type id; a CPU profile pushed to the same app keeps
# CPU samples as the default of its queries and its cpu/nanoseconds values beside them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod HOME=${HOME:-/root}

# "type total" per sample type: pprof_totals without the units
totals() { pprof_totals "$1" | sed 's|/[^ ]* | |'; }
# the sum of the counts of a collapsed render
render_sum() {
	curl -sf "${URL}render?$1&from=now-1h&until=now&format=collapsed" |
		awk '{ s += $NF } END { print s + 0 }'
}

go build -o "$T/goheap" "$ROOT/tests/workloads/goheap.go" 2>"$T/build.err" ||
	fail "cannot build the Go workload: $(cat "$T/build.err")"
"$T/goheap" "$T/heap.pprof" "$T/cpu.pprof" || fail "Go workload failed"
totals "$T/heap.pprof" >"$T/heap.totals"
totals "$T/cpu.pprof" >"$T/cpu.totals"
cat "$T/heap.totals" "$T/cpu.totals"

start_server "$T/data"
now=$(date -u +%s)
for f in heap cpu; do
	curl -sf -X POST --data-binary @"$T/$f.pprof" \
		"${URL}ingest?name=goapp%7Bpod%3Dweb-0%7D&format=pprof&from=$((now - 10))&until=$now" ||
		fail "pushing the $f profile failed"
done

curl -sf "${URL}api/apps" >"$T/apps.json"
for type in alloc_objects alloc_space inuse_objects inuse_space; do
	want=$(awk -v t="$type" '$1 == t { print $2 }' "$T/heap.totals")
	unit=$(case $type in *space) echo bytes ;; *) echo count ;; esac)
	id="memory:$type:$unit:space:bytes"
	grep -q "\"name\":\"goapp.$type\"" "$T/apps.json" || fail "no goapp.$type service"
	by_name=$(render_sum "query=goapp.$type%7Bpod%3D%22web-0%22%7D")
	by_type=$(render_sum "query=goapp&profile_type=$id")
	echo "$type: go $want, by name $by_name, by type $by_type"
	[ "$want" -gt 0 ] && [ "$by_name" = "$want" ] && [ "$by_type" = "$want" ] ||
		fail "$type: go tool pprof says $want, kiln $by_name by name, $by_type by type"
done
# the pprof export says what its values are
curl -sf -o "$T/alloc.pb.gz" "${URL}render?query=goapp.alloc_space&from=now-1h&until=now&format=pprof" ||
	fail "pprof export failed"
want=$(awk '$1 == "alloc_space" { print $2 }' "$T/heap.totals")
[ "$(totals "$T/alloc.pb.gz" | tr '\n' ' ')" = "alloc_space $want " ] ||
	fail "pprof export of alloc_space: $(totals "$T/alloc.pb.gz")"
go tool pprof -raw "$T/alloc.pb.gz" 2>/dev/null | grep -q '^alloc_space/bytes$' ||
	fail "pprof export does not say alloc_space/bytes"
grep -q '"name":"goapp.alloc_space","spyName":"[^"]*","units":"bytes"' "$T/apps.json" ||
	grep -q '"name":"goapp.alloc_space".*"units":"bytes"' "$T/apps.json" ||
	fail "alloc_space units are not bytes: $(cat "$T/apps.json")"

# CPU: samples stay the default, the cpu/nanoseconds values are there by their type
samples=$(awk '$1 == "samples" { print $2 }' "$T/cpu.totals")
ns=$(awk '$1 == "cpu" { print $2 }' "$T/cpu.totals")
[ "$(render_sum "query=goapp.cpu")" = "$samples" ] || fail "goapp.cpu is not the $samples samples"
[ "$(render_sum "query=goapp.cpu&profile_type=process_cpu:samples:count:cpu:nanoseconds")" = "$samples" ] ||
	fail "the samples type does not give the $samples samples"
[ "$(render_sum "query=goapp&profile_type=process_cpu:cpu:nanoseconds:cpu:nanoseconds")" = "$ns" ] ||
	fail "the cpu type does not give $ns ns"
curl -sf "${URL}pyroscope/render?query=goapp.cpu&from=now-1h&until=now" |
	grep -q "\"numTicks\":$samples[,}]" || fail "flamebearer of goapp.cpu is not $samples ticks"
# the Connect push API: the __name__ label names the types
PYTHONPATH="$ROOT/tests/tools" python3 - "$T/heap.pprof" >"$T/push.bin" <<'PY'
import sys
from protowire import field, label
series = (label("__name__", "memory") + label("service_name", "connectapp") +
          label("pod", "web-1") + field(2, field(1, open(sys.argv[1], "rb").read())))
sys.stdout.buffer.write(field(1, series))
PY
curl -sf -o /dev/null -X POST -H 'Content-Type: application/proto' --data-binary @"$T/push.bin" \
	"${URL}push.v1.PusherService/Push" || fail "Connect push of the heap profile failed"
for type in alloc_space inuse_objects; do
	want=$(awk -v t="$type" '$1 == t { print $2 }' "$T/heap.totals")
	unit=$(case $type in *space) echo bytes ;; *) echo count ;; esac)
	got=$(render_sum "query=connectapp%7Bpod%3D%22web-1%22%7D&profile_type=memory:$type:$unit:space:bytes")
	[ "$got" = "$want" ] || fail "Connect push, $type: go tool pprof says $want, kiln $got"
done

# a type no series has: nothing; a malformed one: 400
[ "$(render_sum "query=goapp.cpu&profile_type=wall:wall:nanoseconds:wall:nanoseconds")" = 0 ] ||
	fail "an absent type returned samples"
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL}render?query=goapp.cpu&profile_type=cpu")
[ "$code" = 400 ] || fail "a malformed profile_type got $code"
pass
