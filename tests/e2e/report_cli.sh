#!/usr/bin/env bash
# kiln report's command line: every input format recognized (also on standard input),
# every output format written, conversions that round trip, --diff, and clear errors with
# exit code 1 for bad input and 2 for bad usage.
. "$(dirname "$0")/../lib.sh"

cat >"$T/a.col" <<'EOF2'
# {"hostname": "box1", "frequency": 11}
0;;python3;main;handle (app.py:12)_[p];deflate 30
0;c1;java;start_thread;Foo.bar_[j] 20
0;;goapp;runtime.goexit;main.main;main.alpha 10
EOF2
sed 1d "$T/a.col" | cut -d';' -f3- >"$T/a.folded"	# what folded output should be

# .col → col keeps everything, header included
"$KILN" report "$T/a.col" -f col >"$T/out.col" || fail "col output"
head -n 1 "$T/out.col" | grep -q '"hostname":"box1"' || fail "header lost: $(head -n 1 "$T/out.col")"
diff <(sed 1d "$T/a.col") <(sed 1d "$T/out.col") || fail "col output changed the stacks"
# .col → folded leaves out the index and container; folded in → the same out
"$KILN" report "$T/a.col" -f folded >"$T/out.folded" || fail "folded output"
cmp -s "$T/a.folded" "$T/out.folded" || fail "folded: $(diff "$T/a.folded" "$T/out.folded")"
"$KILN" report "$T/a.folded" -f folded | cmp -s "$T/a.folded" - || fail "folded round trip"
# standard input, and pprof → folded through a pipe
"$KILN" report - -f pprof <"$T/a.col" >"$T/a.pb.gz" || fail "pprof from stdin"
"$KILN" report - -f folded <"$T/a.pb.gz" | sort | cmp -s <(sort "$T/a.folded") - || fail "pprof round trip"
"$KILN" report "$T/a.col" -f top -n 2 >"$T/top.txt" || fail "top output"
cat "$T/top.txt"
[ "$(wc -l <"$T/top.txt")" -eq 4 ] || fail "top -n 2 printed $(wc -l <"$T/top.txt") lines"
grep -q '^total: 60$' "$T/top.txt" || fail "top total"
grep -Eq '^ +30 +50\.00% +30 +50\.00%  deflate$' "$T/top.txt" || fail "top first row"
# html by default, to a file
"$KILN" report "$T/a.col" -o "$T/a.html" || fail "html output"
grep -q 'KilnFlame.fromStacks' "$T/a.html" || fail "not a flamegraph page"
"$KILN" report --diff "$T/a.col" "$T/a.folded" -o "$T/d.html" || fail "--diff"
grep -q '"counts2":' "$T/d.html" || fail "diff page without the second profile"

# errors: exit 1 with a message naming the file
expect() {	# expect CODE PATTERN ARGS...
	local code=$1 pat=$2; shift 2
	"$KILN" report "$@" >"$T/o" 2>"$T/e"
	local rc=$?
	[ $rc -eq "$code" ] || fail "report $*: exit $rc, wanted $code ($(cat "$T/e"))"
	grep -q -e "$pat" "$T/e" || fail "report $*: message '$(cat "$T/e")' lacks '$pat'"
}
expect 1 "failed to read '$T/none': No such file" "$T/none"
printf 'hello\n' >"$T/bad.txt"
expect 1 "failed to recognize '$T/bad.txt'" "$T/bad.txt"
printf '# {"a": 1}\nmain;x notanumber\n' >"$T/bad.col"
expect 1 "failed to parse '$T/bad.col' as col: line 2: sample count" "$T/bad.col"
expect 1 "failed to open '/nonexistent/x.html'" "$T/a.col" -o /nonexistent/x.html
expect 2 "unknown format 'svg'" "$T/a.col" -f svg
expect 2 "needs one input file"
expect 2 "--diff needs two files" --diff "$T/a.col"
expect 2 "writes only html" --diff "$T/a.col" "$T/a.col" -f top
expect 2 "invalid row limit" "$T/a.col" -f top -n x
"$KILN" report --help | grep -q -- '--diff A B' || fail "help lacks --diff"
pass
