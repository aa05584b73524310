#!/usr/bin/env bash
# A JVM that starts while the session runs is found and attached to; without the
# thread-names option no thread frame appears.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
# system-wide, as kiln record is: other JVMs on the host are profiled too
probe --hz 199 --seconds 9 > "$T/probe" 2> "$T/probe.err" &
ppid=$!
reap "$ppid"
sleep 1
"$JDK17/bin/java" -cp "$T/classes" JavaRatio 5 > "$T/out" 2> "$T/err" &
pid=$!
reap "$pid"
wait "$pid"
rc=$?
wait "$ppid" || fail "java_probe failed: $(cat "$T/probe.err")"
[ "$rc" -eq 7 ] || fail "JVM exit code $rc, expected 7"
grep "^jvm $pid " "$T/probe" || fail "the JVM started mid-session was not profiled: $(cat "$T/probe" "$T/probe.err")"
grep -q "^$pid;java.lang.Thread.run_\[.\];JavaRatio\$Work.run_\[.\];JavaRatio\$Chain.outer" "$T/probe" ||
	fail "no Java stacks for the JVM: $(grep "^$pid;" "$T/probe" | head -3)"
grep -q "^$pid;\[[^]]* tid=[0-9]*\];" "$T/probe" && fail "thread frames without --threads: $(grep "^$pid;\[" "$T/probe" | head -3)"
pass
