#!/usr/bin/env bash
# bench/peers.sh [--quick] [-d SECONDS] [-n REPS] [-r "11 19 99"] [-t "kiln perf ..."]
#
# kiln side by side with the profilers users would pick instead, on one busy host:
#   perf            `perf record -a -g` (frame pointers) + `perf script`, system-wide
#   otel            the OpenTelemetry eBPF profiler, system-wide, exporting OTLP/gRPC to
#                   bench/peers/sink (which names native frames the way a backend does,
#                   with addr2line, outside the profiler's cost)
#   py-spy          on the Python workload only (default blocking mode)
#   rbspy           on the Ruby workload only
#   async-profiler  loaded into the JVM (jcmd JVMTI.agent_load), event=cpu
#   kiln            `kiln record`, system-wide, every runtime reader on (auto)
# installed at bench time by bench/peers/install.sh into build/peers/ (a peer that cannot
# be had is printed as such, and left out).
#
# Every run starts the same work on both CPUs (tests/workloads/): (a) unwind_deep, C -O2
# without frame pointers, 30 frames deep; (b) python_ratio.py; (c) JavaRatio (JDK 17);
# (d) goleaf (Go); (e) a Node event loop; (f) ruby_ratio.rb; (g) a compile loop (g++ -O2
# -c, new processes and large new binaries all the time), plus bench/peers/probe.c, then
# one profiler at one rate for SECONDS. Runs are interleaved: each repetition goes once
# through every rate and tool (with "none", no profiler), the order rotating.
#
# For each tool and rate, the median of the runs and every run:
#   cpu%     user + system of all the tool's processes and threads (bench/peers/meter.py,
#            wait4 rusage of its process tree), plus the kernel time of its eBPF programs
#            (bpftool run_time_ns, kernel.bpf_stats_enabled=1 during the bench), plus for
#            kiln its JVM agent thread; in % of one core over the tool's wall time.
#            async-profiler runs in the JVM: its cost there cannot be told apart from the
#            JVM's own; the column shows jcmd's (attach/stop) CPU and is marked so.
#   bpf%     the eBPF part of cpu%
#   rss_MB   peak resident memory of the tool's process tree (async-profiler: n/a)
#   KB/min   bytes written (kiln: its output dir; perf: perf.data; otel: bytes the sink
#            got on the wire; others: their output files), per minute of profiling
#   slow%    work the probe lost against the runs without a profiler (units per second)
#   samples  all the samples the tool gave, the whole machine
#   <wl> r/c for each known-answer workload the tool sees: the share of its samples that
#            name the right function / that are complete stacks (bench/peers/check.py)
#            and the split measured (want: deep 75, python 70, ruby 70, java 75, go 70)
# then kiln/peer ratios of cpu%, rss and bytes at each rate.
# Needs root, build/kiln (made here), perf, bpftool, JDK 17, go, g++, ruby, node.
# --quick: 20 s runs (the eBPF profiler takes ~8 s to start here), 1 repetition (a smoke run; say so when quoting its figures).
# KEEP=1 keeps every run's files in /tmp.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
SECS=30 REPS=3 RATES="11 19 99" TOOLS="kiln perf otel py-spy rbspy async-profiler"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) SECS=20 REPS=1 ;;
	-d) SECS=$2; shift ;;
	-n) REPS=$2; shift ;;
	-r) RATES=$2; shift ;;
	-t) TOOLS=$2; shift ;;
	*) sed -n '2,40p' "$0"; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
for c in perf bpftool g++ go ruby node /usr/lib/jvm/java-17-openjdk-amd64/bin/java; do
	command -v "$c" >/dev/null || { echo "needs $c"; exit 2; }
