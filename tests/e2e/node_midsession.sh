#!/usr/bin/env bash
# A node started while kiln records is picked up: its JavaScript frames are read, the
# shares of node_ratio.js (phases of 350/150 ms) right.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
NODE=$(command -v node || command -v nodejs) || skip "no node"
# kiln has the layout of V8 11.3 (Node 20) only; another node gets a skip marker
"$NODE" -e 'process.exit(process.versions.v8.startsWith("11.3.") ? 0 : 1)' ||
	skip "kiln reads V8 11.3 (Node 20) only; this node is $("$NODE" --version), V8 $("$NODE" -p process.versions.v8)"
"$KILN" record -o "$T/out" -d 8 -f 499 --no-flamegraph >"$T/record.log" 2>&1 & kpid=$!
reap $kpid
sleep 1.5
# a name of its own (the comm of its samples), apart from other nodes on the host
ln -s "$(readlink -f "$NODE")" "$T/nodemid"
"$T/nodemid" "$W/node_ratio.js" 4 50 >/dev/null & pid=$!	# ends, at a phase boundary, before kiln
reap $pid
timeout 30 tail --pid=$kpid -f /dev/null
wait $kpid || fail "kiln record failed: $(cat "$T/record.log")"
if grep -q "nodemid;\[Profiling skipped: unsupported node" "$COL"; then
	skip "$("$NODE" --version): $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
fi
# its whole life is recorded: start-up (before any JavaScript runs) and the compiler
# threads (same comm) weigh more on a loaded host, hence 0.6 for the _[js] share
python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" nodemid 0.6 || fail "wrong frames or shares"
pass
