#!/usr/bin/env bash
# bench/peers/install.sh [PEER...] — installs the profilers bench/peers.sh compares kiln
# with, each from its own registry with its ordinary client, into build/peers/ (never
# committed; a second run finds them there and returns at once):
#   py-spy          PyPI wheel (pip --target)          build/peers/pyspy/bin/py-spy
#   async-profiler  Maven Central jar, its linux-x64 .so build/peers/async-profiler/libasyncProfiler.so
#   rbspy           Rust's crate registry (cargo install; slow once) build/peers/rbspy/bin/rbspy (where
#                   bench/ruby.sh looks too)
#   otel            the OpenTelemetry eBPF profiler from the Go module proxy (go's default
#                   GOPROXY), and
#                   bench/peers/sink (its gRPC sink), built in build/peers/otel-build
#   perf            Debian's linux-perf, already on the machine (scripts/deps)
# Prints one line per peer: "peer NAME ok PATH" or "peer NAME unavailable: WHY".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$ROOT/build/peers
mkdir -p "$P/bin" "$P/logs"
PYSPY_VERSION=${PYSPY_VERSION:-0.4.3}
ASYNC_VERSION=${ASYNC_VERSION:-4.2}
RBSPY_VERSION=${RBSPY_VERSION:-0.55.0}
OTEL_VERSION=${OTEL_VERSION:-v0.0.202547}

ok() { echo "peer $1 ok $2"; }
no() { echo "peer $1 unavailable: $2"; }

pyspy() {
	local bin=$P/pyspy/bin/py-spy
	[ -x "$bin" ] || timeout 600 pip3 install -q --disable-pip-version-check --target "$P/pyspy" \
		"py-spy==$PYSPY_VERSION" >"$P/logs/pyspy.log" 2>&1
	[ -x "$bin" ] && ok py-spy "$bin" || no py-spy "pip install failed (build/peers/logs/pyspy.log)"
}

asyncprof() {
	local so=$P/async-profiler/libasyncProfiler.so jar
	jar=~/.m2/repository/tools/profiler/async-profiler/$ASYNC_VERSION/async-profiler-$ASYNC_VERSION.jar
	if [ ! -f "$so" ]; then
		[ -f "$jar" ] || timeout 600 mvn -q -B dependency:get \
			"-Dartifact=tools.profiler:async-profiler:$ASYNC_VERSION" >"$P/logs/async.log" 2>&1
		mkdir -p "$P/async-profiler"
		[ -f "$jar" ] && unzip -o -q -j "$jar" linux-x64/libasyncProfiler.so -d "$P/async-profiler"
	fi
	[ -f "$so" ] && ok async-profiler "$so" ||
		no async-profiler "maven could not fetch tools.profiler:async-profiler:$ASYNC_VERSION"
}

rbspy() {
	local bin=$P/rbspy/bin/rbspy
	[ -x "$bin" ] || CARGO_TARGET_DIR=$P/cargo-target timeout 3000 nice cargo install -q --locked \
		--version "$RBSPY_VERSION" --root "$P/rbspy" rbspy >"$P/logs/rbspy.log" 2>&1
	[ -x "$bin" ] && ok rbspy "$bin" || no rbspy "cargo install failed (build/peers/logs/rbspy.log)"
}

# The profiler raises RLIMIT_MEMLOCK to infinity before it loads its programs, and stops
# when it may not (no CAP_SYS_RESOURCE, as in this sandbox). Kernels since 5.11 charge
# eBPF memory to the cgroup and ignore that limit; there the raise is only a formality. On
# such a kernel, when the raise is refused, build from a copy of the module in which a
# refused raise is a no-op. The change is made here, to a copy under build/peers/.
memlock_patch() {	# build dir
	local src dst=$1/otel-src
	[ "$(ulimit -Hl)" = unlimited ] && return 0
	local k
	k=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
	[ "$k" -ge 5011 ] || return 0	# an old kernel needs the limit: leave the build as it is
	prlimit --pid $$ --memlock=unlimited:unlimited 2>/dev/null && return 0
	src=$(cd "$1" && go list -m -f '{{.Dir}}' go.opentelemetry.io/ebpf-profiler) || return 1
	rm -rf "$dst"
	cp -r "$src" "$dst" && chmod -R u+w "$dst"
	python3 - "$dst/rlimit/rlimit.go" <<'PYEOF' || return 1
import sys
p = sys.argv[1]
s = open(p).read()
old = 'return nil, fmt.Errorf("failed to set temporary rlimit: %w", err)'
if old not in s:
    sys.exit("rlimit.go changed: no memlock patch")
s = s.replace(old, 'if err == unix.EPERM {\n\t\t\treturn func() {}, nil // memcg-charged eBPF memory (bench/peers)\n\t\t}\n\t\t' + old)
open(p, "w").write(s)
PYEOF
	(cd "$1" && go mod edit -replace "go.opentelemetry.io/ebpf-profiler=./otel-src")
}

# The profiler's own go.mod is not for building binaries, and the proxy serves its
# versions but not their list nor its checksum-database entry: build it as a dependency
# of a throw-away module, pinned, and the sink in that module (same pdata version).
otel() {
	local b=$P/otel-build
	if [ ! -x "$P/bin/ebpf-profiler" ] || [ ! -x "$P/bin/otel-sink" ] ||
	   [ "$0" -nt "$P/bin/ebpf-profiler" ] ||
	   [ "$ROOT/bench/peers/sink/main.go" -nt "$P/bin/otel-sink" ]; then
		mkdir -p "$b/sink"
		cp "$ROOT/bench/peers/sink/main.go" "$b/sink/main.go"
		(cd "$b" && { [ -f go.mod ] || go mod init peersbuild; } &&
		 export GONOSUMDB=go.opentelemetry.io/ebpf-profiler GOFLAGS=-mod=mod &&
		 go get "go.opentelemetry.io/ebpf-profiler@$OTEL_VERSION" &&
		 memlock_patch "$b" &&
		 nice go build -o "$P/bin/ebpf-profiler" go.opentelemetry.io/ebpf-profiler &&
		 nice go build -o "$P/bin/otel-sink" ./sink) >"$P/logs/otel.log" 2>&1
	fi
	if [ -x "$P/bin/ebpf-profiler" ] && [ -x "$P/bin/otel-sink" ]; then
		ok otel "$P/bin/ebpf-profiler"
	else
		no otel "go build failed (build/peers/logs/otel.log)"
	fi
}

perfpeer() {
	command -v perf >/dev/null && ok perf "$(command -v perf)" || no perf "linux-perf is not installed"
}

for peer in ${@:-py-spy async-profiler rbspy otel perf}; do
	case $peer in
	py-spy) pyspy ;;
	async-profiler) asyncprof ;;
	rbspy) rbspy ;;
	otel) otel ;;
	perf) perfpeer ;;
	*) no "$peer" "unknown peer" ;;
	esac
done
