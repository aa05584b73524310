#!/usr/bin/env bash
# Known-answer Node.js workload started before kiln: alpha and beta share the CPU 70/30
# through main -> phase -> dispatch, TurboFan inlining them into phase; >= 95% of the
# main thread's samples carry _[js] frames after Builtins_JSEntry, both inlined
# functions are named with their files and lines, the shares within 3 sigma.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node
"$NODE" "$W/node_ratio.js" 60 >/dev/null & pid=$!
reap $pid
sleep 1	# past start-up: the hot functions are optimized
record -d 5 -f 499 --no-flamegraph --pids "$pid" >/dev/null
if grep -q "Profiling skipped: unsupported node" "$COL"; then
	fail "kiln refused a node whose V8 it reads: $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" || fail "wrong JavaScript frames or shares"
pass
