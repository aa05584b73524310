#!/usr/bin/env bash
# --perf-mode fp still shows the Python frames (under the process name when the fp walk
# cannot reach the interpreter's frame); --python-mode disabled shows none; a Python
# process started in the middle of a session is picked up.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --python-mode || skip "kiln record has no --python-mode"
py=/usr/bin/python3
[ -x $py ] || skip "no /usr/bin/python3"

"$py" "$W/python_ratio.py" 12 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 4 -f 997 --no-flamegraph --perf-mode fp --pids "$pid" >/dev/null
echo "== --perf-mode fp"
python3 "$W/pycheck.py" ratio "$COL" "$W/python_ratio.py" || fail "fp mode lost the Python frames"

rm -rf "$T/out"
record -d 2 -f 199 --no-flamegraph --python-mode disabled --pids "$pid" >/dev/null
echo "== --python-mode disabled"
python3 "$W/pycheck.py" none "$COL" || fail "Python frames with --python-mode disabled"
kill $pid 2>/dev/null

# a parent that starts Python 1.5 s into the session: --pids follows its children
bash -c "sleep 1.5; $py '$W/python_ratio.py' 3 >/dev/null" & parent=$!
reap $parent
rm -rf "$T/out"
record -d 4 -f 499 --no-flamegraph --pids "$parent" >/dev/null
echo "== started mid-session"
python3 "$W/pycheck.py" frac "$COL" 0.95 || fail "the process started mid-session lacks Python frames"
grep -q '^[^#].*;alpha (.*python_ratio.py:[0-9]*)_\[p\]' "$COL" || fail "no alpha frames"
pass
