#!/usr/bin/env bash
# --nodejs-mode: none reads no JavaScript frames; perf (gProfiler's) names the JIT's code
# from the perf map of a node started with --perf-basic-prof, and reads none either.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node
# in $T: --perf-basic-prof also writes an isolate-*-v8.log into the current directory
(cd "$T" && exec "$NODE" --perf-basic-prof "$W/node_ratio.js" 60 >/dev/null) & pid=$!
reap $pid
trap 'rm -f "/tmp/perf-$pid.map"; cleanup' EXIT
sleep 1
record -d 2 -f 199 --no-flamegraph --nodejs-mode none --pids "$pid" >/dev/null
python3 "$W/nodecheck.py" none "$COL" || fail "JavaScript frames read with --nodejs-mode none"
record -d 2 -f 199 --no-flamegraph --nodejs-mode perf --pids "$pid" >/dev/null
python3 "$W/nodecheck.py" none "$COL" || fail "JavaScript frames read with --nodejs-mode perf"
n=$(grep -cE ";(JS|LazyCompile):[~^+*']*phase " "$COL")	# V8 10.2 wrote LazyCompile:, 13.6 JS:*'phase
[ "$n" -gt 0 ] || fail "no perf-map names (JS:*phase) with --nodejs-mode perf"
pass "perf-map names in $n stacks"
