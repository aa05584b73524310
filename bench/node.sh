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

. "$ROOT/bench/lib.sh"
# under perf, node writes its map; in $T, since --perf-basic-prof also writes an
# isolate-*-v8.log into the current directory
bench_workload() {
	local flags=
	[ "$1" = perf ] && flags="--perf-basic-prof --interpreted-frames-native-stack"
	cd "$T" || exit 1
	# shellcheck disable=SC2086
	exec "$NODE" $flags "$WORK" "$2"
}
COL_RX=';(alpha|beta) \([^;]*\)_\[js\]'
COL_ONLY='^[^;]*;[^;]*;node;'
PERF_RX='JS:[~^+*]?(alpha|beta)'

echo "Node: $("$NODE" --version) ($NODE), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
# shellcheck disable=SC2086
bench_table named "$ROUNDS" $profilers
