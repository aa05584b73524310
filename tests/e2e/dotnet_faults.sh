#!/usr/bin/env bash
# .NET processes kiln cannot or can no longer profile, under --dotnet-mode auto: a
# CoreCLR with its diagnostics server off (COMPlus_EnableDiagnostics=0) and a Mono
# process get a [Profiling skipped: ...] reason that says why; a CoreCLR that exits in the
# middle of the session ends its stream without harm: kiln exits 0 in bounded time and
# the process's samples before its exit still carry _[net] frames.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$ROOT/tests/workloads/dotnet_env.sh"
"$KILN" record --help 2>&1 | grep -q -- '--dotnet-mode' || skip "kiln record has no --dotnet-mode"
dotnet_runtime
dotnet_build dotnet_ratio
COMPlus_EnableDiagnostics=0 "$DOTNET" "$WB/dotnet_ratio.exe" 30 >/dev/null 2>&1 & off=$!
reap $off
pids=$off
if command -v mono >/dev/null; then
	mono "$WB/dotnet_ratio.exe" 30 >/dev/null 2>&1 & mono=$!
	reap $mono
	pids=$pids,$mono
fi
"$DOTNET" "$WB/dotnet_ratio.exe" 3 >/dev/null 2>&1 & short=$!
reap $short
wait_dotnet_ready $short
sleep 1
record -d 6 -f 499 --no-flamegraph --dotnet-mode auto --pids "$pids,$short" >/dev/null
grep -q "^[0-9]*;;dotnet;\[Profiling skipped: dotnet: no diagnostics socket" "$COL" ||
	fail "no skip reason for the CoreCLR without a diagnostics server"
if [ -n "${mono:-}" ]; then
	grep -q "^[0-9]*;;mono;\[Profiling skipped: mono: .*buffered" "$COL" ||
		fail "no skip reason for the Mono process"
fi
grep -q 'Ratio.Work.Run_\[net\]' "$COL" || fail "the process that exited mid-session has no .NET frames"
kill -0 $off 2>/dev/null || fail "the CoreCLR without diagnostics died"
pass
