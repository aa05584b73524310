#!/usr/bin/env bash
# A build host: `g++ -O2 -c` of a real C++ source in two loops under a system-wide kiln
# record. The driver g++ forks and execs cc1plus (then as) and only waits: at most a few
# percent of the compiler's samples may carry its name (a sample of cc1plus applied
# before cc1plus's exec was shown as g++, unwound against g++'s address space), and
# >= 95% of cc1plus's samples must reach its root (_start; or kernel-only, as in exit).
. "$(dirname "$0")/../lib.sh"
need_root
command -v g++ >/dev/null || skip "no g++"
src=$ROOT/tests/workloads/exec_compile.cc
"$KILN" record -o "$T/out" -d 16 -f 99 --no-flamegraph >"$T/record.log" 2>&1 &
kiln=$!
reap $kiln
sleep 1
# two loops, as `make -j2` runs them, so that the compilers move between CPUs
loop() {
	local end=$((SECONDS + 12)) n=0
	while [ $SECONDS -lt $end ]; do
		g++ -O2 -c "$src" -o "$T/exec_compile.$1.o" || return 1
		n=$((n + 1))
	done
	echo "$n" >"$T/compiles.$1"
}
loop 1 &
l1=$!
loop 2 || fail "g++ failed on $src"
wait $l1 || fail "g++ failed on $src"
compiles=$(($(cat "$T/compiles.1") + $(cat "$T/compiles.2")))
wait $kiln || fail "kiln record failed: $(cat "$T/record.log")"
col=$T/out/last_profile.col
# per process name of the compiler: samples, and samples whose stack starts at _start or
# holds only kernel frames
read -r drv cc1 cc1_root as < <(awk '
	/^#/ { next }
	{
		c = $NF; st = substr($0, 1, length($0) - length($NF) - 1); n = split(st, f, ";")
		user = 0
		for (i = 4; i <= n; i++)
			if (f[i] !~ /_\[k\]$/) user++
		if (f[3] == "g++") drv += c
		else if (f[3] == "cc1plus") { cc1 += c; if (f[4] == "_start" || !user) root += c }
		else if (f[3] == "as") as += c
	}
	END { printf "%d %d %d %d\n", drv, cc1, root, as }' "$col")
total=$((drv + cc1 + as))
echo "$compiles compiles: g++ $drv, cc1plus $cc1 ($cc1_root reach _start), as $as samples"
[ "$cc1" -ge 100 ] || fail "only $cc1 samples of cc1plus"
awk -v d="$drv" -v t="$total" 'BEGIN { exit !(d <= 0.05 * t) }' ||
	fail "$drv of the compiler's $total samples are named g++"
awk -v r="$cc1_root" -v t="$cc1" 'BEGIN { exit !(r >= 0.95 * t) }' ||
	fail "$cc1_root of $cc1 cc1plus samples reach _start"
pass "g++ $drv of $total, cc1plus $cc1_root of $cc1 complete"
