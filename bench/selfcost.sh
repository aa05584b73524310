#!/usr/bin/env bash
# bench/selfcost.sh [-f HZ (11)] [-d SECONDS (30)] [-n REPS (1)] [--callgrind] [--perf]
#
# kiln's own cost on the busy host of bench/peers.sh (bench/peers/mix.sh: C 30 deep
# without frame pointers, Python, JVM, Go, Node, Ruby and a g++ -O2 -c loop), kiln only,
# no peer: cheap enough to run before and after a change. Each run starts the mix, runs
# `kiln record -f HZ -d SECONDS` and reads kiln's /proc/PID/stat and VmRSS every second:
#   t cpu_ms rss_MB          CPU kiln used in that second (all threads), its RSS
# then one summary line per run:
#   steady_cpu%   kiln's CPU between 40% and 95% of the session (what peers.sh calls the
#                 steady window: no start-up scan, no final write-out), % of one core
#   peak_rss_MB   VmHWM just before the session ends
#   compiles      g++ runs the loop finished in the session (new processes ~ 20 each)
# and the median of the runs.
# --callgrind: one run of kiln under valgrind --tool=callgrind instead, on the mix's
# processes only (--pids): instructions, which the machine's load does not change. Prints
# the total Ir, the sampling path's (session__run) per sample, the write-out's
# (session__flush), and the functions by inclusive Ir. Same SECONDS to compare builds.
# --perf: also `perf record -g` kiln during the steady window and print where its CPU went.
# --mix-only: kiln on the mix's processes only (--pids, as --callgrind): what else runs on
# the machine (other builds, tests) then changes less of kiln's work from run to run.
# KEEP=1 keeps the scratch dir (callgrind's output, perf.data) and prints it.
# KILN=path picks the binary (build/kiln). Needs root, g++, go, ruby, node, JDK 17.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
HZ=11 SECS=30 REPS=1 CG="" PERF="" MIXONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	-f) HZ=$2; shift ;;
	-d) SECS=$2; shift ;;
	-n) REPS=$2; shift ;;
	--callgrind) CG=1 ;;
	--perf) PERF=1 ;;
	--mix-only) MIXONLY=1 ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
KILN=${KILN:-$ROOT/build/kiln}
[ -n "${KILN_NO_MAKE:-}" ] || make -s build/kiln build/libkiln-jvm.so >/dev/null ||
	{ echo "make failed"; exit 1; }
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
PEERS=$ROOT/bench/peers
T=$(mktemp -d /tmp/kiln-selfcost.XXXXXX)
MIX=()
trap 'stop_mix; [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
. "$PEERS/mix.sh"

TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' \
	"/proc/$1/stat" 2>/dev/null; }

if [ -n "$CG" ]; then
	start_mix "$SECS"
	# only the mix (--pids, with the compile loop's children): what else runs on the
	# machine would make the instruction count differ between two runs
	pids=$(IFS=,; echo "${MIX[*]}")
	valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" -q "$KILN" record -q -f "$HZ" \
		-d "$SECS" --no-flamegraph --pids "$pids" -o "$T/k" 2>"$T/cg.err"
	compiles=$(wc -l <"$T/compiles")
	stop_mix
	callgrind_annotate --inclusive=yes "$T/cg.out" 2>/dev/null >"$T/cg.txt"
	ir() { awk -v f="$1" '$0 ~ f { gsub(",", "", $1); print $1; exit }' "$T/cg.txt"; }
	total=$(ir 'PROGRAM TOTALS') run=$(ir ':session__run ') flush=$(ir ':session__flush ')
	samples=$(head -1 "$T/k/last_profile.col" | grep -o '"samples":[0-9]*' | cut -d: -f2)
	echo "callgrind: $SECS s at $HZ Hz on the mix only: Ir $total; sampling (session__run)" \
		"${run:-0}, ${samples:-0} samples, $(awk -v i="${run:-0}" -v n="${samples:-0}" \
		'BEGIN { printf "%.0f", n ? i / n : 0 }') Ir a sample; write-out (session__flush)" \
		"${flush:-0}; compiles $compiles"
	sed -n '/^Ir/,$p' "$T/cg.txt" | grep -v '^-' | head -60
	exit 0
fi

res=()
for rep in $(seq "$REPS"); do
	start_mix "$SECS"
	only=()
	[ -n "$MIXONLY" ] && only=(--pids "$(IFS=,; echo "${MIX[*]}")")
	"$KILN" record -q -f "$HZ" -d "$SECS" --no-flamegraph "${only[@]}" -o "$T/k" &
	k=$!
	lo=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 0.4 }')
	hi=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 0.95 }')
	[ -n "$PERF" ] && { sleep "$lo"; perf record -q -g -p "$k" -o "$T/perf.data" -- \
		sleep "$((hi - lo))" >/dev/null 2>&1; } &
	c0=0 prev=0 t=0 w0="" w1="" hwm=0
	: >"$T/compiles"
	while kill -0 "$k" 2>/dev/null; do
		c=$(cpu_ticks "$k")
		[ -n "$c" ] || break
		rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$k/status" 2>/dev/null)
		h=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$k/status" 2>/dev/null)
		[ -n "$h" ] && hwm=$h
		[ "$t" -gt 0 ] && echo "  $t $(((c - prev) * 1000 / TCK)) ${rss:-?}"
		[ "$t" -eq "$lo" ] && w0=$c
		[ "$t" -eq "$hi" ] && w1=$c
		prev=$c
		t=$((t + 1))
		sleep 1
	done
	wait "$k"
	compiles=$(wc -l <"$T/compiles")
	stop_mix
	cpu=$(awk -v a="${w0:-0}" -v b="${w1:-0}" -v n=$((hi - lo)) -v k="$TCK" \
		'BEGIN { printf "%.2f", (b > a ? (b - a) / k / n * 100 : 0) }')
	echo "run $rep: $HZ Hz $SECS s: steady_cpu% $cpu peak_rss_MB $hwm compiles $compiles"
	res+=("$cpu $hwm")
	if [ -n "$PERF" ]; then
		wait
		perf report -i "$T/perf.data" --children --percent-limit 3 --stdio -g none \
			2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
	fi
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "median of ${#res[@]}: steady_cpu% $(printf '%s\n' "${res[@]}" | cut -d' ' -f1 | med)" \
	"peak_rss_MB $(printf '%s\n' "${res[@]}" | cut -d' ' -f2 | med)"
