#!/usr/bin/env bash
# `kiln report` on real `perf record` / `perf script` output: recognized as perf script,
# collapsed like stackcollapse-perf.pl (process name first, offsets stripped, kernel frames
# annotated, each sample weighted by its period), with perf report itself as the oracle
# for the totals per process; the other perf script field layouts parse too.
. "$(dirname "$0")/../lib.sh"
need_root
command -v perf >/dev/null || skip "perf is not installed"

perf record -q -F 499 -g -o "$T/perf.data" -- \
	sh -c 'head -c 30000000 /dev/urandom | gzip -1 > /dev/null' 2>"$T/rec.err" ||
	skip "perf record failed: $(tail -n 1 "$T/rec.err")"
perf script -i "$T/perf.data" >"$T/perf.txt" 2>/dev/null || fail "perf script failed"
samples=$(grep -c '^[^[:space:]#]' "$T/perf.txt")
[ "$samples" -gt 20 ] || skip "too few samples ($samples)"

"$KILN" report "$T/perf.txt" -f folded >"$T/k.folded" || fail "report of perf script failed"
head -n 3 "$T/k.folded"
# every sample is in, under its process name, weighted by its period: per-process totals
# are exactly what perf report computes from perf.data
perf report -i "$T/perf.data" --stdio --sort comm -F period,comm -g none 2>/dev/null |
	awk '!/^#/ && NF == 2 { printf "%s %s\n", $2, $1 }' | sort >"$T/perf.comm"
awk '{ n = split($0, f, ";"); sub(/.* /, "", f[n]); s[f[1]] += $NF }
     END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$T/k.folded" | sort >"$T/kiln.comm"
cat "$T/kiln.comm"
cmp -s "$T/perf.comm" "$T/kiln.comm" || fail "per-process totals differ from perf report: $(diff "$T/perf.comm" "$T/kiln.comm")"
grep -q '+0x' "$T/k.folded" && fail "symbol offsets were not stripped"
grep -q '_\[k\]' "$T/k.folded" || fail "no kernel frame annotated _[k]"
mod=$(grep -o '\[unknown\] (/[^)]*)' "$T/perf.txt" | head -n 1 | sed 's|.*/||; s|)$||')
if [ -n "$mod" ]; then	# an unresolved symbol is named after its module
	grep -qF "[$mod]" "$T/k.folded" || fail "[unknown] in $mod not shown as [$mod]"
fi

# the same samples as "comm pid/tid" without offsets, and the top table
perf script -i "$T/perf.data" -F comm,pid,tid,time,period,event,ip,sym,dso >"$T/perf2.txt" 2>/dev/null
"$KILN" report "$T/perf2.txt" -f folded | sort >"$T/k2.folded"
sort "$T/k.folded" | cmp -s - "$T/k2.folded" || fail "pid/tid layout collapsed differently"
"$KILN" report "$T/perf.txt" -f top -n 5 >"$T/top.txt" || fail "top of perf script failed"
cat "$T/top.txt"
total=$(awk '/^total:/ { print $2 }' "$T/top.txt")
[ "$total" = "$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/k.folded")" ] || fail "top total differs"
pass