done
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
P=$ROOT/build/peers
PEERS=$ROOT/bench/peers
T=$(mktemp -d /tmp/kiln-bench-peers.XXXXXX)
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
MIX=()
MOUNTED=""
cleanup() {
	stop_mix
	[ -n "$MOUNTED" ] && umount "$MOUNTED"
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

make -s build/kiln build/libkiln-jvm.so >/dev/null || { echo "make failed"; exit 1; }

# --- peers -----------------------------------------------------------------------------
want=""
for t in $TOOLS; do [ "$t" = kiln ] || want="$want $t"; done
have="none kiln"
if [ -n "$want" ]; then
	while read -r _ name status rest; do
		if [ "$status" = ok ]; then
			have="$have $name"
			echo "peer $name: $rest"
		else
			echo "peer $name: UNAVAILABLE ($status $rest), left out"
		fi
	done < <("$PEERS/install.sh" $want)
fi
case " $TOOLS " in *" kiln "*) ;; *) have=${have/ kiln/} ;; esac

# --- workloads -------------------------------------------------------------------------
. "$PEERS/mix.sh"

pid_of() { awk -v w="$1" '$1 == w {print $2}' "$T/pids"; }

# --- one run ---------------------------------------------------------------------------
SINK=""
run() {	# tool hz rep: appends one JSON line to $T/runs.jsonl
	local tool=$1 hz=$2 rep=$3 o=$T/run
	[ -n "${KEEP:-}" ] && o=$T/run-$tool-$hz-$rep
	rm -rf "$o"
	mkdir -p "$o"
	start_mix "$SECS"
	"$W/probe" >"$o/probe" &
	local probe=$! t0 t1 fmt="" out="" only="" bytes=0 extra=0 meter=(python3 "$PEERS/meter.py"
		"$o/meter.json" --window "$(awk -v s="$SECS" 'BEGIN {print s * 0.4}')" \
		"$(awk -v s="$SECS" 'BEGIN {print s * 0.95}')")
	t0=$(date +%s.%N)
	case $tool in
	none) "${meter[@]}" "$SECS" --bpf -- sleep "$SECS" ;;
	kiln) "${meter[@]}" $((SECS + 60)) --bpf -- "$ROOT/build/kiln" record -q -f "$hz" \
		-d "$SECS" --no-flamegraph -o "$o/k" ;;
	perf) "${meter[@]}" $((SECS + 60)) --bpf -- perf record -q -a -g -F "$hz" \
		-o "$o/perf.data" -- sleep "$SECS" >/dev/null 2>&1 ;;
	otel) "$P/bin/otel-sink" -o "$o/otel.txt" -bytes "$o/otel.bytes" >"$o/sink.addr" 2>"$o/sink.err" &
	      SINK=$!
	      local i
	      for i in $(seq 100); do [ -s "$o/sink.addr" ] && break; sleep 0.1; done
	      "${meter[@]}" "$SECS" --bpf -- "$P/bin/ebpf-profiler" -collection-agent \
		"$(cat "$o/sink.addr")" -disable-tls -samples-per-second "$hz" \
		-reporter-interval 2s >"$o/otel.log" 2>&1 ;;
	py-spy) "${meter[@]}" $((SECS + 60)) --bpf -- "$P/pyspy/bin/py-spy" record -r "$hz" \
		-d "$SECS" -p "$(pid_of python)" -f raw -o "$o/pyspy.txt" >/dev/null 2>&1 ;;
	rbspy) "${meter[@]}" $((SECS + 60)) --bpf -- "$P/rbspy/bin/rbspy" record --silent \
		--pid "$(pid_of ruby)" --rate "$hz" --duration "$SECS" --format collapsed \
		--file "$o/rbspy.txt" --raw-file "$o/rbspy.raw.gz" >/dev/null 2>&1 ;;
	async-profiler)
	      local lib=$P/async-profiler/libasyncProfiler.so jvm
	      jvm=$(pid_of java)
	      "${meter[@]}" $((SECS + 60)) --bpf -- bash -c "
		$JDK/jcmd $jvm JVMTI.agent_load $lib '\"start,event=cpu,interval=$((1000000000 / hz))\"'
		sleep $SECS
		$JDK/jcmd $jvm JVMTI.agent_load $lib '\"stop,collapsed,file=$o/async.txt\"'" \
		>"$o/async.log" 2>&1 ;;
	esac
	t1=$(date +%s.%N)
	kill -TERM "$probe"
	wait "$probe"
	[ "$tool" = otel ] && { kill -TERM "$SINK"; wait "$SINK"; }
	stop_mix
	case $tool in
	kiln) fmt=kiln out=$o/k/last_profile.col
	      bytes=$(du -sb "$o/k" | cut -f1)
	      extra=$(head -1 "$out" 2>/dev/null | sed 's/^# //' |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("jvm_agent_cpu_seconds", 0))' \
		2>/dev/null || echo 0) ;;
	perf) fmt=perf out=$o/perf.txt
	      bytes=$(stat -c %s "$o/perf.data")
	      python3 "$PEERS/meter.py" "$o/script.json" 600 -- sh -c \
		"perf script -i $o/perf.data -F comm,pid,ip,sym >$out 2>/dev/null" ;;
	otel) fmt=otel out=$o/otel.txt bytes=$(cat "$o/otel.bytes" 2>/dev/null || echo 0) ;;
	py-spy) fmt=pyspy out=$o/pyspy.txt only=python bytes=$(stat -c %s "$out" 2>/dev/null || echo 0) ;;
	rbspy) fmt=rbspy out=$o/rbspy.txt only=ruby
	       bytes=$(cat "$out" "$o/rbspy.raw.gz" 2>/dev/null | wc -c) ;;
	async-profiler) fmt=async out=$o/async.txt only=java
	       bytes=$(stat -c %s "$out" 2>/dev/null || echo 0) ;;
	esac
	local check='{}'
	[ -n "$fmt" ] && check=$(python3 "$PEERS/check.py" "$fmt" "$out" "$T/pids" "${only:--}" \
		"$W:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu")
	python3 - "$tool" "$hz" "$rep" "$o" "$t0" "$t1" "$bytes" "$extra" "$check" >>"$T/runs.jsonl" <<'EOF'
