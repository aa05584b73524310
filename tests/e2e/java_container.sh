#!/usr/bin/env bash
# A JVM in its own mount and PID namespaces with a private /tmp (what a container gives):
# the agent is copied into the JVM's /tmp, the attach goes through /proc/PID/root and the
# namespace pid, and the stacks come back with the threads mapped to host tids.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
command -v unshare > /dev/null || skip "unshare (util-linux) not installed"
# In a chroot whose root is not a mount point, unshare cannot make / private
err=$(unshare --mount --pid --fork --mount-proc true 2>&1) || {
	where=""
	[ "$(stat -c %d:%i /)" != "$(stat -c %d:%i /proc/1/root/. 2>/dev/null)" ] && where="inside a chroot: "
	skip "${where}unshare cannot make the JVM's mount and PID namespaces: $err"
}
# the classes must stay reachable once /tmp is replaced inside the namespace, also when
# the checkout itself lives under /tmp
classes=$(mktemp -d /var/tmp/kiln-java-classes.XXXXXX)
trap 'cleanup; rm -rf "$classes"' EXIT
cp "$T"/classes/*.class "$classes/"
(cd "$classes" && exec unshare --mount --pid --fork --mount-proc sh -c \
	"mount -t tmpfs none /tmp && $JDK17/bin/java -cp . JavaRatio 8; echo rc=\$?") \
	> "$T/out" 2>&1 &
reap $!
pid=""
for _ in $(seq 100); do
	for p in $(pgrep -x java); do
		grep -q "^NSpid:.*[[:space:]]" "/proc/$p/status" 2>/dev/null &&
			[ "$(awk '/^NSpid/{print NF}' "/proc/$p/status")" -gt 2 ] &&
			[ "$(readlink "/proc/$p/cwd")" = "$classes" ] && pid=$p
	done
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || fail "the namespaced JVM did not start: $(cat "$T/out")"
nspid=$(awk '/^NSpid/{print $NF}' "/proc/$pid/status")
wait_jvm_ready "$pid" || fail "JVM not ready"
probe --pid "$pid" --seconds 3 --threads > "$T/probe" 2>&1 || fail "probe failed: $(cat "$T/probe")"
grep "^jvm $pid " "$T/probe" || fail "namespaced JVM not profiled: $(cat "$T/probe")"
ls "/proc/$pid/root/tmp/" | grep -q '^libkiln-jvm-.*\.so$' || fail "agent not copied into the JVM's /tmp"
[ -e "/tmp/kiln-jvm-$nspid.col" ] && [ "$nspid" != "$pid" ] && fail "agent files leaked into the host /tmp"
grep -q "^$pid;\[kiln-busy-worker tid=[0-9]*\];java.lang.Thread.run_\[.\];JavaRatio" "$T/probe" ||
	fail "no Java stacks: $(head -3 "$T/probe")"
host_tids=$(awk '/^jvm/{for (i = 12; i <= NF; i++) print $i}' "$T/probe")
for t in $host_tids; do
	[ -d "/proc/$pid/task/$t" ] || fail "tid $t is not a host tid of $pid"
done
for _ in $(seq 100); do grep -q '^rc=' "$T/out" && break; sleep 0.1; done
grep -qx 'rc=7' "$T/out" || fail "JVM exit changed: $(cat "$T/out")"
pass "nspid $nspid, host pid $pid"
