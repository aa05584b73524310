#!/usr/bin/env bash
# Profiling leaves the JVM's output and exit code as they were; attaching a second time
# (and loading a second copy of the library) is harmless and the agent a previous session
# stopped samples again for the next one; sampling stops with the session; a second kiln
# does not take a JVM from the one profiling it; a JVM that refuses attach is skipped with
# a reason and is not signalled.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
java=$JDK17/bin/java

"$java" -cp "$T/classes" JavaRatio 1 > "$T/out0" 2> "$T/err0"
rc0=$?

"$java" -cp "$T/classes" JavaRatio 9 > "$T/out1" 2> "$T/err1" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
probe --pid "$pid" --seconds 2 > "$T/p1" 2>&1 || fail "first session failed: $(cat "$T/p1")"
grep "^jvm $pid " "$T/p1" || fail "first session did not profile: $(cat "$T/p1" "$T/err1")"
# the session is over: the agent has disarmed every timer (no more SIGPROF)
grep -q 'signal: 27/' "/proc/$pid/timers" && fail "the agent still samples after the session"
# a second session with another copy of the library: the copy stays inert and the agent
# the first session stopped serves the second
cp "$JVM_LIB" "$T/copy-libkiln-jvm.so"
"$T/java_probe" --lib "$T/copy-libkiln-jvm.so" --pid "$pid" --seconds 2 > "$T/p2" 2>&1 ||
	fail "second session failed: $(cat "$T/p2")"
grep "^jvm $pid " "$T/p2" || fail "second session did not profile: $(cat "$T/p2")"
n=$(awk '/^jvm/{print $6}' "$T/p2")
[ "${n:-0}" -gt 0 ] || fail "no samples in the second session: $(cat "$T/p2")"
[ "$(grep -c 'libkiln-jvm.so' "/proc/$pid/maps" | head -1)" -ge 1 ] || fail "agent not mapped"
wait "$pid"
rc1=$?
[ "$rc1" -eq "$rc0" ] || fail "exit code $rc1 under profiling, $rc0 without"
cmp -s "$T/out0" "$T/out1" || fail "stdout changed: $(diff "$T/out0" "$T/out1")"
cmp -s "$T/err0" "$T/err1" || fail "stderr changed: $(diff "$T/err0" "$T/err1")"

# two kilns at once: the first owns the JVM, the second skips it and says why
"$java" -cp "$T/classes" JavaRatio 6 > /dev/null 2>&1 &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
probe --pid "$pid" --seconds 4 > "$T/pa" 2>&1 &
pa=$!
sleep 1.5
probe --pid "$pid" --seconds 1 > "$T/pb" 2>&1
wait "$pa"
grep -q "^skip $pid another kiln profiles this JVM" "$T/pb" || fail "second kiln: $(cat "$T/pb")"
n=$(awk '/^jvm/{print $6}' "$T/pa")
[ "${n:-0}" -gt 0 ] || fail "the owning kiln lost its samples: $(cat "$T/pa")"
wait "$pid"

# attach disabled: skipped with the reason, no SIGQUIT (which would print a thread dump)
"$java" -XX:+DisableAttachMechanism -cp "$T/classes" JavaRatio 4 > "$T/out2" 2> "$T/err2" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
probe --pid "$pid" --seconds 1 > "$T/p3" 2>&1
grep -q "^skip $pid JVM runs with -XX:+DisableAttachMechanism" "$T/p3" ||
	fail "no skip reason: $(cat "$T/p3")"
wait "$pid"
[ $? -eq "$rc0" ] || fail "exit code changed"
cmp -s "$T/out0" "$T/out2" || fail "stdout changed: $(diff "$T/out0" "$T/out2")"
pass
