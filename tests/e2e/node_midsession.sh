#!/usr/bin/env bash
# A node started while kiln records is picked up: its JavaScript frames are read, the
# shares of node_ratio.js (phases of 350/150 ms) right.
# e2e: sampled
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
# its whole life is recorded: its start-up (before any JavaScript runs) and its
# compiler and GC threads have its name too, so the share of _[js] frames is taken of
# the main thread's samples while node runs the script (--running: under
# node::LoadEnvironment), >= 95% as for a node that runs already; and from its start its
# interpreted functions have no source positions yet (V8 makes them lazily): their
# lines are unknown (14% of the samples in one run on Node 18), not checked here
# (node_ratio checks them)
# (from Node 24 on node names its main thread MainThread: the samples' comm)
python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" nodemid,MainThread 0.95 1.0 --running ||
	fail "wrong frames or shares"
pass
