#!/usr/bin/env bash
# --nodejs-mode attach-maps when kiln is killed (SIGKILL) after the attach, before it can
# tell node to stop: the module sees kiln gone (it looks once a second, at a code event)
# and stops writing by itself, while the workload keeps compiling new functions; node
# keeps running, and no port is left open.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node (KILN_NODE)
node_maps_lib

(cd "$T" && exec "$NODE" "$W/node_newfn.js" 120 0 20 >"$T/newfn.out" 2>"$T/newfn.err") & pid=$!
reap $pid
map=/tmp/perf-$pid.map
trap 'rm -f "$map"; cleanup' EXIT
sleep 0.5
: >"$T/record.log"
"$KILN" record -o "$T/out" -d 60 -f 99 --no-flamegraph --nodejs-mode attach-maps \
	--pids "$pid" >"$T/record.log" 2>&1 & kiln=$!
reap $kiln
while kill -0 $kiln 2>/dev/null && ! grep -q 'writes /tmp/perf-' "$T/record.log"; do sleep 0.1; done
grep -q "pid $pid writes /tmp/perf-" "$T/record.log" || fail "kiln did not attach: $(cat "$T/record.log")"
s0=$(stat -c %s "$map")
{ kill -KILL $kiln && wait $kiln; } 2>/dev/null
# the module looks for kiln at its first code event a second after its last look
sleep 3
r1=$(wc -l <"$T/newfn.out")
s1=$(stat -c %s "$map")
sleep 3
r2=$(wc -l <"$T/newfn.out")
s2=$(stat -c %s "$map")
[ "$r2" -gt "$r1" ] || fail "the workload stopped compiling ($r1, $r2 rounds)"
[ "$s1" -eq "$s2" ] || fail "the map still grows after kiln was killed ($s0 at the kill, then $s1 -> $s2 bytes)"
kill -0 $pid || fail "node died: $(cat "$T/newfn.err")"
open=$(ss -ltnpH | grep -E "pid=$pid," || true)
[ -z "$open" ] || fail "node listens after kiln was killed: $open"
pass "map $s0 bytes at the kill, $s1 bytes 3 s and 6 s later, rounds $r1 -> $r2"
