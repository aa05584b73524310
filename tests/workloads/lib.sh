# Sourced by tests/e2e/record_*.sh after tests/lib.sh: builds the known-answer workloads
# (cached in build/workloads) and runs kiln record into $T/out.
W=$ROOT/tests/workloads
WB=$ROOT/build/workloads
mkdir -p "$WB"
need_root

# build_c NAME [CFLAGS...]: tests/workloads/NAME.c -> $WB/NAME, with frame pointers in
# every function (leaves too) and no tail calls, so that an fp walk sees every caller.
build_c() {
	local name=$1
	shift
	if [ ! -x "$WB/$name" ] || [ "$W/$name.c" -nt "$WB/$name" ]; then
		cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
			-fno-optimize-sibling-calls -pthread "$@" -o "$WB/$name" "$W/$name.c" ||
			fail "failed to build $name"
	fi
}

# record ARGS...: kiln record -o $T/out ARGS; fails the test when kiln fails.
record() {
	"$KILN" record -o "$T/out" "$@" >"$T/record.log" 2>&1 ||
		fail "kiln record $* failed: $(cat "$T/record.log")"
	cat "$T/record.log"
}

colcheck() { python3 "$W/colcheck.py" "$@"; }
COL=$T/out/last_profile.col
