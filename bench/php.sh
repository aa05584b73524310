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

. "$ROOT/bench/lib.sh"
bench_workload() { exec "$PHP" "$WORK" "$2"; }
COL_RX='_\[php\]'
PERF_RX='alpha|beta|Work::alpha'

echo "PHP: $("$PHP" -v | head -n 1) ($PHP), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
bench_table php "$ROUNDS" kiln perf