import json, os, sys
tool, hz, rep, o, t0, t1, nbytes, extra, check = sys.argv[1:]
m = json.load(open(o + "/meter.json"))
units, _ = open(o + "/probe").read().split()
if os.path.exists(o + "/script.json"):      # perf script: perf's own symbolization
    s = json.load(open(o + "/script.json"))
    m["cpu_s"] += s["cpu_s"]
    m["peak_rss_kb"] = max(m["peak_rss_kb"], s["peak_rss_kb"])
m.update(tool=tool, hz=int(hz), rep=int(rep), bytes=int(nbytes), jvm_agent_s=float(extra),
         probe_rate=int(units) / (float(t1) - float(t0)), check=json.loads(check))
print(json.dumps(m))
EOF
	printf "  run %-15s %3s Hz rep %s: %s\n" "$tool" "$hz" "$rep" "$(tail -1 "$T/runs.jsonl" |
		python3 "$PEERS/table.py" --one)"
}

# --- the bench -------------------------------------------------------------------------
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
# the eBPF profiler attaches to sched tracepoints through tracefs; mount it for the bench
case " $have " in *" otel "*)
	if ! grep -qw tracefs /proc/mounts; then
		mount -t tracefs nodev /sys/kernel/tracing && MOUNTED=/sys/kernel/tracing
	fi ;;
esac
echo "peers bench: $SECS s runs, $REPS repetitions, rates $RATES Hz, tools:$have;" \
	"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
list=($have)
for rep in $(seq "$REPS"); do
	for hz in $RATES; do
		# rotate the order each pass, so that no tool always runs first after a rate change
		n=${#list[@]} k=$(((rep + hz) % n))
		for i in $(seq 0 $((n - 1))); do
			run "${list[$(((i + k) % n))]}" "$hz" "$rep"
		done
	done
done
echo
python3 "$PEERS/table.py" "$SECS" <"$T/runs.jsonl"
cp "$T/runs.jsonl" "$ROOT/build/peers/last_runs.jsonl"
echo "(every run: build/peers/last_runs.jsonl)"
