#!/usr/bin/env bash
# bench/python.sh [PYTHON] — kiln's overhead on a busy Python process at 11 and 99 Hz,
# beside `perf record -g` on the same work. For each profiler and rate (median of REPS
# runs): the workload's slowdown (wall time against an unprofiled run), the profiler's
# CPU time per 1,000 samples (its whole run, start-up included), and the share of the
# workload's samples naming a Python function. The workload's own CPU time is shown
# beside its wall time: on a loaded machine wall time says more about the neighbours.
# Needs root, build/kiln and perf (linux-perf).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
PY=${1:-/usr/bin/python3}
REPS=${REPS:-3}
WORK=$ROOT/bench/python_work.py
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)"; exit 2; }

# rounds for ~5 s of work
t=$("$PY" "$WORK" 200 | tail -n 1 | cut -d' ' -f1)
ROUNDS=$(python3 -c "print(max(200, int(200 * 5.0 / max($t, 0.001))))")

. "$ROOT/bench/lib.sh"
bench_workload() { exec "$PY" "$WORK" "$2"; }
COL_RX=';(alpha|beta) \('
PERF_RX='alpha|beta'

echo "Python: $("$PY" -V 2>&1) ($PY), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
bench_table python "$ROUNDS" kiln perf
