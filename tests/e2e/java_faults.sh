#!/usr/bin/env bash
# The JVM agent's fault guard. (1) kiln's SIGSEGV handler sits in front of HotSpot's, which
# relies on SIGSEGV for implicit null checks: a JVM throwing NullPointerExceptions from
# compiled code while sampled keeps every one of them and exits 0. (2) A fault inside
# AsyncGetCallTrace (injected with KILN_JVM_FAULT_TEST) is caught: the JVM lives on, the
# faulted samples show as [AsyncGetCallTrace_fault], and sampling goes on.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
"$JDK17/bin/javac" -d "$T/classes" "$ROOT/tests/workloads/JavaNulls.java" || fail "javac failed"
java=$JDK17/bin/java

# 1. HotSpot's own faults pass through kiln's handler
"$java" -cp "$T/classes" JavaNulls 6 > "$T/out1" 2> "$T/err1" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
probe --pid "$pid" --seconds 3 > "$T/p1" 2>&1 || fail "probe failed: $(cat "$T/p1")"
grep -q "^jvm $pid .*samples [1-9]" "$T/p1" || fail "not profiled: $(head -3 "$T/p1")"
wait "$pid" || fail "the JVM died (rc $?) under profiling: $(tail -5 "$T/err1")"
cat "$T/out1"
grep -q 'ok true sum true' "$T/out1" || fail "NullPointerExceptions went astray: $(cat "$T/out1")"

# 2. a fault inside AsyncGetCallTrace is survived (JavaRatio's exit code is its own)
"$java" -cp "$T/classes" JavaRatio 1 > /dev/null 2>&1
rc0=$?
KILN_JVM_FAULT_TEST=5 "$java" -cp "$T/classes" JavaRatio 6 > "$T/out2" 2> "$T/err2" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
probe --pid "$pid" --seconds 3 > "$T/p2" 2>&1 || fail "probe failed: $(cat "$T/p2")"
kill -0 "$pid" 2>/dev/null || fail "the JVM died after an AsyncGetCallTrace fault: $(tail -5 "$T/err2")"
faulted=$(awk '/AsyncGetCallTrace_fault/ { n += $NF } END { print n + 0 }' "$T/p2")
java_samples=$(grep -v AsyncGetCallTrace_fault "$T/p2" | awk '/Chain\.(alpha|beta)/ { n += $NF } END { print n + 0 }')
echo "faulted samples $faulted, Java samples $java_samples"
[ "$faulted" -eq 5 ] || fail "expected 5 faulted samples: $(grep -c . "$T/p2") lines"
[ "$java_samples" -ge 50 ] || fail "sampling did not go on after the faults"
wait "$pid"
rc=$?
[ "$rc" -eq "$rc0" ] || fail "the JVM exited with $rc after the faults, $rc0 without them"
pass "NPEs intact; 5 injected faults caught, $java_samples samples after"
