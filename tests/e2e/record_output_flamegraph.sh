#!/usr/bin/env bash
# The agent's own flamegraph shows what `kiln report` shows for its .col: the same page,
# the process names as the root frames (the agent keeps the container and the process as
# labels, the .col has them as gProfiler's prefix). Only the .col escapes ';' in names
# (as '|'), so the pages are compared with ';' read as '|'.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"

( while :; do :; done ) &
reap $!
"$KILN" record -o "$T/out" -d 1 -f 49 >"$T/rec.log" 2>&1 || fail "record failed: $(cat "$T/rec.log")"
col=$(ls "$T/out"/profile_*.col) html=$(ls "$T/out"/profile_*.html)
[ -f "$col" ] && [ -f "$html" ] || fail "no session files: $(ls "$T/out")"
title=$(python3 - "$col" <<'PY'
import json, sys
h = json.loads(open(sys.argv[1]).readline()[2:])
print("kiln: %s, %s" % (h["hostname"], h["end_time"]))
PY
)
"$KILN" report "$col" -o "$T/report.html" --title "$title" || fail "report failed"
python3 - "$html" "$T/report.html" <<'PY' || fail "the agent's flamegraph differs from report's"
import sys
a, b = (open(f).read().replace(";", "|") for f in sys.argv[1:3])
if a != b:
    i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y) if len(a) == len(b) else 0
    sys.exit("differ at %d: %r / %r" % (i, a[i - 80:i + 80], b[i - 80:i + 80]))
PY
# the busy shell is a root frame: the first field of its stacks after the prefix
grep -q '^0;[^;]*;bash;' "$col" || fail "no bash stacks in $(head -3 "$col")"
pass
