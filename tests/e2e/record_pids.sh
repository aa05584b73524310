#!/usr/bin/env bash
# --pids keeps the given processes and the children they start during the session, and
# nothing else.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c ratio
cp "$WB/ratio" "$T/wanted"
cp "$WB/ratio" "$T/child"
cp "$WB/ratio" "$T/other"
"$T/wanted" 1 30 & wanted=$!
reap $wanted
"$T/other" 1 30 & reap $!
bash -c "sleep 1; exec $T/child 1 2" & parent=$!
reap $parent
record -d 4 -f 199 --perf-mode fp --no-flamegraph --pids "$wanted,$parent"
n=$(colcheck count "$COL" wanted)
c=$(colcheck count "$COL" child)
o=$(colcheck count "$COL" other)
echo "wanted $n, child $c, other $o"
[ "$n" -gt 50 ] || fail "the selected process has $n samples"
[ "$c" -gt 20 ] || fail "the selected process's child has $c samples"
[ "$o" -eq 0 ] || fail "an unselected process has $o samples"
awk 'NR > 1 { split($0, f, ";"); print f[3] }' "$COL" | sort -u | grep -vxE 'wanted|child|bash|sleep' &&
	fail "other processes in the profile"
pass
