#!/usr/bin/env bash
# Continuous sessions: files per session, last_* symlinks, --rotating-output, and a
# SIGTERM/SIGINT that still writes the session in progress; the header's JSON parses.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"

"$KILN" record -o "$T/rot" -c -d 1 -f 49 --rotating-output >"$T/rot.log" 2>&1 &
kiln=$!
reap $kiln
sleep 3.5
kill -TERM $kiln
wait $kiln || fail "kiln exited with $? after SIGTERM: $(cat "$T/rot.log")"
[ "$(ls "$T/rot"/profile_*.col | wc -l)" -eq 1 ] || fail "rotation kept: $(ls "$T/rot")"
[ "$(ls "$T/rot"/profile_*.html | wc -l)" -eq 1 ] || fail "rotation kept: $(ls "$T/rot")"
for l in last_profile.col last_flamegraph.html; do
	[ -L "$T/rot/$l" ] || fail "$l is not a symlink"
	[ -s "$T/rot/$l" ] || fail "$l points at nothing"
done
[ "$(readlink "$T/rot/last_profile.col")" = "$(basename "$(ls "$T/rot"/profile_*.col)")" ] ||
	fail "last_profile.col is not the newest"
ls -a "$T/rot" | grep -q '\.tmp$' && fail "temporary files left: $(ls -a "$T/rot")"
grep -c 'wrote' "$T/rot.log" | grep -qE '^[34]$' || fail "expected 3-4 sessions: $(cat "$T/rot.log")"
colcheck header "$T/rot/last_profile.col" || fail "header JSON"

"$KILN" record -o "$T/keep" -c -d 1 -f 49 --no-flamegraph >"$T/keep.log" 2>&1 &
kiln=$!
reap $kiln
sleep 2.5
kill -INT $kiln
wait $kiln || fail "kiln exited with $? after SIGINT"
n=$(ls "$T/keep"/profile_*.col | wc -l)
[ "$n" -eq 3 ] || fail "expected 2 sessions and the interrupted one, got $n"
ls "$T/keep"/*.html 2>/dev/null && fail "--no-flamegraph wrote html"
[ -e "$T/keep/last_flamegraph.html" ] && fail "--no-flamegraph made a flamegraph link"
for f in "$T/keep"/profile_*.col; do colcheck header "$f" >/dev/null || fail "header of $f"; done
pass
