#!/usr/bin/env bash
# A process started in the middle of a session (fork + exec by the shell), and one that
# exits before the session ends, are both named and symbolized.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c ratio
cp "$WB/ratio" "$T/latecomer"
"$KILN" record -o "$T/out" -d 6 -f 199 --perf-mode fp --no-flamegraph >"$T/record.log" 2>&1 &
kiln=$!
reap $kiln
sleep 2
"$T/latecomer" 1 2	# runs 2 s, exits ~2 s before the session ends
wait $kiln || fail "kiln record failed: $(cat "$T/record.log")"
n=$(colcheck count "$COL" latecomer)
[ "$n" -ge 10 ] || fail "only $n samples of the latecomer"
colcheck frac "$COL" latecomer '^(alpha|beta|gamma_)$' 0.9 || fail "the latecomer is not symbolized"
pass "$n samples"
