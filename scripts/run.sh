#!/usr/bin/env bash
# `make run`: profile this machine for one session and print where the flamegraph is.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${KILN_OUT:-./kiln-out}
secs=${KILN_DURATION:-30}
echo "kiln: profiling this machine for ${secs}s into $out (Ctrl-C ends the session early)"
[ "$(id -u)" -eq 0 ] || echo "kiln: not root; 'sudo make run' if perf events are refused"
./build/kiln record -o "$out" -d "$secs" -f 99
echo "flamegraph: $(readlink -f "$out/last_flamegraph.html")"
