#!/usr/bin/env bash
# bench/java.sh [ROUNDS] — the cost of Java profiling on the known-answer workload.
#
# Runs tests/workloads/JavaRatio.java for a fixed amount of work (ROUNDS, default 1500)
# under JDK 17: without profiling, under kiln's Java profiling (the runtimes/java.c session
# through tests/tools/java_probe, attaching libkiln-jvm.so) at 11 and 99 Hz, and under
# `perf record -g` at 11 and 99 Hz. Prints, per run, the busy thread's wall and CPU time
# and their slowdown against the unprofiled run (CPU time is what the signal handler and
# the kernel's sampling add to the thread; wall time also moves with the machine's load),
# the agent's cost inside the JVM (its thread's CPU; the JVM's peak RSS against the
# unprofiled run) and outside it (kiln's side: CPU and peak RSS of the probe process;
# perf: CPU and peak RSS of perf record). Needs root (perf) and a built build/libkiln-jvm.so.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-1500}
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
T=$(mktemp -d /tmp/kiln-bench-java.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$JAVA" ] || { echo "JDK 17 not installed"; exit 2; }
[ -f "$ROOT/build/libkiln-jvm.so" ] || { echo "build/libkiln-jvm.so not built (make)"; exit 2; }
"${JAVA%java}javac" -d "$T" "$ROOT/tests/workloads/JavaRatio.java" || exit 1
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -I"$ROOT/src" -include "$ROOT/src/util/banned.h" -o "$T/probe" \
	"$ROOT/tests/tools/java_probe.c" "$ROOT/build/libkiln.a" \
	$(pkg-config --libs libelf libdw liblzma zlib jansson libcurl libmicrohttpd sqlite3 \
		libprotobuf-c libxxhash) -lpthread -lm || exit 1

wait_ready() {
	local i
	for i in $(seq 100); do
		[ -r "/proc/$1/status" ] && grep -q libjvm.so "/proc/$1/maps" 2>/dev/null &&
			[ $(( 0x$(awk '/^SigCgt/{print $2}' "/proc/$1/status") & 4 )) -ne 0 ] && return 0
		sleep 0.05
	done
	return 1
}

# run MODE HZ: prints "work_ms cpu_ms jvm_rss_kb agent_cpu_ms tool_cpu_ms tool_rss_kb samples"
run() {
	local mode=$1 hz=$2 pid tool=0 trss=0 acpu=0 samples=0
	/usr/bin/time -f "%M" -o "$T/jvm.time" "$JAVA" -cp "$T" JavaRatio "rounds=$ROUNDS" \
		> "$T/out" 2> "$T/err" &
	local tpid=$!
	pid=""
	for _ in $(seq 100); do pid=$(pgrep -P "$tpid" -x java) && break; sleep 0.05; done
	case $mode in
	kiln)
		wait_ready "$pid"
		"$T/probe" --lib "$ROOT/build/libkiln-jvm.so" --pid "$pid" --hz "$hz" \
			--seconds 600 --until-exit > "$T/probe.out" 2> "$T/probe.err"
		tool=$(awk '/^probe/{print $3}' "$T/probe.err")
		trss=$(awk '/^probe/{print $5}' "$T/probe.err")
		acpu=$(awk '/^jvm/{print int($10 / 1000)}' "$T/probe.out")
		samples=$(awk '/^jvm/{print $6}' "$T/probe.out")
		;;
	perf)
		wait_ready "$pid"
		/usr/bin/time -f "%U %S %M" -o "$T/perf.time" perf record -q -g -F "$hz" -p "$pid" \
			-o "$T/perf.data" > /dev/null 2>&1
		read -r u s trss < "$T/perf.time"
		tool=$(awk -v u="$u" -v s="$s" 'BEGIN{print int((u + s) * 1000)}')
		samples=$(perf script -i "$T/perf.data" -F tid 2>/dev/null | wc -l)
		;;
	esac
	wait "$tpid"
	local w c
	w=$(sed -n 's/.*work_ms=\([0-9]*\).*/\1/p' "$T/err")
	c=$(sed -n 's/.*cpu_ms=\([0-9]*\).*/\1/p' "$T/err")
	echo "$w $c $(tail -1 "$T/jvm.time") ${acpu:-0} ${tool:-0} ${trss:-0} ${samples:-0}"
}

echo "JavaRatio rounds=$ROUNDS, JDK 17, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
read -r bw bc brss _ < <(run none 0)
printf "%-14s %8s %8s %7s %7s %10s %12s %11s %12s %8s\n" run work_ms cpu_ms wall_x cpu_x \
	jvm_rss_kb agent_cpu_ms kiln/perf_ms tool_rss_kb samples
printf "%-14s %8s %8s %7s %7s %10s %12s %11s %12s %8s\n" unprofiled "$bw" "$bc" 1.000 1.000 \
	"$brss" - - - -
for cfg in "kiln 11" "perf 11" "kiln 99" "perf 99"; do
	read -r w c rss acpu tool trss n < <(run $cfg)
	printf "%-14s %8s %8s %7.3f %7.3f %10s %12s %11s %12s %8s\n" "${cfg/ /@}Hz" "$w" "$c" \
		"$(echo "$w / $bw" | bc -l)" "$(echo "$c / $bc" | bc -l)" "$rss" "$acpu" "$tool" \
		"$trss" "$n"
done
echo "jvm_rss_kb: the JVM's peak RSS (compare with unprofiled for the agent's memory in the JVM)"
echo "agent_cpu_ms: libkiln-jvm.so's thread; the signal handler's cost is in cpu_x"
echo "kiln/perf_ms, tool_rss_kb: the profiler process outside the JVM"
