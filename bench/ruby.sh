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

. "$ROOT/bench/lib.sh"
bench_workload() { exec "$RB" "$WORK" "$2"; }
COL_RX=';(alpha|beta) \([^;]*\)_\[rb\]'
PERF_RX='alpha|beta'
# rbspy as gProfiler runs it; its frames are "name - file:line"
bench_other_start() {
	rm -f "$T/rbspy.txt"
	/usr/bin/time -f "%U %S" -o "$T/time" "$RBSPY" record --silent --nonblocking --on-cpu \
		-r "$2" --format collapsed --file "$T/rbspy.txt" --raw-file /dev/null \
		-p "$3" >/dev/null 2>&1 & ppid=$!
}
bench_other_count() { cat "$T/rbspy.txt"; }
OTHER_RX='(^|;)(alpha|beta) - '

echo "Ruby: $("$RB" -v) ($RB), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
# shellcheck disable=SC2086
bench_table ruby "$ROUNDS" $profilers
