# Sourced by the .NET end-to-end tests and bench/dotnet.sh (after tests/lib.sh and
# tests/workloads/lib.sh): a CoreCLR runtime and the known-answer workload.
#
# The runtime is .NET Core 3.1 from the dotnetcore2 wheel on PyPI (the one CoreCLR the
# package registries this project uses carry), fetched once with pip and unpacked under
# build/dotnet; nothing of it is committed. The workload is compiled by Debian's mcs
# (mono-mcs) and runs on both CoreCLR (with a runtimeconfig.json) and Mono.
DOTNET_WHEEL_VERSION=3.1.23
DOTNET_HOME=$ROOT/build/dotnet/$DOTNET_WHEEL_VERSION
DOTNET=$DOTNET_HOME/dotnetcore2/bin/dotnet

# Fetches and unpacks the runtime when it is not there yet; skips the test when it
# cannot be had.
dotnet_runtime() {
	if [ ! -x "$DOTNET" ]; then
		local dl=$ROOT/build/dotnet/dl
		mkdir -p "$dl"
		timeout 300 python3 -m pip download -q --no-deps -d "$dl" \
			"dotnetcore2==$DOTNET_WHEEL_VERSION" >/dev/null 2>&1 ||
			skip "cannot fetch the dotnetcore2 wheel (a .NET Core runtime)"
		rm -rf "$DOTNET_HOME.tmp"
		python3 -m zipfile -e "$dl"/dotnetcore2-"$DOTNET_WHEEL_VERSION"-*.whl \
			"$DOTNET_HOME.tmp" || fail "cannot unpack the dotnetcore2 wheel"
		chmod +x "$DOTNET_HOME.tmp/dotnetcore2/bin/dotnet"
		mv "$DOTNET_HOME.tmp" "$DOTNET_HOME"
	fi
	"$DOTNET" --list-runtimes >/dev/null 2>&1 || skip "the .NET Core runtime does not run here"
}

# Compiles tests/workloads/NAME.cs into $WB/NAME.exe with its runtimeconfig.json.
dotnet_build() {
	local name=$1
	command -v mcs >/dev/null || skip "no mcs (Debian's mono-mcs)"
	if [ ! -f "$WB/$name.exe" ] || [ "$W/$name.cs" -nt "$WB/$name.exe" ]; then
		mcs -optimize+ -out:"$WB/$name.exe" "$W/$name.cs" >/dev/null || fail "mcs failed on $name.cs"
	fi
	# invariant globalization: the runtime needs no libicu
	cat >"$WB/$name.runtimeconfig.json" <<-'JSON'
	{"runtimeOptions":{"tfm":"netcoreapp3.1",
	  "framework":{"name":"Microsoft.NETCore.App","version":"3.1.0"},
	  "configProperties":{"System.Globalization.Invariant":true}}}
	JSON
}

# Waits (at most 10 s) until pid's diagnostics socket is there.
wait_dotnet_ready() {
	local pid=$1 i
	for i in $(seq 100); do
		ls /tmp/dotnet-diagnostic-"$pid"-*-socket >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || fail "the .NET workload exited early"
		sleep 0.1
	done
	fail "no diagnostics socket for process $pid"
}

# The number of sockets process pid holds open.
dotnet_sockets() { find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
