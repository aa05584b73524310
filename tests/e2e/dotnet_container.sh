#!/usr/bin/env bash
# A CoreCLR process in its own mount and PID namespaces with a private /tmp (what a
# container gives): kiln finds its diagnostics socket through /proc/PID/root and the
# namespace pid, and the managed stacks come back on the host tids (the 7:3 check holds).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$ROOT/tests/workloads/dotnet_env.sh"
"$KILN" record --help 2>&1 | grep -q -- '--dotnet-mode' || skip "kiln record has no --dotnet-mode"
command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
err=$(unshare --mount --pid --fork --mount-proc true 2>&1) || skip "unshare cannot make namespaces: $err"
case $ROOT in /tmp/*) skip "the checkout is under /tmp, which the namespace replaces" ;; esac
dotnet_runtime
dotnet_build dotnet_ratio
unshare --mount --pid --fork --mount-proc sh -c \
	"mount -t tmpfs none /tmp && exec '$DOTNET' '$WB/dotnet_ratio.exe' 30" >"$T/w.log" 2>&1 &
reap $!
pid=""
for _ in $(seq 100); do
	for p in $(pgrep -f "$WB/dotnet_ratio.exe 30"); do
		[ "$(awk '/^NSpid/{print NF}' "/proc/$p/status" 2>/dev/null)" = 3 ] && pid=$p
	done
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || fail "the namespaced runtime did not start: $(cat "$T/w.log")"
reap "$pid"
nspid=$(awk '/^NSpid/{print $NF}' "/proc/$pid/status")
for _ in $(seq 100); do
	ls "/proc/$pid/root/tmp/dotnet-diagnostic-$nspid-"*-socket >/dev/null 2>&1 && break
	sleep 0.1
done
ls "/proc/$pid/root/tmp/dotnet-diagnostic-$nspid-"*-socket >/dev/null 2>&1 ||
	fail "no diagnostics socket in the namespace's /tmp"
ls /tmp/dotnet-diagnostic-"$nspid"-*-socket >/dev/null 2>&1 && [ "$nspid" != "$pid" ] &&
	fail "the socket is in the host's /tmp: the namespace did not hold"
sleep 0.5
record -d 5 -f 997 --no-flamegraph --dotnet-mode auto --pids "$pid" >/dev/null
python3 "$W/dncheck.py" ratio "$COL" dotnet || {
	grep -v '^#' "$COL" | sort -t' ' -k2 -nr | head -5 | cut -c1-300
	fail "wrong .NET stacks for the namespaced process"
}
kill "$pid" 2>/dev/null
pass "nspid $nspid, host pid $pid"
