#!/usr/bin/env bash
# kiln record with Java: the JVM's Java threads appear with their Java stacks (names,
# _[j]/_[i]/_[0], the thread name with --java-collect-thread-names) in the one .col, in
# place of their perf stacks; --no-java leaves the JVM untouched.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup

"$JDK17/bin/java" -cp "$T/classes" JavaRatio 16 > "$T/out" 2> "$T/err" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
"$KILN" record -f 99 -d 12 -o "$T/rec" --java-collect-thread-names --pids "$pid" \
	> "$T/rec.log" 2>&1 || fail "kiln record failed: $(cat "$T/rec.log")"
col=$T/rec/last_profile.col
head -1 "$col" | grep -q '"jvms_profiled":1' || fail "no JVM profiled: $(head -c 300 "$col")"
grep -q '^0;;java;\[kiln-busy-worker tid=[0-9]*\];java.lang.Thread.run_\[.\];JavaRatio\$Work.run_\[.\];' "$col" ||
	fail "no Java stacks in the .col: $(grep -v '^#' "$col" | head -3)"
awk -F';' '
	/^#/ { next }
	/\[kiln-busy-worker tid=/ {
		n = $NF; sub(/.* /, "", n); busy += n
		leaf = $NF; sub(/ [0-9]+$/, "", leaf)
		if (leaf ~ /^[A-Za-z_$][A-Za-z0-9_$.]*_\[[ji0]\]$/) named += n
		if ($0 ~ /Chain\.alpha/) a += n; else if ($0 ~ /Chain\.beta/) b += n
	}
	END {
		if (!busy || !(a + b)) { print "no busy-thread samples"; exit 1 }
		share = a / (a + b); tol = 3 * sqrt(0.75 * 0.25 / (a + b))
		printf "busy samples %d, Java names %.1f%%, alpha %.2f%% (75%% +- %.2f)\n", busy, 100 * named / busy, 100 * share, 100 * tol
		exit !(named >= 0.95 * busy && share > 0.75 - tol && share < 0.75 + tol)
	}' "$col" || fail "known answer not met in the .col"
wait "$pid"
[ $? -eq 7 ] || fail "JVM exit code changed"

# --no-java: no attach at all
"$JDK17/bin/java" -cp "$T/classes" JavaRatio 5 > "$T/out2" 2> "$T/err2" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
"$KILN" record -f 99 -d 2 -o "$T/rec2" --no-java --pids "$pid" > "$T/rec2.log" 2>&1 ||
	fail "kiln record --no-java failed: $(cat "$T/rec2.log")"
grep -q libkiln-jvm "/proc/$pid/maps" && fail "--no-java loaded the agent"
[ -e "/tmp/.java_pid$pid" ] && fail "--no-java started the JVM's attach listener"
grep -q '_\[j\]' "$T/rec2/last_profile.col" && fail "Java frames with --no-java"
head -1 "$T/rec2/last_profile.col" | grep -q '"jvms_profiled"' &&
	fail "--no-java ran the Java session"
wait "$pid"

# a JVM that refuses attach keeps its native stacks behind the reason
"$JDK17/bin/java" -XX:+DisableAttachMechanism -cp "$T/classes" JavaRatio 4 > /dev/null 2>&1 &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "JVM did not start"
"$KILN" record -f 99 -d 2 -o "$T/rec3" --pids "$pid" > "$T/rec3.log" 2>&1 ||
	fail "kiln record failed: $(cat "$T/rec3.log")"
grep -q '^0;;java;\[Profiling skipped: JVM runs with -XX:+DisableAttachMechanism\];' \
	"$T/rec3/last_profile.col" || fail "no skip frame: $(grep -v '^#' "$T/rec3/last_profile.col" | head -3)"
wait "$pid"
pass
