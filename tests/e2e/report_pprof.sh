#!/usr/bin/env bash
# pprof both ways, with Go's own tools as the oracle: `go tool pprof` reads what kiln
# writes with the right counts; kiln reads what Go's runtime/pprof writes (a known-answer
# workload, tests/workloads/gopprof.go) with the same totals as `go tool pprof`; a round
# trip pprof → kiln → pprof keeps every stack; truncated or corrupt input fails cleanly.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
command -v go >/dev/null || skip "go is not installed"
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod HOME=${HOME:-/root}

# flat (self) value of a function in `go tool pprof -top` output
flat() { awk -v f="$2" '$NF == f { print $1 }' "$1"; }
cum() { awk -v f="$2" '$NF == f { print $4 }' "$1"; }

# 1. go tool pprof reads kiln's pprof
cat >"$T/app.col" <<'EOF'
# {"hostname": "box1", "frequency": 100}
0;;python3;main;handle (app.py:12)_[p];compress;deflate 300
0;;python3;main;handle (app.py:12)_[p];json_dumps (app.py:20)_[p] 120
0;c1;java;start_thread;java/lang/Thread.run_[j];com/acme/Codec.encode_[i] 250
0;;goapp;runtime.goexit;main.main;main.beta;deflate 50
EOF
"$KILN" report "$T/app.col" -f pprof -o "$T/app.pb.gz" || fail "report -f pprof failed"
go tool pprof -top -sample_index=samples "$T/app.pb.gz" >"$T/top.txt" 2>"$T/top.err" ||
	fail "go tool pprof cannot read our pprof: $(cat "$T/top.err")"
cat "$T/top.txt"
grep -q 'of 720 total' "$T/top.txt" || fail "go tool pprof total is not 720"
[ "$(flat "$T/top.txt" deflate)" = 350 ] || fail "deflate flat is not 350"
[ "$(flat "$T/top.txt" 'com/acme/Codec.encode_[i]')" = 250 ] || fail "annotated java frame lost"
# pprof shortens names for display; the raw profile holds them verbatim
go tool pprof -raw "$T/app.pb.gz" 2>/dev/null | grep -qF '(json_dumps (app.py:20)_[p])' ||
	fail "python frame name not kept verbatim"
# cpu time from the frequency: 720 samples at 100 Hz are 7.2 s
go tool pprof -top -sample_index=cpu -unit=ms "$T/app.pb.gz" 2>/dev/null | grep -q 'of 7200ms total' ||
	fail "cpu/nanoseconds values do not follow the frequency"

# 2. kiln reads a pprof written by Go's runtime/pprof
go build -o "$T/gopprof" "$ROOT/tests/workloads/gopprof.go" 2>"$T/build.err" ||
	fail "cannot build the Go workload: $(cat "$T/build.err")"
"$T/gopprof" "$T/cpu.pprof" 2000 || fail "Go workload failed"
go tool pprof -top -cum -sample_index=samples "$T/cpu.pprof" >"$T/gotop.txt" 2>/dev/null ||
	fail "go tool pprof cannot read Go's own profile"
"$KILN" report "$T/cpu.pprof" -f top -n 0 >"$T/ktop.txt" || fail "kiln cannot read Go's pprof"
cat "$T/ktop.txt"
go_total=$(grep -o 'of [0-9]* total' "$T/gotop.txt" | grep -o '[0-9]*')
k_total=$(awk '/^total:/ { print $2 }' "$T/ktop.txt")
[ -n "$go_total" ] && [ "$go_total" = "$k_total" ] || fail "totals differ: go $go_total, kiln $k_total"
for fn in main.alpha main.beta main.spin; do
	g=$(cum "$T/gotop.txt" "$fn")
	k=$(awk -v f="$fn" '$NF == f { print $3 }' "$T/ktop.txt")
	[ -n "$k" ] && [ "$g" = "$k" ] || fail "$fn: go tool pprof says $g inclusive, kiln $k"
done
# known answer: alpha does twice beta's work; its share of the two is 2/3 within 3 sigma
a=$(awk '$NF == "main.alpha" { print $3 }' "$T/ktop.txt")
b=$(awk '$NF == "main.beta" { print $3 }' "$T/ktop.txt")
awk -v a="$a" -v b="$b" 'BEGIN {
	n = a + b; p = 2 / 3; share = a / n; tol = 3 * sqrt(p * (1 - p) / n)
	printf "alpha share %.3f of %d samples, expected %.3f +- %.3f\n", share, n, p, tol
	exit !(n >= 30 && share > p - tol && share < p + tol) }' || fail "alpha/beta shares off"

# 3. round trip: Go's pprof → kiln pprof → the same stacks
"$KILN" report "$T/cpu.pprof" -f folded | sort >"$T/a.folded"
"$KILN" report "$T/cpu.pprof" -f pprof -o "$T/again.pb.gz" || fail "re-encoding failed"
"$KILN" report "$T/again.pb.gz" -f folded | sort >"$T/b.folded"
cmp -s "$T/a.folded" "$T/b.folded" || fail "round trip changed the stacks: $(diff "$T/a.folded" "$T/b.folded" | head)"
grep -q '^runtime.main;main.main;main.alpha;main.spin ' "$T/a.folded" || fail "Go stack not root first"

# 4. bad input: a clear error, exit 1, no crash
size=$(stat -c %s "$T/cpu.pprof")
head -c $((size / 2)) "$T/cpu.pprof" >"$T/cut.pprof"
if "$KILN" report "$T/cut.pprof" -f top 2>"$T/err"; then fail "truncated pprof accepted"; fi
grep -q "failed to parse '.*cut.pprof' as pprof: corrupt gzip data" "$T/err" || fail "unclear error: $(cat "$T/err")"
printf '\x0a\xff\xff\xff\xff\x0f garbage' >"$T/junk.pprof"
"$KILN" report "$T/junk.pprof" -f top 2>"$T/err"
[ $? -eq 1 ] || fail "junk pprof: wrong exit code"
grep -q "protobuf decoding failed" "$T/err" || fail "unclear error: $(cat "$T/err")"
pass
