#!/usr/bin/env bash
# bench/node_attach.sh [NODE] — what --nodejs-mode attach-maps costs the target (median of
# REPS runs): how long kiln keeps each node's inspector port open at the attach and at the
# stop (from kiln's log: from the first look that finds it listening to the first that does
# not; node takes another 90-170 ms to open it after SIGUSR1), the main thread's pause in the
# module's start() while V8 enumerates the existing code (timed inside node), the lines
# the map gets, and the share of the ratio workload's main-thread samples that the map
# names by its outer function (phase; its inlined alpha and beta cannot be named by a
# perf map). Needs root and build/kiln, build/libkiln-nodeperf.so.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KILN=$ROOT/build/kiln
LIB=$ROOT/build/libkiln-nodeperf.so
NODE=${1:-$(command -v node || command -v nodejs)}
REPS=${REPS:-5}
T=$(mktemp -d /tmp/kiln-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 2; }
[ -x "$KILN" ] && [ -f "$LIB" ] || { echo "needs build/kiln and build/libkiln-nodeperf.so (make all)"; exit 2; }
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }

for i in $(seq "$REPS"); do
	"$NODE" "$ROOT/bench/node_attach_pause.js" "$LIB" >>"$T/pause"
	# --no-use-osr: see tests/e2e/node_attach_maps.sh (on-stack-replacement code made
	# before the attach is not enumerated by V8)
	"$NODE" --no-use-osr "$ROOT/tests/workloads/node_ratio.js" 30 >/dev/null 2>&1 & pid=$!
	sleep 1
	"$KILN" record -o "$T/out" -d 4 -f 199 --no-flamegraph --nodejs-mode attach-maps \
		--pids "$pid" >"$T/log" 2>&1
	kill $pid
	wait $pid 2>/dev/null
	rm -f "/tmp/perf-$pid.map"
	sed -n 's/.*writes .*open for \([0-9]*\) ms.*/\1/p' "$T/log" >>"$T/attach_ms"
	sed -n 's/.*stopped its perf map after \([0-9]*\) lines (inspector open for \([0-9]*\) ms).*/\1 \2/p' \
		"$T/log" >>"$T/stop"
	python3 "$ROOT/tests/workloads/nodemapcheck.py" phase "$T/out/last_profile.col" 0 |
		sed -n 's/^\([0-9]*\) of \([0-9]*\) .*/\1 \2/p' >>"$T/named"
done
echo "attach-maps, $REPS runs, medians; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  inspector open at the attach:  $(median <"$T/attach_ms") ms"
echo "  inspector open at the stop:    $(cut -d' ' -f2 "$T/stop" | median) ms"
echo "  start() pause (main thread):   $(cut -d' ' -f1 "$T/pause" | median) ms, for $(cut -d' ' -f3 "$T/pause" | median) map lines"
echo "  stop() pause:                  $(cut -d' ' -f2 "$T/pause" | median) ms"
echo "  map lines of the ratio workload at the stop: $(cut -d' ' -f1 "$T/stop" | median)"
echo "  its main-thread samples named phase: $(awk '{ printf "%.3f\n", $2 ? $1 / $2 : 0 }' "$T/named" | median) (per run: $(awk '{ printf "%s/%s ", $1, $2 }' "$T/named"))"
