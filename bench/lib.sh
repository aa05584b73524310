# Shared by the per-runtime benches (bench/{python,ruby,php,node}.sh): one workload run
# under one profiler, its samples counted, and the table of medians. Source it after
# setting KILN (the binary), T (a scratch directory), REPS, and after defining:
#   bench_workload PROF ROUNDS   runs the workload (exec), which prints one line when
#                                ready and "wall_s cpu_s" when done; PROF lets it add flags
#   COL_RX                       regex (Python) a kiln .col stack must match to name the
#                                workload's functions; COL_ONLY, if set, a regex a stack
#                                must match to be counted at all
#   PERF_RX                      regex one `perf script` symbol must match whole
# and, for profilers other than none/kiln/perf (rbspy), optionally
#   bench_other_start PROF HZ PID    starts it in the background, sets ppid
#   bench_other_count PROF WCPU      prints its collapsed stacks on stdout; for a profiler
#                                    inside the workload, writes its CPU ("user sys") into
#                                    $T/time itself (WCPU: the workload's CPU seconds;
#                                    BENCH_BASE_CPU: the unprofiled runs' median)
# with OTHER_RX, the regex those collapsed stacks must match, and OTHER_ONLY, if set, the
# one a stack must match to be counted at all.
# Columns: prof_cpu_s is the profiler's whole CPU time (user + system, start-up included);
# cpu_ms/1k_smp divides it by the samples it took, which compares profilers only when
# they sample alike (kiln and perf by CPU time; rbspy by the clock, so on a loaded
# machine it takes more samples of the same work).

bench_median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# collapsed stacks ("frames count") on stdin -> "wall agent_cpu samples named workload_cpu"
# args: wall "user sys" workload_cpu named_rx [only_rx]
BENCH_COLLAPSED='
import re, sys
wall, (u, s), wcpu = sys.argv[1], sys.argv[2].split()[-2:], sys.argv[3]
rx = re.compile(sys.argv[4])
only = re.compile(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else None
tot = named = 0
for line in sys.stdin:
    if line.startswith("#"):
        continue
    frames, _, n = line.rstrip("\n").rpartition(" ")
    if not n.isdigit() or (only and not only.search(frames)):
        continue
    tot += int(n)
    named += int(n) if rx.search(frames) else 0
print(wall, float(u) + float(s), tot, named, wcpu)
'

# `perf script -F comm,ip,sym` on stdin (a header line, then one indented line per
# frame) -> the same line; args: wall "user sys" workload_cpu symbol_rx
BENCH_PERF_STACKS='
import re, sys
wall, (u, s), wcpu = sys.argv[1], sys.argv[2].split()[-2:], sys.argv[3]
rx = re.compile(sys.argv[4])
tot = named = 0
stack = []
def flush():
    global tot, named
    if stack:
        tot += 1
        named += any(rx.fullmatch(w) for w in stack)
for line in sys.stdin:
    if not line.strip() or line[0] not in " \t":
        flush(); stack = []
    else:
        stack += line.split()[1:2]
flush()
print(wall, float(u) + float(s), tot, named, wcpu)
'

# bench_run PROF HZ ROUNDS: one run; prints "wall agent_cpu samples named workload_cpu"
bench_run() {
	local prof=$1 hz=$2 pid ppid wall wcpu
	exec 3< <(bench_workload "$prof" "$3")
	pid=$!
	read -r _ <&3	# ready
	case $prof in
	none) ;;
	kiln) rm -rf "$T/k"
	      /usr/bin/time -f "%U %S" -o "$T/time" "$KILN" record -q -c -d 600 -f "$hz" \
		--no-flamegraph -o "$T/k" --pids "$pid" 2>/dev/null & ppid=$! ;;
	perf) /usr/bin/time -f "%U %S" -o "$T/time" perf record -q -g -F "$hz" -p "$pid" \
		-o "$T/perf.data" >/dev/null 2>&1 & ppid=$! ;;
	*) bench_other_start "$prof" "$hz" "$pid" ;;
	esac
	read -r wall wcpu _ <&3
	exec 3<&-
	[ "$prof" = none ] && { echo "$wall 0 0 0 $wcpu"; return; }
	pkill -INT -P "$ppid"; wait "$ppid"
	case $prof in
	kiln) python3 -c "$BENCH_COLLAPSED" "$wall" "$(cat "$T/time")" "$wcpu" "$COL_RX" \
		"${COL_ONLY:-}" < "$T/k/last_profile.col" ;;
	perf) perf script -i "$T/perf.data" -F comm,ip,sym 2>/dev/null |
		python3 -c "$BENCH_PERF_STACKS" "$wall" "$(cat "$T/time")" "$wcpu" "$PERF_RX"
	      rm -f "/tmp/perf-$pid.map" ;;
	*) bench_other_count "$prof" "$wcpu" >"$T/other.col"	# may write $T/time
	   python3 -c "$BENCH_COLLAPSED" "$wall" "$(cat "$T/time")" "$wcpu" "$OTHER_RX" \
		"${OTHER_ONLY:-}" <"$T/other.col" ;;
	esac
}

# bench_table LABEL ROUNDS PROFILER...: REPS unprofiled runs, then REPS runs of each
# profiler at 11 and 99 Hz; prints the medians, LABEL heading the share of samples that
# name the workload's functions.
bench_table() {
	local label=$1 rounds=$2 prof hz rows base bcpu wall cpu pcpu smp named wcpu
	shift 2
	rows=$(for _ in $(seq "$REPS"); do bench_run none 0 "$rounds"; done)
	base=$(echo "$rows" | cut -d' ' -f1 | bench_median)
	bcpu=$(echo "$rows" | cut -d' ' -f5 | bench_median)
	BENCH_BASE_CPU=$bcpu
	printf "%-14s %8s %9s %8s %9s %8s %10s %14s %9s\n" profiler wall_s slowdown cpu_s cpu_slow \
		samples prof_cpu_s "cpu_ms/1k_smp" "$label"
	printf "%-14s %8.3f %9s %8.3f %9s %8s %10s %14s %9s\n" none "$base" - "$bcpu" - - - - -
	for prof in "$@"; do
		for hz in 11 99; do
			rows=$(for _ in $(seq "$REPS"); do bench_run "$prof" "$hz" "$rounds"; done)
			wall=$(echo "$rows" | cut -d' ' -f1 | bench_median)
			cpu=$(echo "$rows" | awk '$3 > 0 {print 1e6 * $2 / $3}' | bench_median)
			pcpu=$(echo "$rows" | cut -d' ' -f2 | bench_median)
			smp=$(echo "$rows" | cut -d' ' -f3 | bench_median)
			named=$(echo "$rows" | awk '$3 > 0 {print 100 * $4 / $3}' | bench_median)
			wcpu=$(echo "$rows" | cut -d' ' -f5 | bench_median)
			printf "%-14s %8.3f %8.1f%% %8.3f %8.1f%% %8s %10.3f %14.1f %8.1f%%\n" \
				"$prof@${hz}Hz" "$wall" "$(python3 -c "print(100 * ($wall / $base - 1))")" \
				"$wcpu" "$(python3 -c "print(100 * ($wcpu / $bcpu - 1))")" "$smp" \
				"${pcpu:-0}" "${cpu:-0}" "${named:-0}"
		done
	done
}
