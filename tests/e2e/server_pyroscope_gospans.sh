#!/usr/bin/env bash
# Span profiles from the real Go clients: a Go service traced with OpenTelemetry, profiled
# by Grafana's Pyroscope Go SDK and linked by github.com/grafana/otel-profiling-go (from
# the Go module proxy), pushing to kiln serve. Its root spans "alpha" and "beta" do 7:3 of
# the same CPU work. SelectMergeSpanProfile (Pyroscope's generated Go client) of the alpha
# spans holds main.alpha and no main.beta, that of every span holds both, 7:3 within 3
# sigma, the span-less rest of the profile is not in it, and span_id is no series label.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
SPANS=$(go_tool gospans 23) || { echo "$SPANS"; exit 2; }
CQ=$(go_tool connectq 25) || { echo "$CQ"; exit 2; }

start_server "$T/data"
timeout 90 "$SPANS" "${URL%/}" gospans 4 >"$T/spans" 2>"$T/gospans.log" ||
	fail "the Go program failed: $(tail -n 20 "$T/gospans.log")"
alpha=$(awk '$1 == "alpha" { print $2 }' "$T/spans")
all=$(awk '{ printf "%s%s", s, $2; s = "," }' "$T/spans")
[ -n "$alpha" ] || fail "the program printed no span ids: $(cat "$T/spans")"

CPU=process_cpu:cpu:nanoseconds:cpu:nanoseconds
SEL='{service_name="gospans"}'
"$CQ" "$URL" functions $CPU "$SEL" >"$T/functions" || fail "SelectMergeStacktraces failed"
printf '%s' "$alpha" >"$T/alpha_ids"
"$CQ" "$URL" spans $CPU "$SEL" "@$T/alpha_ids" >"$T/span_alpha" || fail "SelectMergeSpanProfile failed"
printf '%s' "$all" >"$T/all_ids"
"$CQ" "$URL" spans $CPU "$SEL" "@$T/all_ids" >"$T/span_all" || fail "SelectMergeSpanProfile (all) failed"
names=$("$CQ" "$URL" names "$SEL")
echo "labels: $names"
for l in span_id span_name; do
	echo " $names " | grep -q " $l " && fail "$l became a series label"
done
python3 - "$T" <<'PY' || fail "the span profiles are off"
import math, sys
d = sys.argv[1]
def read(name):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(d + "/" + name)}
f, alpha, every = read("functions"), read("span_alpha"), read("span_all")
assert alpha["tree"] == alpha["total"] and every["tree"] == every["total"], "tree and flamegraph differ"
print("profile %d, alpha spans %d (main.alpha %d, main.beta %d), all spans %d"
      % (f["total"], alpha["total"], alpha.get("main.alpha", 0), alpha.get("main.beta", 0), every["total"]))
assert alpha.get("main.beta", 0) == 0, "main.beta in the alpha spans"
# the labels are set before the work and cleared after it: every sample of the two is a span's
for fn in ("main.alpha", "main.beta"):
    assert every.get(fn, 0) == f.get(fn, 0), "%s: %d in spans, %d in the profile" % (fn, every.get(fn, 0), f.get(fn, 0))
assert alpha["main.alpha"] == every["main.alpha"]
# the runtime's own samples (GC, the SDK's uploads) are outside every span
assert every["total"] < f["total"] or f["total"] == every["total"] == f["main.alpha"] + f["main.beta"]
a, b = every["main.alpha"], every["main.beta"]
n = (a + b) / 1e7                       # 100 Hz samples of 10 ms
assert n >= 30, "only %d samples" % n
share, bound = a / (a + b), 3 * math.sqrt(0.7 * 0.3 / n)
print("main.alpha %.3f of %d span samples (0.7 +- %.3f)" % (share, n, bound))
assert abs(share - 0.7) <= bound, "main.alpha's share is %.3f" % share
PY
pass
