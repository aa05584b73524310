#!/usr/bin/env bash
# Worker threads: each runs JavaScript in its own isolate; the main thread's samples show
# mainSpin, the workers' workerSpin, never both in one stack.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node
"$NODE" "$W/node_workers.js" 60 >/dev/null & pid=$!
reap $pid
sleep 1.5
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
if grep -q "Profiling skipped: unsupported node" "$COL"; then
	fail "kiln refused a node whose V8 it reads: $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
python3 "$W/nodecheck.py" threads "$COL" mainSpin workerSpin 50 || fail "wrong worker stacks"
pass
