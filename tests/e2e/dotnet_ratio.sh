#!/usr/bin/env bash
# The known-answer C# workload (Alpha/Beta 7:3 through Main > Run > Phase) on CoreCLR 3.1
# under --dotnet-mode auto: >= 95% of the managed thread's samples carry _[net] frames in
# the right chain, Alpha's share is within max(3 points, 3 sigma); after kiln exits the
# EventPipe session is closed (the runtime holds no more sockets than before kiln came),
# and the workload still runs. Then --dotnet-mode disabled: no _[net] frame at all.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$ROOT/tests/workloads/dotnet_env.sh"
"$KILN" record --help 2>&1 | grep -q -- '--dotnet-mode' || skip "kiln record has no --dotnet-mode"
dotnet_runtime
dotnet_build dotnet_ratio
"$DOTNET" "$WB/dotnet_ratio.exe" 40 >"$T/w.log" 2>&1 & pid=$!
reap $pid
wait_dotnet_ready $pid
sleep 0.5
before=$(dotnet_sockets $pid)
record -d 6 -f 997 --no-flamegraph --dotnet-mode auto --pids "$pid" >/dev/null
python3 "$W/dncheck.py" ratio "$COL" dotnet || {
	grep -v '^#' "$COL" | sort -t' ' -k2 -nr | head -5 | cut -c1-300
	fail "wrong .NET stacks"
}
grep -q '"dotnet_sessions":1' "$COL" || fail "the header does not count one session"
# the runtime closes a session's stream once it has stopped it
for _ in $(seq 50); do
	[ "$(dotnet_sockets $pid)" -le "$before" ] && break
	sleep 0.1
done
after=$(dotnet_sockets $pid)
echo "== sockets of the runtime: $before before kiln, $after after"
[ "$after" -le "$before" ] || fail "the EventPipe session is still open after kiln exited"
kill -0 $pid 2>/dev/null || fail "the workload died"
rm -rf "$T/out"
record -d 2 -f 997 --no-flamegraph --dotnet-mode disabled --pids "$pid" >/dev/null
python3 "$W/dncheck.py" none "$COL" || fail "--dotnet-mode disabled still names .NET frames"
kill $pid 2>/dev/null
pass
