#!/usr/bin/env bash
# --perf-mode dwarf and smart on a -O2 -fomit-frame-pointer C program whose leaves sit 30
# frames below main: >= 99% of the samples reach main, >= 99% of the leaves' samples hold
# exactly 30 rec frames, and the leaf shares (75% / 25% of the CPU by construction) are
# within max(2 points, 3 sigma of the sample count: 2 points at ~5,000 samples).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
need_root
"$KILN" record --help 2>&1 | grep -q -- '--perf-mode' || skip "kiln record has no --perf-mode yet"
cc -O2 -fomit-frame-pointer -o "$T/unwind_deep" "$ROOT/tests/workloads/unwind_deep.c" ||
	fail "failed to build the workload"
"$T/unwind_deep" 90 &
pid=$!
reap "$pid"
for mode in dwarf smart; do
	"$KILN" record --perf-mode "$mode" -f 997 -d 10 --pids "$pid" --no-flamegraph \
		-o "$T/$mode" >"$T/$mode.log" 2>&1 ||
		fail "kiln record --perf-mode $mode failed: $(tail -n 3 "$T/$mode.log")"
	col=$T/$mode/last_profile.col
	[ -s "$col" ] || fail "$mode: no profile in $T/$mode"
	read -r total complete three one < <(awk -v need=main -v a=leaf_three -v b=leaf_one \
		-f "$ROOT/tests/workloads/unwind_check.awk" "$col")
	echo "$mode: $total samples, $complete reach main, leaf_three $three, leaf_one $one"
	[ "$total" -ge 500 ] || fail "$mode: only $total samples"
	awk -v t="$total" -v c="$complete" 'BEGIN { exit !(c >= 0.99 * t) }' ||
		fail "$mode: $complete of $total samples reach main (< 99%)"
	awk -F';' '/^#/ { next } {
		n = split($NF, last, " "); c = last[n]; leaf = last[1]
		if (leaf != "leaf_three" && leaf != "leaf_one") next
		r = 0; for (i = 4; i < NF; i++) r += ($i == "rec")
		all += c; if (r == 30) deep += c }
		END { printf "%d of %d leaf samples hold 30 rec frames\n", deep, all
		      exit !(all > 0 && deep >= 0.99 * all) }' "$col" || fail "$mode: recursion depth wrong"
	awk -v x="$three" -v y="$one" 'BEGIN {
		n = x + y; p = 100 * x / n; tol = 300 * sqrt(0.75 * 0.25 / n); if (tol < 2) tol = 2
		printf "leaf_three share %.2f%%, truth 75%%, tolerance %.2f points\n", p, tol
		exit !(p >= 75 - tol && p <= 75 + tol) }' || fail "$mode: leaf shares off the truth"
done
pass
