#!/usr/bin/env bash
# Ruby frames merged into the native stack: a call into a C extension
# (Zlib::Deflate.deflate) shows zlib's native frames above the Ruby method that called
# it and its named C function frame; a multi-threaded program shows each thread's own
# Ruby stack.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --ruby-mode || skip "kiln record has no --ruby-mode"
[ -x /usr/bin/ruby ] || skip "no /usr/bin/ruby"
/usr/bin/ruby "$W/ruby_zlib.rb" 8 >/dev/null & pid=$!
reap $pid
sleep 1
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
kill $pid
python3 "$W/rbcheck.py" native "$COL" squash '^deflate|libz' 0.8 ||
	fail "zlib's frames are missing above squash"
line=$(grep -n 'LINE:squash' "$W/ruby_zlib.rb" | cut -d: -f1)
grep -q "squash ($W/ruby_zlib.rb:$line)_\[rb\];deflate (cfunc)_\[rb\];" "$COL" ||
	fail "no 'squash (ruby_zlib.rb:$line)_[rb];deflate (cfunc)_[rb]' frames"
/usr/bin/ruby "$W/ruby_threads.rb" 8 >/dev/null & pid=$!
reap $pid
sleep 0.5
rm -rf "$T/out"
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
python3 "$W/rbcheck.py" threads "$COL" || fail "threads' stacks are mixed or missing"
pass
