#!/usr/bin/env bash
# bench/node.sh [NODE] — kiln's Node.js reader on a busy node at 11 and 99 Hz, beside
# `perf record -g` on the same work with node started with --perf-basic-prof
# --interpreted-frames-native-stack (gProfiler's perf mode: perf names each compiled code
# object, so functions TurboFan inlined vanish). For each profiler and rate (median of
# REPS runs): the workload's slowdown (wall and CPU time against an unprofiled run), the
# profiler's CPU time per 1,000 samples (its whole run, start-up included), and the share
# of the workload's samples that name the function running (alpha or beta). Beside them
# a Node-native profiler, the Pyroscope SDK (@pyroscope/nodejs, installed with npm into
# build/bench-npm at bench time; bench/node_pyroscope.js preloads it into the workload,
# whose wall profiler, V8's CpuProfiler, samples at the same rate; its stacks name the
# code object's function, so inlined functions vanish there too); it runs inside the process, so its CPU is the workload's CPU time above the
# unprofiled runs' median plus what its start and its stop and upload (to a sink on
# loopback) took, and can read below 0 where the cost is within the noise. Needs root,
# build/kiln and perf (linux-perf). PROFILERS="kiln perf pyroscope" picks some; ROUNDS
# sets the work.
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
profilers=${PROFILERS:-kiln perf pyroscope}
NPM_DIR=$ROOT/build/bench-npm

# the Pyroscope SDK: 0.6 wants node >= 20.20.2; 0.4.7 is the newest that Node 18 may run
if [[ " $profilers " == *" pyroscope "* ]]; then
	pyro=0.6
	"$NODE" -e 'const [a,b,c]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&(b>20||(b==20&&c>=2)))?0:1)' ||
		pyro=0.4.7
	if [ ! -d "$NPM_DIR/$pyro/node_modules/@pyroscope/nodejs" ] &&
		! { command -v npm >/dev/null && mkdir -p "$NPM_DIR/$pyro" &&
			timeout 300 npm install --prefix "$NPM_DIR/$pyro" --no-audit --no-fund \
				--loglevel=error "@pyroscope/nodejs@$pyro" >"$T/npm.log" 2>&1; }; then
		echo "no @pyroscope/nodejs@$pyro (npm: $(tail -n 1 "$T/npm.log" 2>/dev/null)): not run"
		profilers=${profilers//pyroscope/}
	fi
	PYRO_MODULES=$NPM_DIR/$pyro/node_modules
	# the sink the SDK uploads to: keeps the last body (raw gzipped pprof in 0.6; a
	# multipart form before, whose file part the collapse script finds)
	python3 - "$T/pyro.pprof" "$T/pyro.port" <<-'EOF' &
	import http.server, os, sys
	class H(http.server.BaseHTTPRequestHandler):
	    def do_POST(self):
	        body = self.rfile.read(int(self.headers.get("content-length", 0)))
	        with open(sys.argv[1] + ".tmp", "wb") as f:
	            f.write(body)
	        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
	        self.send_response(200)
	        self.end_headers()
	    def log_message(self, *a):
	        pass
	s = http.server.HTTPServer(("127.0.0.1", 0), H)
	open(sys.argv[2], "w").write(str(s.server_address[1]))
	s.serve_forever()
	EOF
	sink=$!
	trap 'kill $sink 2>/dev/null; rm -rf "$T"' EXIT
	for _ in $(seq 100); do [ -s "$T/pyro.port" ] && break; sleep 0.05; done
fi

# rounds for ~4 s of work
t=$("$NODE" "$WORK" 2 | tail -n 1 | cut -d' ' -f1)
ROUNDS=${ROUNDS:-$(python3 -c "print(max(2, int(2 * 4.0 / max($t, 0.001))))")}

. "$ROOT/bench/lib.sh"
# under perf, node writes its map; in $T, since --perf-basic-prof also writes an
# isolate-*-v8.log into the current directory
# (hz: bench_run's, the rate of the run)
bench_workload() {
	local flags=
	[ "$1" = perf ] && flags="--perf-basic-prof --interpreted-frames-native-stack"
	cd "$T" || exit 1
	if [ "$1" = pyroscope ]; then
		rm -f "$T/pyro.stop" "$T/pyro.pprof"
		exec env NODE_PATH="$PYRO_MODULES" KILN_BENCH_HZ="$hz" \
			KILN_BENCH_PYRO_URL="http://127.0.0.1:$(cat "$T/pyro.port")" \
			KILN_BENCH_PYRO_STOP="$T/pyro.stop" "$NODE" -r "$ROOT/bench/node_pyroscope.js" \
			"$WORK" "$2"
	fi
	# shellcheck disable=SC2086
	exec "$NODE" $flags "$WORK" "$2"
}
# the SDK is in the workload: what bench_run waits for is its upload (at most 60 s)
bench_other_start() {
	(for _ in $(seq 1200); do [ -s "$T/pyro.stop" ] && exit 0; sleep 0.05; done) &
	ppid=$!
}
bench_other_count() {
	local cpu
	cpu=$(python3 -c "print($2 - $BENCH_BASE_CPU + $(cat "$T/pyro.stop" 2>/dev/null || echo 0))")
	echo "$cpu 0" >"$T/time"
	[ -s "$T/pyro.pprof" ] && NODE_PATH="$PYRO_MODULES" "$NODE" "$ROOT/bench/pprof_collapse.js" "$T/pyro.pprof"
}
OTHER_RX='(^|;|:)(alpha|beta)(:[0-9]+)? \('

COL_RX=';(alpha|beta) \([^;]*\)_\[js\]'
COL_ONLY='^[^;]*;[^;]*;node;'
PERF_RX='JS:[~^+*]?(alpha|beta)'

echo "Node: $("$NODE" --version) ($NODE), $ROUNDS rounds, median of $REPS runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
# shellcheck disable=SC2086
bench_table named "$ROUNDS" $profilers
