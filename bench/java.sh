#!/usr/bin/env bash
# bench/java.sh [ROUNDS] — the cost of Java profiling on the known-answer workload.
#
# Runs tests/workloads/JavaRatio.java for a fixed amount of work (ROUNDS, default 1500)
# under JDK 17: without profiling, under `kiln record --pids <jvm>` (perf sampling plus
# libkiln-jvm.so attached to the JVM) at 11 and 99 Hz, and under `perf record -g -p <jvm>`
# at 11 and 99 Hz. Prints, per run, the busy thread's wall and CPU time
# and their slowdown against the unprofiled run (CPU time is what the signal handler and
# the kernel's sampling add to the thread; wall time also moves with the machine's load),
# the agent's cost inside the JVM (its thread's CPU; the JVM's peak RSS against the
# unprofiled run) and outside it (kiln record's own CPU and peak RSS from its .col header;
# perf: CPU and peak RSS of perf record), and the samples that carry Java names (kiln) or
# all samples (perf). Needs root, jq, and a built build/kiln and build/libkiln-jvm.so.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-1500}
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
T=$(mktemp -d /tmp/kiln-bench-java.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$JAVA" ] || { echo "JDK 17 not installed"; exit 2; }
[ -f "$ROOT/build/libkiln-jvm.so" ] || { echo "build/libkiln-jvm.so not built (make)"; exit 2; }
"${JAVA%java}javac" -d "$T" "$ROOT/tests/workloads/JavaRatio.java" || exit 1

# Waits until the JVM's busy thread runs, so that both profilers start on the same work
# (perf record -p can miss a thread created while it attaches).
wait_ready() {
	local i
	for i in $(seq 200); do
		grep -qx 'kiln-busy-worke' /proc/"$1"/task/*/comm 2>/dev/null && return 0
		sleep 0.02
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
		"$ROOT/build/kiln" record -f "$hz" -d 3600 --pids "$pid" --no-flamegraph \
			-o "$T/rec" > "$T/kiln.log" 2>&1 &
		local kpid=$!
		wait "$tpid"
		kill -INT "$kpid"
		wait "$kpid"
		local col=$T/rec/last_profile.col
		tool=$(head -1 "$col" | sed 's/^# //' | jq '.agent_cpu_seconds * 1000 | floor')
		trss=$(head -1 "$col" | sed 's/^# //' | jq '.agent_peak_rss_kb')
		acpu=$(head -1 "$col" | sed 's/^# //' | jq '.jvm_agent_cpu_seconds * 1000 | floor')
		samples=$(awk '!/^#/ && /_\[[ji0]\]/ { n += $NF } END { print n + 0 }' "$col")
		rm -rf "$T/rec"
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
	wait "$tpid" 2> /dev/null
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
echo "samples: kiln: samples with Java frames; perf: all samples (none names a Java method)"
