#!/usr/bin/env bash
# Python frames merged into the native stack: a call into a C extension (zlib.compress)
# shows zlib's native frames above the Python frame that called it; a multi-threaded
# program shows each thread's own Python stack.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --python-mode || skip "kiln record has no --python-mode"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
/usr/bin/python3 "$W/python_zlib.py" 8 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
kill $pid
python3 "$W/pycheck.py" native "$COL" squash 'deflate|compress' 0.8 ||
	fail "zlib's frames are missing above squash"
/usr/bin/python3 "$W/python_threads.py" 8 >/dev/null & pid=$!
reap $pid
sleep 0.5
rm -rf "$T/out"
record -d 3 -f 499 --no-flamegraph --pids "$pid" >/dev/null
python3 "$W/pycheck.py" threads "$COL" || fail "threads' stacks are mixed or missing"
pass
