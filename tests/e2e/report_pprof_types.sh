#!/usr/bin/env bash
# pprof with several sample types and labels, `go tool pprof -raw` as the oracle: a Go heap
# profile (four sample types, a space/bytes period) and a Go CPU profile with pprof labels
# go through `kiln report -f pprof` with every sample type, every per-type total, the
# period and the labels unchanged; an agent .col becomes pprof with the container and the
# process as labels.
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is not installed"
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod HOME=${HOME:-/root}

go build -o "$T/goheap" "$ROOT/tests/workloads/goheap.go" 2>"$T/build.err" ||
	fail "cannot build the Go workload: $(cat "$T/build.err")"
"$T/goheap" "$T/heap.pprof" "$T/cpu.pprof" || fail "Go workload failed"

# 1. heap: four sample types, their totals and the period survive
"$KILN" report "$T/heap.pprof" -f pprof -o "$T/heap.kiln.pb.gz" || fail "report -f pprof failed"
pprof_totals "$T/heap.pprof" >"$T/go.totals"
pprof_totals "$T/heap.kiln.pb.gz" >"$T/kiln.totals"
cat "$T/kiln.totals"
[ "$(awk '{ print $1 }' "$T/go.totals" | tr '\n' ' ')" = \
  "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes " ] ||
	fail "unexpected Go heap profile: $(cat "$T/go.totals")"
cmp -s "$T/go.totals" "$T/kiln.totals" ||
	fail "sample types or totals changed: $(diff "$T/go.totals" "$T/kiln.totals")"
# main.keep kept 40 blocks of 64 KiB: at least that much is in use
keep=$(go tool pprof -top -sample_index=inuse_space -unit=B "$T/heap.kiln.pb.gz" 2>/dev/null |
	awk '$NF == "main.keep" { sub(/B$/, "", $4); print $4 }')
[ -n "$keep" ] && [ "$keep" -ge $((40 * 65536)) ] || fail "main.keep in-use space is '$keep'"
go tool pprof -raw "$T/heap.kiln.pb.gz" 2>/dev/null | grep -q '^PeriodType: space bytes' ||
	fail "heap period type lost"

# 2. CPU with labels: both sample types, the totals and the worker labels survive
"$KILN" report "$T/cpu.pprof" -f pprof -o "$T/cpu.kiln.pb.gz" || fail "report -f pprof failed"
pprof_totals "$T/cpu.pprof" >"$T/go.totals"
pprof_totals "$T/cpu.kiln.pb.gz" >"$T/kiln.totals"
cat "$T/kiln.totals"
cmp -s "$T/go.totals" "$T/kiln.totals" ||
	fail "cpu types or totals changed: $(diff "$T/go.totals" "$T/kiln.totals")"
go tool pprof -raw "$T/cpu.kiln.pb.gz" 2>/dev/null >"$T/cpu.raw"
for w in a b; do
	g=$(go tool pprof -raw "$T/cpu.pprof" 2>/dev/null | grep -c "worker:\[$w\]")
	k=$(grep -c "worker:\[$w\]" "$T/cpu.raw")
	[ "$g" -gt 0 ] && [ "$k" -gt 0 ] || fail "label worker=$w lost (go $g samples, kiln $k)"
done
# the samples of worker b, as go tool pprof selects them by label in both
focused() {
	go tool pprof -top -tagfocus=worker=b -sample_index=samples "$1" 2>/dev/null |
		sed -n 's/.*accounting for \([0-9]*\),.*/\1/p'
}
g=$(focused "$T/cpu.pprof") k=$(focused "$T/cpu.kiln.pb.gz")
echo "worker=b: go $g samples, kiln $k"
[ -n "$g" ] && [ "$g" -gt 0 ] && [ "$g" = "$k" ] || fail "worker=b selects go '$g', kiln '$k'"

# 3. an agent .col: the prefix becomes labels, the frames stay as before
cat >"$T/app.col" <<'COL'
# {"hostname": "box1", "frequency": 100}
0;web;python3;main;work 30
0;;nginx;main;poll 10
COL
"$KILN" report "$T/app.col" -f pprof -o "$T/col.pb.gz" || fail "report .col -f pprof failed"
go tool pprof -raw "$T/col.pb.gz" 2>/dev/null >"$T/col.raw"
grep -q 'container:\[web\]' "$T/col.raw" || fail "container label missing"
grep -q 'process:\[nginx\]' "$T/col.raw" || fail "process label missing"
go tool pprof -top -sample_index=samples -tagfocus=process=python3 "$T/col.pb.gz" 2>/dev/null |
	grep -q 'accounting for 30, 75.00% of 40 total' ||
	fail "process label does not select python3's 30 samples"
pass
