#!/usr/bin/env bash
# --nodejs-mode attach-maps (gProfiler's) on a node started before kiln and one started
# while it records, under every node this machine has or can fetch (node_env.sh: the
# system node, Debian's Node 18, the official 22 and 24; KILN_NODE=NAME: that one only):
# kiln opens each one's inspector with SIGUSR1, has it load libkiln-nodeperf.so, which
# writes /tmp/perf-PID.map, and closes the inspector at once; at exit it stops the writing
# the same way. Checks: the ratio workload's functions (phase; alpha and beta once they
# are inlined into it and vanish, as in any perf map) name most of its samples; no listening
# socket of either process during the session (ss) nor after it; the map grows during
# the session and stops growing after it, while the other workload keeps compiling new
# functions; and that workload keeps running and prints what a run without kiln prints.
# The second node is seen early in its start-up (Debian's 18 handles SIGUSR1 a second
# before its main script runs here): kiln signals it once it is past its bootstrap (its
# event loop waits, or it is 1 s old) and waits for its main module in one session.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_maps_lib
command -v setpriv >/dev/null || fail "no setpriv (util-linux)"
chmod 755 "$T"
cp "$W/node_newfn.js" "$T/node_newfn.js" && chmod 644 "$T/node_newfn.js"	# nobody runs it

# listening PID: the TCP sockets process PID listens on, as ss shows them
listening() { ss -ltnpH | grep -E "pid=$1," || true; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# check NAME: the whole scenario under $NODE; prints what it saw, returns 1 on a failure
# (with the reason) after killing its processes.
check() {
	local name=$1 ratio newfn kiln map s1 s2 a1 a2 r1 r2 n copy open_during open_after
	rm -rf "$T/out" "$T/$name"
	mkdir -p "$T/$name"
	local D=$T/$name
	# --no-use-osr: V8 does not enumerate optimized code that no function holds, such as
	# the on-stack-replacement code of phase's loop when V8 made it before the attach and
	# keeps entering it; such code stays unnamed (docs/agent.md), in about a third of the
	# runs here
	(cd "$D" && exec "$NODE" --no-use-osr "$W/node_ratio.js" 120 >"$D/ratio.out" 2>"$D/ratio.err") &
	ratio=$!
	# the other one starts during the session, as a child of a process kiln was given,
	# under a name of its own (the comm of its samples), as another user (nobody: kiln
	# copies the module into /tmp for it)
	local newnode
	newnode=$(node_as "nodenew$name" setpriv --reuid=nobody --regid=nogroup --clear-groups)
	# (1 s after kiln started: $D/go)
	(cd "$D" && exec bash -c "while [ ! -e '$D/go' ]; do sleep 0.1; done; sleep 1; exec '$newnode' '$T/node_newfn.js' 120 0 20 >'$D/newfn.out' 2>'$D/newfn.err'") &
	newfn=$!	# the same pid once bash has exec'd node
	reap $ratio $newfn
	_maps+=("/tmp/perf-$ratio.map" "/tmp/perf-$newfn.map")
	# past start-up (Debian's 18 takes seconds on a loaded host: its samples would count
	# against the map), then phase is optimized
	for _ in $(seq 300); do grep -q ready "$D/ratio.out" 2>/dev/null && break; sleep 0.1; done
	sleep 1
	: >"$D/record.log"
	"$KILN" record -o "$T/out" -d 8 -f 199 --no-flamegraph --nodejs-mode attach-maps \
		--pids "$ratio,$newfn" >"$D/record.log" 2>&1 & kiln=$!
	touch "$D/go"
	# until kiln says both write their maps (or it ends): the second one is attached once
	# it has exec'd node and handles SIGUSR1
	while kill -0 $kiln 2>/dev/null && [ "$(grep -c 'writes /tmp/perf-' "$D/record.log")" -lt 2 ]; do
		sleep 0.1
	done
	bad() { echo "FAIL ($name): $*"; kill $ratio $newfn 2>/dev/null; wait $kiln 2>/dev/null; return 1; }
	[ "$(grep -c 'writes /tmp/perf-' "$D/record.log")" -eq 2 ] ||
		{ bad "kiln did not attach both: $(cat "$D/record.log"); the second node's stderr: $(tail -n 5 "$D/newfn.err")"; return 1; }
	open_during=$(listening $ratio; listening $newfn)
	map=/tmp/perf-$newfn.map
	s1=$(size "$map")
	sleep 2
	s2=$(size "$map")
	wait $kiln || { bad "kiln record failed: $(cat "$D/record.log")"; return 1; }
	COL=$T/out/last_profile.col
	grep nodejs: "$D/record.log"
	open_after=$(listening $ratio; listening $newfn)
	[ -z "$open_during" ] || { bad "a node process listens during the session: $open_during"; return 1; }
	[ -z "$open_after" ] || { bad "a node process listens after the session: $open_after"; return 1; }
	[ "$s2" -gt "$s1" ] ||
		{ bad "the map of the compiling workload did not grow during the session ($s1, $s2 bytes)"; return 1; }

	# after kiln: the map stays as it is while the workload goes on compiling, and no port
	# opens again (node's own start request, pending until its event loop turns)
	r1=$(wc -l <"$D/newfn.out")
	a1=$(size "$map")
	sleep 3
	a2=$(size "$map")
	r2=$(wc -l <"$D/newfn.out")
	open_after=$(listening $ratio; listening $newfn)
	[ -z "$open_after" ] || { bad "a node process listens 3 s after the session: $open_after"; return 1; }
	[ "$r2" -gt "$r1" ] || { bad "the compiling workload stopped after kiln ($r1, $r2 rounds)"; return 1; }
	[ "$a1" -eq "$a2" ] ||
		{ bad "the map grew after kiln exited ($a1 -> $a2 bytes, rounds $r1 -> $r2)"; return 1; }
	kill -0 $ratio && kill -0 $newfn ||
		{ bad "a node process died: $(tail -n 3 "$D/ratio.err" "$D/newfn.err")"; return 1; }
	[ "$(stat -c %U "$map")" = nobody ] || { bad "the map of the process run as nobody is not its own"; return 1; }
	copy=/tmp/libkiln-nodeperf-$(printf %x "$(stat -c %s "$LIB")")-$(printf %x "$(stat -c %Y "$LIB")").so
	cmp -s "$copy" "$LIB" || { bad "the module was not copied into /tmp for nobody ($copy)"; return 1; }
	grep -q " $copy\$" "/proc/$newfn/maps" || { bad "the process run as nobody did not load $copy"; return 1; }

	# the same output as a run without kiln: the complete lines so far
	kill $newfn
	wait $newfn 2>/dev/null
	n=$(($(wc -l <"$D/newfn.out") - 1))
	[ "$n" -gt 10 ] || { bad "the compiling workload printed only $n rounds"; return 1; }
	"$NODE" "$W/node_newfn.js" 0 "$n" 0 >"$D/newfn.expected" 2>/dev/null
	cmp <(head -n "$n" "$D/newfn.out") "$D/newfn.expected" ||
		{ bad "the workload printed other lines under kiln than without"; return 1; }

	# the ratio workload's samples name its functions from the map (the attach itself
	# and GC take a few)
	python3 "$W/nodemapcheck.py" phase "$COL" 0.9 ||
		{ bad "the perf map does not name the ratio workload's functions"; return 1; }
	kill $ratio
	wait $ratio 2>/dev/null
	echo "$name: both attached, no port open, map stable after exit ($a1 bytes), $n rounds as without kiln"
}

_maps=()
trap 'rm -f "${_maps[@]}"; cleanup' EXIT
node_each check
