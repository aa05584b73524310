#!/usr/bin/env bash
# bench/ruby.sh [RUBY] — kiln's Ruby reader on a busy Ruby process at 11 and 99 Hz, beside
# `perf record -g` (which names no Ruby method) and rbspy (when it can be installed: cargo
# install rbspy --root build/peers/rbspy, cached there) on the same work. For each
# profiler and rate (median of REPS runs): the workload's slowdown (wall time against an
# unprofiled run), the profiler's CPU time per 1,000 samples (its whole run, start-up
# included), and the share of the workload's samples naming a Ruby method (alpha or
# beta). The workload's own CPU time is shown beside its wall time: on a loaded machine
# wall time says more about the neighbours. rbspy runs as gProfiler runs it (--nonblocking
# --on-cpu, its fork's --oncpu). PROFILERS="kiln rbspy" picks some. Needs root,
# build/kiln and perf (linux-perf).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
RB=${1:-/usr/bin/ruby}
REPS=${REPS:-3}
WORK=$ROOT/bench/ruby_work.rb
RBSPY=$ROOT/build/peers/rbspy/bin/rbspy
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)"; exit 2; }
if [ ! -x "$RBSPY" ] && command -v cargo >/dev/null; then
	echo "installing rbspy into build/peers/rbspy (once)"
	cargo install -q rbspy --root "$ROOT/build/peers/rbspy" >"$T/cargo.log" 2>&1 ||
		echo "rbspy: cargo install failed: $(tail -n 1 "$T/cargo.log")"
fi
profilers="kiln perf"
[ -x "$RBSPY" ] && profilers="$profilers rbspy" || echo "rbspy: not available, left out"
profilers=${PROFILERS:-$profilers}

# rounds for ~5 s of work
t=$("$RB" "$WORK" 200 | tail -n 1 | cut -d' ' -f1)
ROUNDS=$(python3 -c "print(max(200, int(200 * 5.0 / max($t, 0.001))))")

# the share of collapsed stacks ("frames count" lines on stdin) with a frame matching
# argv[4] (alpha or beta as the profiler names them)
COLLAPSED='
import re, sys
wall, (u, s) = sys.argv[1], sys.argv[2].split()[-2:]
rx = re.compile(sys.argv[4])
tot = rb = 0
for line in sys.stdin:
    frames, _, n = line.rstrip("\n").rpartition(" ")
    if not n.isdigit():
        continue
    tot += int(n)
    rb += int(n) if rx.search(frames) else 0
print(wall, float(u) + float(s), tot, rb, sys.argv[3])
'

# run PROFILER HZ: prints "wall agent_cpu samples ruby_samples workload_cpu"
run() {
	local prof=$1 hz=$2 pid ppid wall wcpu
	exec 3< <("$RB" "$WORK" "$ROUNDS")
	pid=$!
	read -r _ <&3	# ready
	case $prof in
	none) ;;
	kiln) rm -rf "$T/k"
	      /usr/bin/time -f "%U %S" -o "$T/time" "$KILN" record -q -c -d 600 -f "$hz" \
		--no-flamegraph -o "$T/k" --pids "$pid" 2>/dev/null & ppid=$! ;;
	perf) /usr/bin/time -f "%U %S" -o "$T/time" perf record -q -g -F "$hz" -p "$pid" \
		-o "$T/perf.data" >/dev/null 2>&1 & ppid=$! ;;
	rbspy) rm -f "$T/rbspy.txt"
	      /usr/bin/time -f "%U %S" -o "$T/time" "$RBSPY" record --silent --nonblocking --on-cpu \
		-r "$hz" --format collapsed --file "$T/rbspy.txt" --raw-file /dev/null \
		-p "$pid" >/dev/null 2>&1 & ppid=$! ;;
	esac
	read -r wall wcpu <&3
	exec 3<&-
	case $prof in
	none) echo "$wall 0 0 0 $wcpu" ;;
	kiln) pkill -INT -P "$ppid"; wait "$ppid"
	      grep -v '^#' "$T/k/last_profile.col" |
		python3 -c "$COLLAPSED" "$wall" "$(cat "$T/time")" "$wcpu" ';(alpha|beta) \([^;]*\)_\[rb\]' ;;
	perf) pkill -INT -P "$ppid"; wait "$ppid"
	      perf script -i "$T/perf.data" -F comm,ip,sym 2>/dev/null |
		python3 -c "$PERF_STACKS" "$wall" "$(cat "$T/time")" "$wcpu" ;;
	rbspy) pkill -INT -P "$ppid"; wait "$ppid"
	      # rbspy frames are "name - file:line"
	      python3 -c "$COLLAPSED" "$wall" "$(cat "$T/time")" "$wcpu" '(^|;)(alpha|beta) - ' \
		<"$T/rbspy.txt" ;;
	esac
}

# counts perf script's samples (a header line, then one indented line per frame) and
# those naming alpha or beta
PERF_STACKS='
import sys
wall, (u, s) = sys.argv[1], sys.argv[2].split()[-2:]
tot = rb = 0
stack = []
def flush():
    global tot, rb
    if stack:
        tot += 1
        rb += any(w in ("alpha", "beta") for w in stack)
for line in sys.stdin:
    if not line.strip() or line[0] not in " \t":
        flush(); stack = []
    else:
        stack += line.split()[1:2]
flush()
print(wall, float(u) + float(s), tot, rb, sys.argv[3])
'

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "Ruby: $("$RB" -v) ($RB), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
rows=$(for i in $(seq "$REPS"); do run none 0; done)
base=$(echo "$rows" | cut -d' ' -f1 | median)
bcpu=$(echo "$rows" | cut -d' ' -f5 | median)
printf "%-14s %8s %9s %8s %9s %8s %14s %9s\n" profiler wall_s slowdown cpu_s cpu_slow samples "cpu_ms/1k_smp" ruby
printf "%-14s %8.3f %9s %8.3f %9s %8s %14s %9s\n" none "$base" - "$bcpu" - - - -
for prof in $profilers; do
	for hz in 11 99; do
		rows=$(for i in $(seq "$REPS"); do run "$prof" "$hz"; done)
		wall=$(echo "$rows" | cut -d' ' -f1 | median)
		cpu=$(echo "$rows" | awk '$3 > 0 {print 1e6 * $2 / $3}' | median)
		smp=$(echo "$rows" | cut -d' ' -f3 | median)
		rbf=$(echo "$rows" | awk '$3 > 0 {print 100 * $4 / $3}' | median)
		wcpu=$(echo "$rows" | cut -d' ' -f5 | median)
		printf "%-14s %8.3f %8.1f%% %8.3f %8.1f%% %8s %14.1f %8.1f%%\n" "$prof@${hz}Hz" "$wall" \
			"$(python3 -c "print(100 * ($wall / $base - 1))")" "$wcpu" \
			"$(python3 -c "print(100 * ($wcpu / $bcpu - 1))")" "$smp" "${cpu:-0}" "${rbf:-0}"
	done
done
