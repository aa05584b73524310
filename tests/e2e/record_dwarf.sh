#!/usr/bin/env bash
# A program built -O2 -fomit-frame-pointer, 30 recursive frames under main: in dwarf and
# smart mode >= 99% of its samples reach main and the leaf shares are within 2 points
# (a 3-sigma bound over the samples taken); the stack copy size is an option.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
if [ ! -x "$WB/deep" ] || [ "$W/deep.c" -nt "$WB/deep" ]; then
	cc -O2 -g -fomit-frame-pointer -o "$WB/deep" "$W/deep.c" || fail "failed to build deep"
fi
for mode in dwarf smart; do
	# Started before and killed after the session, so that no sample is of its start or
	# exit (code outside main).
	"$WB/deep" 600 & pid=$!
	reap $pid
	sleep 0.3
	record -d 5 -f 299 --perf-mode $mode --perf-dwarf-stack-size 16384 --no-flamegraph
	kill $pid
	grep -q "perf mode $mode" "$T/record.log" || skip "no CFI unwinder in this build"
	colcheck frac "$COL" deep '^main$' 0.99 || fail "$mode: samples do not reach main"
	colcheck frac "$COL" deep '^recurse$' 0.99 || fail "$mode: recursion lost"
	colcheck shares "$COL" deep alpha=50 beta=30 gamma_=20 || fail "$mode: shares are off"
	mv "$COL" "$T/$mode.col"
done
pass
