#!/usr/bin/env bash
# JavaScript calling native code: compress() spends its time in zlib.deflateSync, whose
# native frames (node's zlib binding, zlib's deflate) follow the JavaScript caller.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
NODE=$(command -v node || command -v nodejs) || skip "no node"
# kiln has the layout of V8 11.3 (Node 20) only; another node gets a skip marker
"$NODE" -e 'process.exit(process.versions.v8.startsWith("11.3.") ? 0 : 1)' ||
	skip "kiln reads V8 11.3 (Node 20) only; this node is $("$NODE" --version), V8 $("$NODE" -p process.versions.v8)"
"$NODE" "$W/node_zlib.js" 60 >/dev/null & pid=$!
reap $pid
sleep 1
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
if grep -q "Profiling skipped: unsupported node" "$COL"; then
	skip "$("$NODE" --version): $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
python3 "$W/nodecheck.py" native "$COL" compress 'deflate' 0.8 ||
	fail "no native zlib frames above the JavaScript caller"
pass
