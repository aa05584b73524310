#!/usr/bin/env bash
# --nodejs-mode attach-maps names the JavaScript of worker threads too, under every node
# the tests have (KILN_NODE=NAME: one): two workers run workerSpin from the start, a third
# one (lateSpin) starts 3 s into the session, from the main thread's busy loop; each
# runs in an isolate of its own, which the module's in-process inspector session (no
# port) reaches with its NodeWorker domain. Checks: the map has a line of workerSpin per
# running worker and one of lateSpin; the samples name workerSpin and lateSpin, the main
# thread's mainSpin, never two of them in one stack; no port open after the session.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_maps_lib
_maps=()
trap 'rm -f "${_maps[@]}"; cleanup' EXIT

check() {
	local pid map
	rm -rf "$T/out"
	# --no-use-osr: code OSR compiled before the attach is in no map (docs/agent.md)
	"$NODE" --no-use-osr "$W/node_workers.js" 60 4.5 >/dev/null 2>"$T/workers.err" & pid=$!
	reap $pid
	map=/tmp/perf-$pid.map
	_maps+=("$map")
	sleep 1.5	# the workers run and are optimized
	record -d 8 -f 199 --no-flamegraph --nodejs-mode attach-maps --pids "$pid" >/dev/null
	grep nodejs: "$T/record.log"
	grep -q "pid $pid writes" "$T/record.log" || { echo "kiln did not attach"; kill $pid; return 1; }
	local open
	open=$(ss -ltnpH | grep -E "pid=$pid," || true)
	kill $pid
	wait $pid 2>/dev/null
	[ -z "$open" ] || { echo "node listens after the session: $open"; return 1; }
	local nw nl
	# V8's names: "JS:*workerSpin /path:18:20"; "LazyCompile:" or "Function:" before V8
	# 11; a tier mark (~^+*), and from V8 13 a ' (context-specialized) before the name
	nw=$(grep -cE " (JS|LazyCompile|Function):[~^+*']*workerSpin " "$map")
	nl=$(grep -cE " (JS|LazyCompile|Function):[~^+*']*lateSpin " "$map")
	echo "map: $nw lines of workerSpin, $nl of lateSpin"
	[ "$nw" -ge 2 ] && [ "$nl" -ge 1 ] || { echo "the workers' code is not in the map"; return 1; }
	python3 "$W/nodemapcheck.py" threads "$COL" mainSpin workerSpin lateSpin 10
}
node_each check
