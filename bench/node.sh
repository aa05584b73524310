#!/usr/bin/env bash
# bench/node.sh [NODE] — kiln's Node.js reader on a busy node at 11 and 99 Hz, beside
# `perf record -g` on the same work with node started with --perf-basic-prof
# --interpreted-frames-native-stack (gProfiler's perf mode: perf names each compiled code
# object, so functions TurboFan inlined vanish). For each profiler and rate (median of
# REPS runs): the workload's slowdown (wall and CPU time against an unprofiled run), the
# profiler's CPU time per 1,000 samples (its whole run, start-up included), and the share
# of the workload's samples that name the function running (alpha or beta). A
# Node-native profiler (0x, @pyroscope/nodejs) is not run here yet. Needs root,
# build/kiln and perf (linux-perf). PROFILERS="kiln perf" picks some; ROUNDS sets the work.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
NODE=${1:-$(command -v node || command -v nodejs)}
REPS=${REPS:-3}
WORK=$ROOT/bench/node_work.js
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)"; exit 2; }
profilers=${PROFILERS:-kiln perf}

# rounds for ~4 s of work
t=$("$NODE" "$WORK" 2 | tail -n 1 | cut -d' ' -f1)
ROUNDS=${ROUNDS:-$(python3 -c "print(max(2, int(2 * 4.0 / max($t, 0.001))))")}

# "wall agent_cpu samples named workload_cpu" from collapsed stacks on stdin (kiln's .col)
COLLAPSED='
import re, sys
wall, (u, s) = sys.argv[1], sys.argv[2].split()[-2:]
rx = re.compile(r";(alpha|beta) \([^;]*\)_\[js\]")
tot = named = 0
for line in sys.stdin:
    frames, _, n = line.rstrip("\n").rpartition(" ")
    if not n.isdigit() or ";node;" not in frames[:40]:
        continue
    tot += int(n)
    named += int(n) if rx.search(frames) else 0
print(wall, float(u) + float(s), tot, named, sys.argv[3])
'
# the same from perf script (a header line, then one indented line per frame): a frame
# named by the perf map "JS:<tier>alpha file:line:col"
PERF_STACKS='
import re, sys
wall, (u, s) = sys.argv[1], sys.argv[2].split()[-2:]
rx = re.compile(r"^JS:[~^+*]?(alpha|beta)$")
tot = named = 0
stack = []
def flush():
    global tot, named
    if stack:
        tot += 1
        named += any(rx.match(w) for w in stack)
for line in sys.stdin:
    if not line.strip() or line[0] not in " \t":
        flush(); stack = []
    else:
        stack += line.split()[1:2]
flush()
print(wall, float(u) + float(s), tot, named, sys.argv[3])
'

# run PROFILER HZ: prints "wall agent_cpu samples named workload_cpu"
run() {
	local prof=$1 hz=$2 pid ppid wall wcpu flags=
	[ "$prof" = perf ] && flags="--perf-basic-prof --interpreted-frames-native-stack"
	# shellcheck disable=SC2086
	# in $T: --perf-basic-prof also writes an isolate-*-v8.log into the current directory
	exec 3< <(cd "$T" && exec "$NODE" $flags "$WORK" "$ROUNDS")
	pid=$!
	read -r _ <&3	# ready
	case $prof in
	none) ;;
	kiln) rm -rf "$T/k"
	      /usr/bin/time -f "%U %S" -o "$T/time" "$KILN" record -q -c -d 600 -f "$hz" \
		--no-flamegraph -o "$T/k" --pids "$pid" 2>/dev/null & ppid=$! ;;
	perf) /usr/bin/time -f "%U %S" -o "$T/time" perf record -q -g -F "$hz" -p "$pid" \
		-o "$T/perf.data" >/dev/null 2>&1 & ppid=$! ;;
	esac
	read -r wall wcpu _ <&3
	exec 3<&-
	case $prof in
	none) echo "$wall 0 0 0 $wcpu" ;;
	kiln) pkill -INT -P "$ppid"; wait "$ppid"
	      grep -v '^#' "$T/k/last_profile.col" |
		python3 -c "$COLLAPSED" "$wall" "$(cat "$T/time")" "$wcpu" ;;
	perf) pkill -INT -P "$ppid"; wait "$ppid"
	      perf script -i "$T/perf.data" -F comm,ip,sym 2>/dev/null |
		python3 -c "$PERF_STACKS" "$wall" "$(cat "$T/time")" "$wcpu"
	      rm -f "/tmp/perf-$pid.map" ;;
	esac
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "Node: $("$NODE" --version) ($NODE), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
rows=$(for i in $(seq "$REPS"); do run none 0; done)
base=$(echo "$rows" | cut -d' ' -f1 | median)
bcpu=$(echo "$rows" | cut -d' ' -f5 | median)
printf "%-14s %8s %9s %8s %9s %8s %14s %9s\n" profiler wall_s slowdown cpu_s cpu_slow samples "cpu_ms/1k_smp" named
printf "%-14s %8.3f %9s %8.3f %9s %8s %14s %9s\n" none "$base" - "$bcpu" - - - -
for prof in $profilers; do
	for hz in 11 99; do
		rows=$(for i in $(seq "$REPS"); do run "$prof" "$hz"; done)
		wall=$(echo "$rows" | cut -d' ' -f1 | median)
		cpu=$(echo "$rows" | awk '$3 > 0 {print 1e6 * $2 / $3}' | median)
		smp=$(echo "$rows" | cut -d' ' -f3 | median)
		nm=$(echo "$rows" | awk '$3 > 0 {print 100 * $4 / $3}' | median)
		wcpu=$(echo "$rows" | cut -d' ' -f5 | median)
		printf "%-14s %8.3f %8.1f%% %8.3f %8.1f%% %8s %14.1f %8.1f%%\n" "$prof@${hz}Hz" "$wall" \
			"$(python3 -c "print(100 * ($wall / $base - 1))")" "$wcpu" \
			"$(python3 -c "print(100 * ($wcpu / $bcpu - 1))")" "$smp" "${cpu:-0}" "${nm:-0}"
	done
done
