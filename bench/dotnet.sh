#!/usr/bin/env bash
# bench/dotnet.sh — kiln's .NET runtime (--dotnet-mode auto: an EventPipe session with the
# runtime's sample profiler) on a busy CoreCLR 3.1 process, beside kiln without it and
# `perf record -g` (neither names a JIT-compiled method: the runtime writes no perf map
# unless started with COMPlus_PerfMapEnabled=1) on the same fixed work (PHASES phases of
# the dotnet_ratio workload). For each: the workload's wall time and its slowdown against
# an unprofiled run, the profiler's CPU time, and the share of the workload's samples that
# name a managed method (the median run by wall time of REPS, default 1: short runs). Needs root, build/kiln,
# perf (linux-perf), mcs (mono-mcs); fetches the runtime like the e2e tests.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
REPS=${REPS:-1}
PHASES=${PHASES:-30}
HZ=${HZ:-99}
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)"; exit 2; }
skip() { echo "skip: $*"; exit 2; }
fail() { echo "fail: $*"; exit 1; }
W=$ROOT/tests/workloads
WB=$ROOT/build/workloads
mkdir -p "$WB"
. "$ROOT/tests/workloads/dotnet_env.sh"
dotnet_runtime
dotnet_build dotnet_ratio

# share of "frames count" lines on stdin with a named managed frame
SHARE='
import re, sys
rx = re.compile(r"Ratio\.Work\.(Alpha|Beta)")
tot = named = 0
for line in sys.stdin:
    frames, _, n = line.rstrip("\n").rpartition(" ")
    if n.isdigit():
        tot += int(n)
        named += int(n) if rx.search(frames) else 0
print(f"{named / tot if tot else 0:.3f} {tot}")
'

# run PROFILER: prints "wall agent_cpu share samples"
run() {
	local prof=$1 pid ppid wall
	exec 3< <("$DOTNET" "$WB/dotnet_ratio.exe" 0 "$PHASES")
	pid=$!
	read -r _ <&3	# ready
	case $prof in
	none) ;;
	kiln|kiln-native)
		rm -rf "$T/k"
		mode=auto; [ "$prof" = kiln-native ] && mode=disabled
		/usr/bin/time -f "%U %S" -o "$T/time" "$KILN" record -q -d 600 -f "$HZ" \
			--no-flamegraph --dotnet-mode $mode -o "$T/k" --pids "$pid" 2>/dev/null &
		ppid=$! ;;
	perf) /usr/bin/time -f "%U %S" -o "$T/time" perf record -q -g -F "$HZ" -p "$pid" \
		-o "$T/perf.data" >/dev/null 2>&1 & ppid=$! ;;
	esac
	read -r _ wall <&3
	exec 3<&-
	case $prof in
	none) echo "$wall 0 - -" ;;
	kiln|kiln-native)
		pkill -INT -P "$ppid"; wait "$ppid"
		echo "$wall $(tail -n 1 "$T/time" | awk '{print $1 + $2}') $(grep -v '^#' "$T/k/last_profile.col" |
			grep '^[0-9]*;[^;]*;dotnet;' | python3 -c "$SHARE")" ;;
	perf) pkill -INT -P "$ppid"; wait "$ppid"
	      echo "$wall $(tail -n 1 "$T/time" | awk '{print $1 + $2}') $(perf script -i "$T/perf.data" \
		-F ip,sym 2>/dev/null | awk 'NF == 0 { if (s != "") print s " 1"; s = ""; next }
		{ s = s ";" $2 } END { if (s != "") print s " 1" }' | python3 -c "$SHARE")" ;;
	esac
}

echo "CoreCLR $DOTNET_WHEEL_VERSION, $PHASES phases, $HZ Hz, $REPS run(s) each"
printf "%-12s %8s %9s %10s %12s %8s\n" profiler wall_s slowdown agent_cpu_s managed_share samples
base=""
for prof in ${PROFILERS:-none kiln kiln-native perf}; do
	for _ in $(seq "$REPS"); do run $prof; done | sort -n |
		awk '{ r[NR] = $0 } END { print r[int((NR + 1) / 2)] }' >"$T/r"
	read -r wall cpu share n <"$T/r"
	[ -z "$base" ] && base=$wall
	printf "%-12s %8s %9s %10s %12s %8s\n" "$prof" "$wall" \
		"$(python3 -c "print(f'{$wall / $base:.2f}x')")" "$cpu" "$share" "$n"
done
