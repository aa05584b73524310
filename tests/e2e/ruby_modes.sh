#!/usr/bin/env bash
# --ruby-mode disabled and --no-ruby show no Ruby frames (and gProfiler's rbspy is
# accepted as our reader); a Ruby process started in the middle of a session is picked
# up, and so is one started while kiln records every process.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --ruby-mode || skip "kiln record has no --ruby-mode"
rb=/usr/bin/ruby
[ -x $rb ] || skip "no /usr/bin/ruby"

"$rb" "$W/ruby_ratio.rb" 12 >/dev/null & pid=$!
reap $pid
sleep 0.5
for opt in "--ruby-mode disabled" "--no-ruby"; do
	rm -rf "$T/out"
	# shellcheck disable=SC2086
	record -d 2 -f 199 --no-flamegraph $opt --pids "$pid" >/dev/null
	echo "== $opt"
	python3 "$W/rbcheck.py" none "$COL" || fail "Ruby frames with $opt"
done
rm -rf "$T/out"
record -d 2 -f 199 --no-flamegraph --ruby-mode rbspy --pids "$pid" >/dev/null
echo "== --ruby-mode rbspy"
python3 "$W/rbcheck.py" frac "$COL" 0.95 || fail "--ruby-mode rbspy lost the Ruby frames"
kill $pid 2>/dev/null

# a parent that starts ruby 1.5 s into the session: --pids follows its children
bash -c "sleep 1.5; exec $rb '$W/ruby_ratio.rb' 3 >/dev/null" & parent=$!
reap $parent
rm -rf "$T/out"
record -d 4 -f 499 --no-flamegraph --pids "$parent" >/dev/null
echo "== started mid-session (--pids)"
python3 "$W/rbcheck.py" frac "$COL" 0.95 || fail "the process started mid-session lacks Ruby frames"
grep -q '^[^#].*;alpha (.*ruby_ratio.rb:[0-9]*)_\[rb\]' "$COL" || fail "no alpha frames"

# the whole system, ruby started 1.5 s in
bash -c "sleep 1.5; exec $rb '$W/ruby_ratio.rb' 3 >/dev/null" & parent=$!
reap $parent
rm -rf "$T/out"
record -d 4 -f 199 --no-flamegraph >/dev/null
echo "== started mid-session (system-wide)"
python3 "$W/rbcheck.py" frac "$COL" 0.95 || fail "the process started mid-session lacks Ruby frames"
grep -q '^[^#].*;alpha (.*ruby_ratio.rb:[0-9]*)_\[rb\]' "$COL" || fail "no alpha frames"
pass
