#!/usr/bin/env bash
# A process that maps a libruby of a version the reader has no layout for (a stand-in
# library exporting ruby_version "9.9.0") is never given Ruby frames: its stacks start
# with '[Profiling skipped: unsupported ruby 9.9.0]' after the process name.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --ruby-mode || skip "kiln record has no --ruby-mode"
cc -O1 -shared -fPIC -DFAKE_LIB -o "$WB/libruby-fake.so" "$W/ruby_fake.c" ||
	fail "failed to build libruby-fake.so"
build_c ruby_fake -ldl
"$WB/ruby_fake" "$WB/libruby-fake.so" 8 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 2 -f 199 --no-flamegraph --pids "$pid" >/dev/null
kill $pid 2>/dev/null
total=$(grep -v '^#' "$COL" | awk '{n += $NF} END {print n + 0}')
marked=$(grep -v '^#' "$COL" | grep -F ';ruby_fake;[Profiling skipped: unsupported ruby 9.9.0];' |
	awk '{n += $NF} END {print n + 0}')
echo "$marked of $total samples carry the marker"
[ "$total" -gt 0 ] || fail "no samples"
[ "$marked" -eq "$total" ] || fail "samples without '[Profiling skipped: unsupported ruby 9.9.0]'"
grep -q '_\[rb\]' "$COL" && fail "Ruby frames in a process the reader cannot read"
pass
