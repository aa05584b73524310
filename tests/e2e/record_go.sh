#!/usr/bin/env bash
# A stripped Go binary (-ldflags='-s -w'): its functions are named from .gopclntab.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v go >/dev/null || skip "no go toolchain"
if [ ! -x "$WB/gospin" ] || [ "$W/gospin/main.go" -nt "$WB/gospin" ]; then
	(cd "$W/gospin" && GOCACHE=$ROOT/build/gocache GOFLAGS=-mod=mod go build \
		-ldflags='-s -w' -o "$WB/gospin" .) || fail "go build failed"
fi
file "$WB/gospin" 2>/dev/null | grep -q 'not stripped' && fail "the Go binary is not stripped"
"$WB/gospin" 30 & reap $!
sleep 0.3
record -d 3 -f 199 --perf-mode fp --no-flamegraph
colcheck frac "$COL" gospin '^main\.alpha$' 0.4 || fail "main.alpha is not named"
colcheck frac "$COL" gospin '^main\.beta$' 0.1 || fail "main.beta is not named"
colcheck frac "$COL" gospin '^runtime\.main$' 0.9 || fail "runtime.main missing under the leaves"
pass
