#!/usr/bin/env bash
# smart mode on a C program built with frame pointers whose hot leaf keeps no frame
# (-momit-leaf-frame-pointer): the leaf is stepped by CFI, so its caller (alpha or beta,
# called 7:3) is present in >= 99% of the leaf's samples with its share within 3 sigma.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
cc -O2 -fno-omit-frame-pointer -momit-leaf-frame-pointer -fno-optimize-sibling-calls \
	-o "$T/fpleaf" "$W/fpleaf.c" || fail "failed to build the workload"
"$T/fpleaf" 60 &
pid=$!
reap "$pid"
sleep 0.2
record -q -d 4 -f 499 --perf-mode smart --pids "$pid" --no-flamegraph >/dev/null
sed -E 's/\.(constprop|isra|part)\.[0-9]+//g' "$COL" >"$T/p.col"
grep -E ';churn( |;)' "$T/p.col" >"$T/churn.col" || fail "no samples in churn"
colcheck frac "$T/churn.col" fpleaf '^(alpha|beta)$' 0.99 || fail "churn without its caller"
colcheck shares "$T/p.col" fpleaf alpha=70 beta=30 || fail "the callers' shares are wrong"
colcheck frac "$T/p.col" fpleaf '^main$' 0.99 || fail "stacks that do not reach main"
pass
