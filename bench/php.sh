#!/usr/bin/env bash
# bench/php.sh [PHP] — kiln's overhead on a busy PHP process at 11 and 99 Hz, beside
# `perf record -g` on the same work. For each profiler and rate (median of REPS runs):
# the workload's slowdown (wall time against an unprofiled run), the profiler's CPU time
# per 1,000 samples (its whole run, start-up included), and the share of the workload's
# samples carrying PHP functions (kiln: _[php] frames; perf: alpha or beta named, which
# it cannot do, as it sees only execute_ex). The workload's own CPU time is shown beside
# its wall time: on a loaded machine wall time says more about the neighbours.
# Needs root, build/kiln, perf (linux-perf) and php (php-cli).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
PHP=${1:-$(command -v php8.2 || command -v php)}
REPS=${REPS:-3}
WORK=$ROOT/bench/php_work.php
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)"; exit 2; }

# rounds for ~5 s of work
t=$("$PHP" "$WORK" 200 | tail -n 1 | cut -d' ' -f1)
ROUNDS=$(python3 -c "print(max(200, int(200 * 5.0 / max($t, 0.001))))")

# run PROFILER HZ: prints "wall agent_cpu samples php_samples workload_cpu"
run() {
	local prof=$1 hz=$2 out pid ppid wall
	exec 3< <("$PHP" "$WORK" "$ROUNDS")
	pid=$!
	read -r _ <&3	# ready
	case $prof in
	none) ;;
	kiln) rm -rf "$T/k"
	      /usr/bin/time -f "%U %S" -o "$T/time" "$KILN" record -q -c -d 600 -f "$hz" \
		--no-flamegraph --php-mode auto -o "$T/k" --pids "$pid" 2>/dev/null & ppid=$! ;;
	perf) /usr/bin/time -f "%U %S" -o "$T/time" perf record -q -g -F "$hz" -p "$pid" \
		-o "$T/perf.data" >/dev/null 2>&1 & ppid=$! ;;
	esac
	read -r wall wcpu <&3
	exec 3<&-
	case $prof in
	none) echo "$wall 0 0 0 $wcpu" ;;
	kiln) pkill -INT -P "$ppid"; wait "$ppid"
	      python3 - "$T/k/last_profile.col" "$wall" "$(cat "$T/time")" "$wcpu" <<'PYEOF'
import json, re, sys
col, wall, (u, s) = sys.argv[1], sys.argv[2], sys.argv[3].split()[-2:]
with open(col) as f:
    head = json.loads(f.readline()[2:])
    tot = py = 0
    for line in f:
        frames, _, n = line.rstrip("\n").rpartition(" ")
        tot += int(n)
        py += int(n) if "_[php]" in frames else 0
print(wall, float(u) + float(s), tot, py, sys.argv[4])
PYEOF
	      ;;
	perf) pkill -INT -P "$ppid"; wait "$ppid"
	      perf script -i "$T/perf.data" -F comm,ip,sym 2>/dev/null |
		python3 -c "$PERF_STACKS" "$wall" "$(cat "$T/time")" "$wcpu"
	      ;;
	esac
}

# counts perf script's samples (a header line, then one indented line per frame) and
# those naming alpha or beta
PERF_STACKS='
import sys
wall, (u, s) = sys.argv[1], sys.argv[2].split()[-2:]
tot = py = 0
stack = []
def flush():
    global tot, py
    if stack:
        tot += 1
        py += any(w in ("alpha", "beta", "Work::alpha") for w in stack)
for line in sys.stdin:
    if not line.strip():
        flush(); stack = []
    elif line[0] not in " \t":
        flush(); stack = []
    else:
        stack += line.split()[1:2]
flush()
print(wall, float(u) + float(s), tot, py, sys.argv[3])
'

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "PHP: $("$PHP" -v | head -n 1) ($PHP), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
rows=$(for i in $(seq "$REPS"); do run none 0; done)
base=$(echo "$rows" | cut -d' ' -f1 | median)
bcpu=$(echo "$rows" | cut -d' ' -f5 | median)
printf "%-14s %8s %9s %8s %9s %8s %14s %9s\n" profiler wall_s slowdown cpu_s cpu_slow samples "cpu_ms/1k_smp" php
printf "%-14s %8.3f %9s %8.3f %9s %8s %14s %9s\n" none "$base" - "$bcpu" - - - -
for prof in kiln perf; do
	for hz in 11 99; do
		rows=$(for i in $(seq "$REPS"); do run "$prof" "$hz"; done)
		wall=$(echo "$rows" | cut -d' ' -f1 | median)
		cpu=$(echo "$rows" | awk '$3 > 0 {print 1e6 * $2 / $3}' | median)
		smp=$(echo "$rows" | cut -d' ' -f3 | median)
		pyf=$(echo "$rows" | awk '$3 > 0 {print 100 * $4 / $3}' | median)
		wcpu=$(echo "$rows" | cut -d' ' -f5 | median)
		printf "%-14s %8.3f %8.1f%% %8.3f %8.1f%% %8s %14.1f %8.1f%%\n" "$prof@${hz}Hz" "$wall" \
			"$(python3 -c "print(100 * ($wall / $base - 1))")" "$wcpu" \
			"$(python3 -c "print(100 * ($wcpu / $bcpu - 1))")" "$smp" "${cpu:-0}" "${pyf:-0}"
	done
done
