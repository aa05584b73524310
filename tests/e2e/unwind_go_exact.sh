#!/usr/bin/env bash
# Exact Go stacks from .gopclntab: a stripped Go binary (-ldflags='-s -w') whose hot leaf
# main.churn has no frame of its own, called by main.alpha and main.beta 7:3. Built by
# Debian's Go 1.19, by the newest Go on PATH, and by one more toolchain the Go module
# proxy serves (GOTOOLCHAIN, cached under build/; left out when it cannot be fetched).
# Each must show both callers with their shares within 3 sigma, main.mixer's two inlined
# callees (7:3) as frames main.inlA_[i] and main.inlB_[i] with theirs, and >= 99% of the
# process's samples must reach runtime.goexit, runtime.main or runtime.mstart (or
# runtime.mcall / morestack: the root of the scheduler's g0 stack, as in the runtime's
# own tracebacks).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v go >/dev/null || skip "no go toolchain"
EXTRA=${KILN_TEST_GOTOOLCHAIN:-go1.22.12}
export GOCACHE=$ROOT/build/gocache GOFLAGS=-mod=mod GOMODCACHE=$ROOT/build/gotoolchains

# build NAME GO [GOTOOLCHAIN [FLAGS...]]: tests/workloads/goleaf -> $WB/NAME, stripped
build() {
	local out=$WB/$1 go=$2 tc=${3:-local}
	shift 3 2>/dev/null || shift $#
	if [ ! -x "$out" ] || [ "$W/goleaf/main.go" -nt "$out" ]; then
		(cd "$W/goleaf" && GOTOOLCHAIN=$tc timeout 300 "$go" build "$@" \
			-ldflags='-s -w' -o "$out" .) || return 1
	fi
	file "$out" 2>/dev/null | grep -q 'not stripped' && fail "$1 is not stripped"
	return 0
}

check() {	# NAME MODE
	local name=$1 mode=$2 col
	"$WB/$name" 60 &
	local pid=$!
	reap "$pid"
	sleep 0.3
	record -q -d 4 -f 499 --perf-mode "$mode" --pids "$pid" --no-flamegraph >/dev/null
	kill "$pid"
	col=$T/$name.$mode.col
	cp "$COL" "$col"
	echo "== $name, $mode mode"
	grep -E ';main\.churn( |;)' "$col" >"$T/churn.col" || fail "$name: no samples in main.churn"
	colcheck frac "$T/churn.col" "$name" '^main\.(alpha|beta)$' 0.99 ||
		fail "$name ($mode): main.churn samples without their caller"
	colcheck shares "$col" "$name" main.alpha=70 main.beta=30 ||
		fail "$name ($mode): the callers' shares are wrong"
	colcheck shares "$col" "$name" 'main.inlA_[i]=70' 'main.inlB_[i]=30' ||
		fail "$name ($mode): the inlined functions are not shown with their shares"
	colcheck frac "$col" "$name" '^runtime\.(goexit|main|mstart|mcall|morestack)$' 0.99 ||
		fail "$name ($mode): stacks that do not reach the runtime's root"
}

built=()
if [ -x /usr/lib/go-1.19/bin/go ]; then
	build goleaf119 /usr/lib/go-1.19/bin/go || fail "go 1.19 failed to build goleaf"
	built+=(goleaf119)
fi
build goleafnew go || fail "go failed to build goleaf"
build goleafpie go local -buildmode=pie || fail "go failed to build goleaf as a PIE"
built+=(goleafnew goleafpie)
if build goleafx go "$EXTRA"; then
	built+=(goleafx)
else
	echo "note: toolchain $EXTRA could not be fetched: left out"
fi
for b in "${built[@]}"; do
	echo "$b: $(go version "$WB/$b" | sed 's/.*: //')"
	check "$b" smart
done
check goleafnew dwarf
pass "${built[*]}"
