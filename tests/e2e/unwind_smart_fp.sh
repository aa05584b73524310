#!/usr/bin/env bash
# smart mode still unwinds what frame pointers serve best: a Go program (frame pointers,
# no .eh_frame) and a -fno-omit-frame-pointer C program, both reaching their main.
. "$(dirname "$0")/../lib.sh"
need_root
"$KILN" record --help 2>&1 | grep -q -- '--perf-mode' || skip "kiln record has no --perf-mode yet"
command -v go >/dev/null || skip "no go toolchain"
cc -O2 -fno-omit-frame-pointer -o "$T/unwind_fp" "$ROOT/tests/workloads/unwind_deep.c" ||
	fail "failed to build the C workload"
(cd "$ROOT/tests/workloads" && GOCACHE=${GOCACHE:-$T/gocache} GO111MODULE=off \
	go build -o "$T/unwind_go" unwind_go.go) || fail "failed to build the Go workload"
"$T/unwind_fp" 60 &
cpid=$!
reap "$cpid"
"$T/unwind_go" 60 &
gpid=$!
reap "$gpid"
"$KILN" record --perf-mode smart -f 199 -d 10 --pids "$cpid,$gpid" --no-flamegraph \
	-o "$T/out" >"$T/log" 2>&1 || fail "kiln record failed: $(tail -n 3 "$T/log")"
col=$T/out/last_profile.col
grep -v '^#' "$col" | grep ';unwind_fp;' >"$T/c.col"
grep -v '^#' "$col" | grep ';unwind_go;' >"$T/go.col"
read -r ct cc_ _ _ < <(awk -v need=main -f "$ROOT/tests/workloads/unwind_check.awk" "$T/c.col")
# Go's runtime threads (sysmon, GC) run outside main.main: judge the busy goroutine's
# samples, those holding main.leaf, which must all unwind to main.main
read -r gt gc _ _ < <(awk -v need=main.main -v only=main.leaf \
	-f "$ROOT/tests/workloads/unwind_check.awk" "$T/go.col")
echo "C (frame pointers): $cc_ of $ct reach main; Go: $gc of $gt in main.leaf reach main.main"
[ "$ct" -ge 100 ] && [ "$gt" -ge 100 ] || fail "too few samples: C $ct, Go $gt"
awk -v t="$ct" -v c="$cc_" 'BEGIN { exit !(c >= 0.99 * t) }' || fail "C: $cc_ of $ct reach main"
awk -v t="$gt" -v c="$gc" 'BEGIN { exit !(c >= 0.99 * t) }' || fail "Go: $gc of $gt reach main.main"
pass
