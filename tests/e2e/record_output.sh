#!/usr/bin/env bash
# Continuous sessions: one file per session, last_* symlinks, --rotating-output keeping
# only the newest; SIGINT/SIGTERM still write the session in progress; the header's JSON
# parses.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"

# Keep a CPU busy, so that a session of an otherwise idle machine still has samples.
( while :; do :; done ) &
reap $!

"$KILN" record -o "$T/rot" -c -d 1 -f 49 --rotating-output >"$T/rot.log" 2>&1 &
kiln=$!
reap $kiln
for _ in $(seq 100); do [ "$(grep -c wrote "$T/rot.log")" -ge 3 ] && break; sleep 0.1; done
kill -TERM $kiln
wait $kiln || fail "kiln exited with $? after SIGTERM: $(cat "$T/rot.log")"
cat "$T/rot.log"
[ "$(grep -c wrote "$T/rot.log")" -ge 3 ] || fail "fewer than 3 sessions"
[ "$(ls "$T/rot"/profile_*.col | wc -l)" -eq 1 ] || fail "rotation kept: $(ls "$T/rot")"
[ "$(ls "$T/rot"/profile_*.html | wc -l)" -eq 1 ] || fail "rotation kept: $(ls "$T/rot")"
for l in last_profile.col last_flamegraph.html; do
	[ -L "$T/rot/$l" ] || fail "$l is not a symlink"
	[ -s "$T/rot/$l" ] || fail "$l points at nothing"
done
[ "$(readlink "$T/rot/last_profile.col")" = "$(basename "$(ls "$T/rot"/profile_*.col)")" ] ||
	fail "last_profile.col is not the newest"
ls -a "$T/rot" | grep -q '\.tmp$' && fail "temporary files left: $(ls -a "$T/rot")"
grep -q '<canvas\|<script' "$T/rot/last_flamegraph.html" || fail "the flamegraph has no renderer"
colcheck header "$T/rot/last_profile.col" || fail "header JSON"

# Without rotation every session stays; --no-flamegraph writes no html and no html link.
"$KILN" record -o "$T/keep" -c -d 1 -f 49 --no-flamegraph >"$T/keep.log" 2>&1 &
kiln=$!
reap $kiln
for _ in $(seq 100); do [ "$(grep -c wrote "$T/keep.log")" -ge 2 ] && break; sleep 0.1; done
kill -INT $kiln
wait $kiln || fail "kiln exited with $? after SIGINT"
n=$(ls "$T/keep"/profile_*.col | wc -l)
[ "$n" -ge 2 ] || fail "expected every session kept, got $n"
ls "$T/keep"/*.html 2>/dev/null && fail "--no-flamegraph wrote html"
[ -e "$T/keep/last_flamegraph.html" ] && fail "--no-flamegraph made a flamegraph link"
for f in "$T/keep"/profile_*.col; do colcheck header "$f" >/dev/null || fail "header of $f"; done

# A long one-shot session interrupted after 2 s is written, with its samples.
"$KILN" record -o "$T/int" -d 600 -f 49 --no-flamegraph >"$T/int.log" 2>&1 &
kiln=$!
reap $kiln
sleep 2
kill -INT $kiln
wait $kiln || fail "kiln exited with $? after SIGINT"
[ "$(ls "$T/int"/profile_*.col | wc -l)" -eq 1 ] || fail "the interrupted session was not written"
python3 -c 'import json, sys; h = json.loads(open(sys.argv[1]).readline()[2:]); sys.exit(h["samples"] < 10)' \
	"$T/int/last_profile.col" || fail "the interrupted session has no samples"
pass
