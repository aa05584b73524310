#!/usr/bin/env bash
# A node started while kiln records is picked up: its JavaScript frames are read, the
# shares of node_ratio.js (phases of 350/150 ms) right.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node
"$KILN" record -o "$T/out" -d 8 -f 499 --no-flamegraph >"$T/record.log" 2>&1 & kpid=$!
reap $kpid
sleep 1.5
# a name of its own (the comm of its samples), apart from other nodes on the host
NODEMID=$(node_as nodemid)
"$NODEMID" "$W/node_ratio.js" 4 50 >/dev/null & pid=$!	# ends, at a phase boundary, before kiln
reap $pid
timeout 30 tail --pid=$kpid -f /dev/null
wait $kpid || fail "kiln record failed: $(cat "$T/record.log")"
if grep -q "nodemid;\[Profiling skipped: unsupported node" "$COL"; then
	fail "kiln refused a node whose V8 it reads: $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
# its whole life is recorded: start-up (before any JavaScript runs) and the compiler
# threads (same comm) weigh more on a loaded host, hence 0.6 for the _[js] share
python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" nodemid 0.6 || fail "wrong frames or shares"
pass
