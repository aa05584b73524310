#!/usr/bin/env bash
# The known-answer Ruby workload (alpha/beta 70/30 through <main> -> dispatch) under
# Debian's ruby: >= 95% of its samples carry _[rb] frames merged after rb_vm_exec,
# alpha's share is within 3 points of 70% (and of 3 sigma), and files and lines are
# right; the same with --perf-mode fp, where the frames may sit under the process name.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --ruby-mode || skip "kiln record has no --ruby-mode"
[ -x /usr/bin/ruby ] || skip "no /usr/bin/ruby"
echo "== $(/usr/bin/ruby -v)"
/usr/bin/ruby "$W/ruby_ratio.rb" 30 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 5 -f 997 --no-flamegraph --pids "$pid" >/dev/null
python3 "$W/rbcheck.py" ratio "$COL" "$W/ruby_ratio.rb" --merged || {
	grep -v '^#' "$COL" | sort -t' ' -k2 -nr | head -3 | cut -c1-300
	fail "wrong Ruby stacks"
}
rm -rf "$T/out"
record -d 3 -f 997 --no-flamegraph --perf-mode fp --pids "$pid" >/dev/null
echo "== --perf-mode fp"
python3 "$W/rbcheck.py" ratio "$COL" "$W/ruby_ratio.rb" || {
	grep -v '^#' "$COL" | head -3 | cut -c1-300
	fail "fp mode lost the Ruby frames"
}
kill $pid 2>/dev/null
pass
