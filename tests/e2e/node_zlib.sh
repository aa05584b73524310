#!/usr/bin/env bash
# JavaScript calling native code: compress() spends its time in zlib.deflateSync, whose
# native frames (node's zlib binding, zlib's deflate) follow the JavaScript caller.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node
"$NODE" "$W/node_zlib.js" 60 >/dev/null & pid=$!
reap $pid
sleep 1
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
if grep -q "Profiling skipped: unsupported node" "$COL"; then
	fail "kiln refused a node whose V8 it reads: $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
python3 "$W/nodecheck.py" native "$COL" compress 'deflate' 0.8 ||
	fail "no native zlib frames above the JavaScript caller"
pass
