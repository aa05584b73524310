#!/usr/bin/env bash
# A cgo call in a stripped Go binary: main.callC calls the C function cspin, which runs
# on the thread's g0 stack while the Go frames that called it stay on the goroutine's.
# Built by Debian's Go 1.19 and by the newest Go: >= 95% of the samples in C (those with
# runtime.asmcgocall) show the C frames above the Go caller, main.callC, and reach
# runtime.goexit.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v go >/dev/null || skip "no go toolchain"
command -v gcc >/dev/null || skip "no gcc for cgo"
export GOCACHE=$ROOT/build/gocache GOFLAGS=-mod=mod CGO_ENABLED=1 GOTOOLCHAIN=local

check() {	# NAME GO
	local name=$1
	(cd "$W/gocgo" && "$2" build -ldflags='-s -w' -o "$T/$name" .) ||
		fail "$2 failed to build gocgo"
	"$T/$name" 60 &
	local pid=$!
	reap "$pid"
	sleep 0.3
	record -q -d 3 -f 499 --perf-mode smart --pids "$pid" --no-flamegraph >/dev/null
	kill "$pid"
	read -r total good < <(awk '
		/^#/ { next }
		{
			count = $NF
			n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
			for (a = 4; a <= n && f[a] != "runtime.asmcgocall"; a++)
				;
			if (a > n)
				next
			total += count
			for (c = 4; c < a && f[c] != "main.callC"; c++)
				;
			for (u = n; u > a && f[u] ~ /_\[k\]$/; u--)
				;
			if (f[4] == "runtime.goexit" && c < a && a < u)	# C frames above
				good += count
		}
		END { print total + 0, good + 0 }' "$COL")
	echo "$name ($(go version "$T/$name" | sed 's/.*: //')): $good of $total samples in C" \
		"show main.callC below the C frames and reach runtime.goexit"
	grep -m 3 'runtime.asmcgocall' "$COL"
	[ "$total" -ge 100 ] || fail "$name: too few samples in C: $total"
	awk -v t="$total" -v g="$good" 'BEGIN { exit !(g >= 0.95 * t) }' ||
		fail "$name: $good of $total"
}
[ -x /usr/lib/go-1.19/bin/go ] && check gocgo119 /usr/lib/go-1.19/bin/go
check gocgonew go
pass
