#!/usr/bin/env bash
# JIT code in an anonymous executable mapping is named from /tmp/perf-<pid>.map, whose
# garbage lines are skipped.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c perfmap
"$WB/perfmap" 30 & pid=$!
reap $pid
sleep 0.3
record -d 3 -f 199 --perf-mode fp --no-flamegraph
kill $pid
rm -f "/tmp/perf-$pid.map"	# killed, it cannot remove its map
colcheck frac "$COL" perfmap '^jit_spin_loop$' 0.8 || fail "JIT frames are not named"
pass
