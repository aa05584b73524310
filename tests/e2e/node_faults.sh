#!/usr/bin/env bash
# Robustness: node processes that change while kiln reads them, recorded system-wide:
# short-lived nodes started one after another (they exit while being read), a node that
# forks children (child_process.fork) all along, and one that runs full, compacting GCs
# all the time (objects and code move while being read). kiln must not fail, and write
# no wrong frame: every _[js] frame of their samples is one of node_faults.js's
# functions at a line inside it, or one of node's or V8's own (node: files, v8/gc);
# [truncated] at most.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
need_root
node_pick
SHORT=$(node_as nodeshort) FORK=$(node_as nodefork) GC=$(node_as nodegc)
comms=nodeshort,nodefork,nodegc
# from Node 24 on the main thread's name is MainThread, whatever the process's
[ "$("$NODE" -p 'process.versions.node.split(".")[0]')" -ge 24 ] && comms+=,MainThread
"$KILN" record -o "$T/out" -d 20 -f 199 --no-flamegraph >"$T/record.log" 2>&1 & kpid=$!
reap $kpid
sleep 1.5
"$FORK" "$W/node_faults.js" fork 17 >/dev/null 2>&1 & fpid=$!
reap $fpid
"$GC" --expose-gc --stress-compaction "$W/node_faults.js" gc 17 >/dev/null 2>&1 & gpid=$!
reap $gpid
end=$((SECONDS + 17)) runs=0
while [ $SECONDS -lt $end ]; do
	"$SHORT" "$W/node_faults.js" short 200 >/dev/null 2>&1
	runs=$((runs + 1))
done
wait $fpid $gpid
timeout 90 tail --pid=$kpid -f /dev/null
wait $kpid || fail "kiln record failed: $(tail -n 5 "$T/record.log")"
grep -q "Profiling skipped: unsupported node" "$COL" &&
	fail "kiln refused a node whose V8 it reads: $(grep -o 'unsupported node[^]]*' "$COL" | head -n 1)"
# how much of each kiln saw, and read JavaScript frames in (a loaded host runs them little)
for c in nodeshort nodefork nodegc; do
	echo "$c: $(awk -v c="$c" -F';' '$3 == c { n = $NF; sub(/.* /, "", n); s += n }
		END { print s + 0 }' "$COL") samples, $(awk -v c="$c" -F';' '$3 == c && /_\[js\]/ {
		n = $NF; sub(/.* /, "", n); s += n } END { print s + 0 }' "$COL") with _[js] frames"
done
# at least 10 samples with their functions: on a host at load 20 they get few (12 of
# 6508 system-wide in one run), and what is checked is that none is wrong
python3 "$W/nodecheck.py" faults "$COL" "$W/node_faults.js" "$comms" 10 ||
	fail "wrong JavaScript frames"
pass "$runs short-lived nodes, a forking one, a GC-bound one: no wrong frame"
