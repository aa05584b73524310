#!/usr/bin/env bash
# --nodejs-mode attach-maps on a node in its own network, mount and PID namespaces with a
# private /tmp (what a container gives): kiln signals it, reaches its inspector on the
# namespace's 127.0.0.1 (setns), copies libkiln-nodeperf.so into its /tmp, and reads the
# map it writes there under its namespace pid; the host's /tmp gets nothing, and no port
# stays open in the namespace.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
node_pick	# the system node when kiln reads its V8, else one from build/node (KILN_NODE)
node_maps_lib
command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
command -v nsenter >/dev/null && command -v ip >/dev/null ||
	fail "no nsenter (util-linux) or ip (iproute2)"
err=$(unshare --net --mount --pid --fork --mount-proc sh -c 'ip link set lo up' 2>&1) || {
	where=""
	[ "$(stat -c %d:%i /)" != "$(stat -c %d:%i /proc/1/root/. 2>/dev/null)" ] && where="inside a chroot: "
	skip "${where}unshare cannot make node's network, mount and PID namespaces: $err"
}
# --no-use-osr: see node_attach_maps.sh
unshare --net --mount --pid --fork --mount-proc sh -c \
	"ip link set lo up && mount -t tmpfs none /tmp && exec '$NODE' --no-use-osr '$W/node_ratio.js' 60 10 '$T'" \
	>"$T/ratio.out" 2>&1 &
reap $!
pid=""
for _ in $(seq 100); do
	for p in $(pgrep -f "node_ratio.js 60 10 $T"); do	# $T: this test's, no other's
		[ "$(awk '/^NSpid/{print NF}' "/proc/$p/status" 2>/dev/null)" = 3 ] &&
			[ "$(readlink "/proc/$p/exe")" = "$(node_real "$NODE")" ] && pid=$p
	done
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || fail "the namespaced node did not start: $(cat "$T/ratio.out")"
nspid=$(awk '/^NSpid/{print $NF}' "/proc/$pid/status")
sleep 1	# past start-up: phase is optimized
record -d 5 -f 199 --no-flamegraph --nodejs-mode attach-maps --pids "$pid" >/dev/null
grep -q "pid $pid writes /tmp/perf-$nspid.map" "$T/record.log" ||
	fail "kiln did not attach: $(cat "$T/record.log")"
ls "/proc/$pid/root/tmp/" | grep -q '^libkiln-nodeperf-.*\.so$' || fail "the module was not copied into node's /tmp"
[ -s "/proc/$pid/root/tmp/perf-$nspid.map" ] || fail "no map in node's /tmp"
[ "$nspid" != "$pid" ] && [ -e "/tmp/perf-$nspid.map" ] && [ "$(stat -c %Y "/tmp/perf-$nspid.map")" -ge "$(stat -c %Y "$T")" ] &&
	fail "a map was written into the host's /tmp"
open=$(nsenter -t "$pid" -n ss -ltnpH)
[ -z "$open" ] || fail "something listens in node's network namespace after the session: $open"
python3 "$W/nodemapcheck.py" phase "$COL" 0.9 || fail "the perf map does not name the ratio workload's functions"
kill -0 "$pid" || fail "node died"
pass "nspid $nspid, host pid $pid"
