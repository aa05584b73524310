# Sourced by every end-to-end test. Gives $KILN, a scratch dir $T (removed at exit),
# and pass/fail/skip helpers that exit with perf's shell-test codes (0, 1, 2).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KILN=${KILN_BIN:-$ROOT/build/kiln}	# KILN_BIN: another build, e.g. build/kiln-san
T=$(mktemp -d /tmp/kiln-e2e.XXXXXX)
_cleanup_pids=()
cleanup() {
	for p in "${_cleanup_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# Kill this pid when the test exits.
reap() { _cleanup_pids+=("$@"); }
pass() { echo "PASS${1:+: $1}"; exit 0; }
fail() {
	echo "FAIL: $*"
	# What the agent counted, to tell a slow host from a wrong stack.
	[ -n "${COL:-}" ] && [ -f "$COL" ] && head -n 1 "$COL" | grep -oE \
		'"(samples|lost|unwind_errors|runtime_late_samples)": *[0-9]+' | tr '\n' ' ' && echo
	exit 1
}
skip() { echo "SKIP: $*"; exit 2; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root for perf_event_open"; }

# pprof_totals FILE: "type/unit total" per sample type of a pprof file, summed over the
# samples that `go tool pprof -raw` prints (the oracle of the pprof tests)
pprof_totals() {
	go tool pprof -raw "$1" 2>/dev/null | awk '
		/^Samples:/ { s = 1; getline; n = split($0, t, " "); next }
		/^Locations/ { s = 0 }
		s && /^ *-?[0-9]+( +-?[0-9]+)*:/ { sub(/:.*/, ""); for (i = 1; i <= n; i++) v[i] += $i }
		END { for (i = 1; i <= n; i++) printf "%s %d\n", t[i], v[i] }'
}

# go_at_least MINOR: prints a go command of version 1.MINOR or newer: the one on PATH when
# it is new enough, else the Go toolchain the Go module proxy serves as a module
# (golang.org/toolchain, fetched by whatever go there is, kept in build/toolchain). Fails
# (status 1) with the reason on stderr when neither can be had.
KILN_TOOLCHAIN=${KILN_TOOLCHAIN:-go1.26.8}
go_at_least() {
	local want=$1 v dir mod
	v=$(go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
	if [ -n "$v" ] && [ "$v" -ge "$want" ]; then
		command -v go
		return 0
	fi
	dir=$ROOT/build/toolchain/$KILN_TOOLCHAIN
	if [ ! -x "$dir/bin/go" ]; then
		command -v go >/dev/null || { echo "no go command to fetch a toolchain with" >&2; return 1; }
		mod=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json \
			"golang.org/toolchain@v0.0.1-$KILN_TOOLCHAIN.linux-amd64" 2>&1 |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
		[ -n "$mod" ] && [ -f "$mod/bin/go" ] ||
			{ echo "the Go module proxy did not give $KILN_TOOLCHAIN" >&2; return 1; }
		rm -rf "$dir.tmp" && mkdir -p "$(dirname "$dir")" && cp -r "$mod" "$dir.tmp" &&
			chmod -R u+w "$dir.tmp" && chmod +x "$dir.tmp"/bin/* "$dir.tmp"/pkg/tool/*/* &&
			mv "$dir.tmp" "$dir" || { echo "cannot unpack $KILN_TOOLCHAIN" >&2; return 1; }
	fi
	echo "$dir/bin/go"
}

# go_tool NAME MINOR: builds the Go program tests/tools/NAME (its module's dependencies
# from the Go module proxy) with a Go of version 1.MINOR or newer, once per source
# version, and prints the binary's path. Skips the test when it cannot be built here.
go_tool() {
	local name=$1 src=$ROOT/tests/tools/$1 go sum bin
	go=$(go_at_least "$2" 2>"$T/go.err") ||
		skip "no Go 1.$2+ to build $name: $(cat "$T/go.err")"
	sum=$(cat "$src"/go.mod "$src"/*.go | cksum | cut -d' ' -f1)
	bin=$ROOT/build/tools/$name-$sum
	if [ ! -x "$bin" ]; then
		rm -rf "$T/$name" && cp -r "$src" "$T/$name"
		(cd "$T/$name" && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" mod tidy &&
			GOTOOLCHAIN=local "$go" build -o "$name" .) >"$T/$name.build" 2>&1 ||
			skip "cannot build $name (Go module proxy?): $(tail -3 "$T/$name.build")"
		mkdir -p "$(dirname "$bin")" && mv "$T/$name/$name" "$bin"
	fi
	echo "$bin"
}
