#!/usr/bin/env bash
# A JVM is found by what it maps (libjvm.so), not by its name: a JVM embedded in a
# program of another name through JNI, running when kiln starts, and a javac compile
# started during the session both get Java frames. Prints the share of javac's samples
# that carry Java frames (the part of a short-lived JVM's life attaching leaves).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
cc -O2 -g -I"$JDK17/include" -I"$JDK17/include/linux" -o "$T/kiln-embed" \
	"$ROOT/tests/workloads/embed_jvm.c" -ldl || fail "cannot build embed_jvm"

# 1. embedded through JNI, already running: found by the start-up scan of the mappings
"$T/kiln-embed" "$JDK17/lib/server/libjvm.so" "$T/classes" JavaRatio 12 > "$T/out" 2> "$T/err" &
pid=$!
reap "$pid"
wait_jvm_ready "$pid" || fail "embedded JVM did not start: $(cat "$T/err")"
[ "$(cat "/proc/$pid/comm")" = kiln-embed ] || fail "unexpected comm $(cat "/proc/$pid/comm")"
"$KILN" record -f 99 -d 6 -o "$T/rec" --pids "$pid" > "$T/rec.log" 2>&1 ||
	fail "kiln record failed: $(cat "$T/rec.log")"
col=$T/rec/last_profile.col
head -1 "$col" | grep -q '"jvms_profiled":1' || fail "embedded JVM not profiled: $(head -c 300 "$col")"
grep -q '^0;[^;]*;kiln-embed;.*JavaRatio\$Work\.run_\[.\];JavaRatio\$Chain' "$col" ||
	fail "no Java stacks for the embedded JVM: $(grep -v '^#' "$col" | head -3)"
wait "$pid"
[ $? -eq 7 ] || fail "embedded JVM exit code changed"

# 2. javac (a launcher not named java) started mid-session: found by its libjvm.so mapping
mkdir -p "$T/gen" "$T/gen-out"
for i in $(seq 300); do
	j=$(( i > 1 ? i - 1 : 1 ))
	printf 'public class C%d { static int f(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * %d; return s + C%d.g(x); } static int g(int x) { return x ^ %d; } }\n' \
		"$i" "$i" "$j" "$i" > "$T/gen/C$i.java"
done
# the javac is this subshell after its exec: its pid is known before kiln starts, so that
# kiln touches no other JVM of the host
( while [ ! -e "$T/go" ]; do sleep 0.05; done
  exec "$JDK17/bin/javac" -d "$T/gen-out" "$T"/gen/*.java ) &
jpid=$!
reap "$jpid"
"$KILN" record -f 99 -d 60 -o "$T/rec2" --pids "$jpid" > "$T/rec2.log" 2>&1 &
kpid=$!
reap "$kpid"
for _ in $(seq 100); do grep -q "profiling the given processes" "$T/rec2.log" && break; sleep 0.1; done
grep -q "profiling the given processes" "$T/rec2.log" || fail "kiln record did not start: $(cat "$T/rec2.log")"
start=$(date +%s.%N)
touch "$T/go"
wait "$jpid" || fail "javac failed"
end=$(date +%s.%N)
kill -INT "$kpid"
wait "$kpid" || fail "kiln record failed: $(cat "$T/rec2.log")"
col=$T/rec2/last_profile.col
jvms=$(head -1 "$col" | sed -n 's/.*"jvms_profiled":\([0-9]*\).*/\1/p')
[ "${jvms:-0}" -ge 1 ] || fail "javac not profiled: $(head -c 300 "$col")"
awk -v secs="$(echo "$end - $start" | bc)" -F';' '
	/^#/ || $3 != "javac" { next }
	{ n = $NF; sub(/.* /, "", n); all += n }
	/_\[[ji0]\]/ { java += n }
	END {
		if (!all) { print "no javac samples"; exit 1 }
		printf "javac ran %.1f s: %d samples, %d (%.1f%%) with Java frames\n", secs, all, java, 100 * java / all
		exit !(java > 0)
	}' "$col" || fail "no Java frames for javac: $(grep ';javac;' "$col" | head -3)"
pass
