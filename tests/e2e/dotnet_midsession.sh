#!/usr/bin/env bash
# A CoreCLR process started while kiln already records (--dotnet-mode auto, no --pids):
# kiln sees it map libcoreclr.so, waits for its diagnostics socket, and its managed thread's
# samples from then on carry the Main;Run;Phase;Alpha|Beta frames (the shares are
# dotnet_ratio.sh's: here the start-up, before the socket, weighs on a short window).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$ROOT/tests/workloads/dotnet_env.sh"
"$KILN" record --help 2>&1 | grep -q -- '--dotnet-mode' || skip "kiln record has no --dotnet-mode"
dotnet_runtime
dotnet_build dotnet_ratio
"$KILN" record -o "$T/out" -d 9 -f 997 --no-flamegraph --dotnet-mode auto >"$T/record.log" 2>&1 &
kiln=$!
reap $kiln
sleep 1.5
"$DOTNET" "$WB/dotnet_ratio.exe" 20 >"$T/w.log" 2>&1 & pid=$!
reap $pid
wait $kiln || fail "kiln record failed: $(cat "$T/record.log")"
python3 "$W/dncheck.py" names "$COL" dotnet || {
	grep -v '^#' "$COL" | grep ';dotnet;' | sort -t' ' -k2 -nr | head -5 | cut -c1-300
	fail "the runtime started mid-session has wrong .NET stacks"
}
kill $pid 2>/dev/null
pass
