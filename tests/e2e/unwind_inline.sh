#!/usr/bin/env bash
# Native inlined functions from DWARF: tests/workloads/cinline.c built -O2 -g, whose
# mixer has inlA and inlB (7:3 of the work) inlined, shows them as inlA_[i] / inlB_[i]
# frames with their shares: with the binary's own debug info, with the debug info only in
# a separate file found by .gnu_debuglink, and built as C++. Without
# debug info there is nothing to show, and no _[i] frame is made up.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v g++ >/dev/null || skip "no g++"
cc -O2 -g -o "$T/cinline" "$W/cinline.c" || fail "failed to build cinline"
mkdir "$T/split" && cc -O2 -g -o "$T/split/cinline_dbg" "$W/cinline.c" &&
	(cd "$T/split" && objcopy --only-keep-debug cinline_dbg cinline_dbg.debug &&
	 strip -g cinline_dbg && objcopy --add-gnu-debuglink=cinline_dbg.debug cinline_dbg) ||
	fail "failed to split the debug info"
g++ -O2 -g -x c++ -o "$T/cxxinline" "$W/cinline.c" || fail "failed to build cxxinline"
cc -O2 -o "$T/cinline_nodbg" "$W/cinline.c" || fail "failed to build cinline_nodbg"
readelf -S "$T/split/cinline_dbg" | grep -q debug_info && fail "the split binary kept its debug info"

check() {	# EXE NAME_A NAME_B
	local exe=$1 comm
	comm=$(basename "$exe")
	"$exe" 60 &
	local pid=$!
	reap "$pid"
	sleep 0.2
	record -q -d 3 -f 499 --perf-mode smart --pids "$pid" --no-flamegraph >/dev/null
	kill "$pid"
	echo "== $comm"
	colcheck shares "$COL" "$comm" "$2_[i]=70" "$3_[i]=30" ||
		fail "$comm: the inlined functions are not shown with their shares"
	colcheck frac "$COL" "$comm" '^mixer(\((int)?\))?$' 0.95 || fail "$comm: mixer is missing"
}
check "$T/cinline" inlA inlB
check "$T/split/cinline_dbg" inlA inlB
check "$T/cxxinline" inlA inlB
"$T/cinline_nodbg" 60 &
pid=$!
reap "$pid"
sleep 0.2
record -q -d 2 -f 199 --perf-mode smart --pids "$pid" --no-flamegraph >/dev/null
grep -q '_\[i\]' "$COL" && fail "inlined frames without debug info: $(grep '_\[i\]' "$COL" | head -2)"
pass
