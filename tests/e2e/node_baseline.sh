#!/usr/bin/env bash
# Sparkplug (baseline) frames, whose bytecode offset V8 does not keep in the frame: the
# known-answer workload with V8's optimizing tiers off (--max-opt=1, or --no-opt where
# V8 has no such flag), so its hot frames run baseline code or a builtin that code calls
# without a frame (Builtins_*_Baseline). Under every node the tests have: >= 95% of the
# main thread's samples carry _[js] frames, alpha's share within 3 sigma of 70%, the
# chain named and no wrong line. Where the binary carries V8's table of bytecode sizes
# (kBytecodeSizes, in .symtab) the lines are right too (at most 3% unknown); where it
# does not (Debian's stripped libnode) they may be unknown, never wrong.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
one() {
	local name=$1 pid flag=--max-opt=1 noline=0.03 sizes=true
	"$NODE" --v8-options | grep -q -- '^ *--max-opt ' || flag=--no-opt
	nm "$(node_real "$NODE")" 2>/dev/null | grep -q 'Bytecodes14kBytecodeSizesE' || sizes=false
	$sizes || { noline=1; echo "$name: no bytecode sizes in $(node_real "$NODE"): lines may be unknown"; }
	# phases of 210 and 90 ms, the clock read every 5 calls: baseline code is slower
	"$NODE" $flag "$W/node_ratio.js" 30 30 5 >/dev/null & pid=$!
	reap $pid
	sleep 1.5
	rm -rf "$T/out"
	record -d 6 -f 499 --no-flamegraph --pids "$pid" >/dev/null
	kill $pid 2>/dev/null
	python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" node,MainThread 0.95 $noline ||
		return 1
	$sizes || return 0
	# the frames ran baseline code: its builtins are named where the binary names them
	local base all
	base=$(grep -v '^#' "$COL" | grep '_Baseline' | awk '{ s += $NF } END { print s + 0 }')
	all=$(grep -v '^#' "$COL" | grep 'alpha (\|beta (' | awk '{ s += $NF } END { print s + 0 }')
	echo "$name: $base of $all samples of alpha or beta in a *_Baseline builtin"
	[ "$base" -gt 0 ] || { echo "no baseline builtin seen: is $flag still Sparkplug only?"; return 1; }
}
node_each one
