#!/usr/bin/env bash
# Grafana's Pyroscope Python SDK (pyroscope-io from PyPI, with its OpenTelemetry span
# processor pyroscope-otel) profiling a known Python program and pushing to kiln serve:
# the functions come back from /pyroscope/render and from the Connect querier (driven by
# Pyroscope's generated Go client) with the same totals; kiln_alpha and kiln_beta, run
# 7:3 by the clock, hold about 7:3 of the CPU samples and the SDK's tag_wrapper labels
# pick them; Connect's Diff of the two handlers has each side's totals; and span
# profiles work: the SDK's span_id stays off the series, SelectMergeSpanProfile of the
# "alpha" spans holds kiln_alpha and (almost) no kiln_beta, and that of every span holds
# (almost) all of both.
# The packages are installed into a venv under build/e2e-pip (reused across runs).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
VERSION=1.4.0
venv=$ROOT/build/e2e-pip/pyroscope-$VERSION
if ! "$venv/bin/python" -c 'import pyroscope, pyroscope.otel, opentelemetry.sdk' 2>/dev/null; then
	rm -rf "$venv" && python3 -m venv "$venv" >"$T/venv.log" 2>&1 ||
		skip "cannot make a venv: $(tail -n 3 "$T/venv.log")"
	timeout 600 "$venv/bin/pip" install -q "pyroscope-io==$VERSION" pyroscope-otel opentelemetry-sdk \
		>"$T/pip.log" 2>&1 || skip "could not install pyroscope-io from PyPI: $(tail -n 3 "$T/pip.log")"
fi
CQ=$(go_tool connectq 25) || { echo "$CQ"; exit 2; }

start_server "$T/data"
cat >"$T/app.py" <<'PY'
# Root spans "alpha" (7 ms of kiln_alpha) and "beta" (3 ms of kiln_beta), each inside a
# tag_wrapper naming its handler, for 8 s; the span ids are written to argv[1].
import os, random, sys, time
import pyroscope
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pyroscope.otel import PyroscopeSpanProcessor

pyroscope.configure(application_name="pyapp", server_address=os.environ["KILN_URL"],
                    sample_rate=100, upload_interval=2, tags={"region": "e2e"})
provider = TracerProvider()
provider.add_span_processor(PyroscopeSpanProcessor())
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("kiln-e2e")

def kiln_alpha(ms):
    end, x = time.monotonic() + ms / 1000, 0
    while time.monotonic() < end:
        for i in range(200):
            x += i * i
    return x

def kiln_beta(ms):
    end, x = time.monotonic() + ms / 1000, 0
    while time.monotonic() < end:
        for i in range(200):
            x += i ^ 3
    return x

# The sampler ticks every 10 ms of the clock: calls of a fixed length would lock in phase
# with it and bias the shares, so each round is stretched by a random factor.
ids = {"alpha": [], "beta": []}
stop = time.monotonic() + 8
while time.monotonic() < stop:
    u = random.uniform(0.5, 1.5)
    for name, fn, ms in (("alpha", kiln_alpha, 7 * u), ("beta", kiln_beta, 3 * u)):
        with pyroscope.tag_wrapper({"handler": name}):
            with tracer.start_as_current_span(name) as span:
                ids[name].append(format(span.get_span_context().span_id, "016x"))
                fn(ms)
pyroscope.shutdown()
with open(sys.argv[1], "w") as f:
    for name, v in ids.items():
        f.write("%s %s\n" % (name, ",".join(v)))
PY
KILN_URL=${URL%/} timeout 90 "$venv/bin/python" "$T/app.py" "$T/spans" >"$T/py.log" 2>&1 ||
	fail "the Python program failed: $(tail -n 20 "$T/py.log")"
grep -q ERROR "$T/serve.err" && fail "the server logged errors: $(grep ERROR "$T/serve.err" | head -3)"

CPU=process_cpu:cpu:nanoseconds:cpu:nanoseconds
SEL='{service_name="pyapp"}'
"$CQ" "$URL" types | cut -d' ' -f1 | grep -qx $CPU || fail "no $CPU among the types"
# the render route
render() {
	curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$1" --data-urlencode from=now-1h \
		--data-urlencode until=now --data-urlencode format=collapsed
}
render pyapp.cpu >"$T/render.col" || fail "render failed"
grep -q 'kiln_alpha' "$T/render.col" || fail "no kiln_alpha from render: $(head -5 "$T/render.col")"
grep -q 'kiln_beta' "$T/render.col" || fail "no kiln_beta from render"
# the Connect querier: the same functions and the handlers' shares
"$CQ" "$URL" functions $CPU "$SEL" >"$T/functions" || fail "SelectMergeStacktraces failed"
grep -q '^kiln_alpha ' "$T/functions" || fail "no kiln_alpha from Connect: $(head "$T/functions")"
grep -q '^kiln_beta ' "$T/functions" || fail "no kiln_beta from Connect"
"$CQ" "$URL" functions $CPU '{service_name="pyapp",handler="alpha"}' >"$T/functions_alpha" ||
	fail "SelectMergeStacktraces of handler=alpha failed"
"$CQ" "$URL" totals $CPU "$SEL" handler >"$T/cpu" || fail "CPU totals failed"
cat "$T/cpu"
python3 - "$T" <<'PY' || fail "the totals or the functions' shares are off"
import math, sys
d = sys.argv[1]
def read(name):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(d + "/" + name)}
lines = open(d + "/cpu").read().split("\n")
fg, pp = int(lines[0].split()[1]), int(lines[0].split()[3])
col = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/render.col") if l.strip() and not l.startswith("#"))
series = sum(float(l.split()[2]) for l in lines if l.startswith("series"))
if not (fg == pp == col == series):
    sys.exit("flamegraph %d, pprof %d, render %d, series %d differ" % (fg, pp, col, series))
f, fa = read("functions"), read("functions_alpha")
# the two functions burn 7 and 3 ms by the clock, in turn. The SDK samples by the wall
# clock (py-spy's way, idle threads left out) and what a call costs beyond its length
# varies with the machine's load, so the truth is 7:3 only roughly: kiln_alpha must hold
# between 55% and 85% (3 sigma of 400 samples is 7%)
a, b = f.get("kiln_alpha", 0), f.get("kiln_beta", 0)
n = (a + b) / 1e7                       # 100 Hz samples of 10 ms
if n < 100:
    sys.exit("only %d samples" % n)
share = a / (a + b)
print("kiln_alpha %.3f of %d samples" % (share, n))
if not 0.55 <= share <= 0.85:
    sys.exit(1)
# a sample is tagged when the sampler reads the thread's tags: at the edges it may see
# the next call's, so a few of kiln_beta's samples may be labelled alpha
print("handler=alpha: kiln_alpha %d, kiln_beta %d" % (fa.get("kiln_alpha", 0), fa.get("kiln_beta", 0)))
if not (fa.get("kiln_alpha", 0) >= 0.9 * a and fa.get("kiln_beta", 0) <= 0.08 * a):
    sys.exit("handler=alpha does not hold kiln_alpha alone")
PY
# Diff of the two handlers: each side's ticks are its series' total, the selves add up
"$CQ" "$URL" diff $CPU '{service_name="pyapp",handler="alpha"}' '{service_name="pyapp",handler="beta"}' \
	>"$T/diff" || fail "Diff failed"
"$CQ" -json "$URL" diff $CPU '{service_name="pyapp",handler="alpha"}' '{service_name="pyapp",handler="beta"}' \
	>"$T/diff_json" || fail "Diff over JSON failed"
cat "$T/diff"
cmp -s "$T/diff" "$T/diff_json" || fail "Diff over JSON differs: $(cat "$T/diff_json")"
python3 - "$T" <<'PY' || fail "the Diff is off"
import sys
d = sys.argv[1]
v = {l.split()[1]: int(l.split()[2]) for l in open(d + "/cpu") if l.startswith("series")}
w = open(d + "/diff").read().split()
left, right, total, ls, rs = int(w[1]), int(w[3]), int(w[5]), int(w[7]), int(w[8])
assert left == v["{handler=alpha}"] and right == v["{handler=beta}"], (left, right, v)
assert total == left + right and ls == left and rs == right, w
PY
names=$("$CQ" "$URL" names "$SEL")
echo "labels: $names"
for l in handler region service_name; do
	echo " $names " | grep -q " $l " || fail "no $l label"
done
for l in span_id span_name trace_id; do
	echo " $names " | grep -q " $l " && fail "$l became a series label"
done
curl -sf "${URL}api/apps" | grep -q 'spans' && fail "a span companion is listed: $(curl -s "${URL}api/apps")"
"$CQ" "$URL" series | grep -q '#' && fail "a span companion is a series: $("$CQ" "$URL" series)"

# span profiles
alpha=$(awk '$1 == "alpha" { print $2 }' "$T/spans")
all=$(awk '{ printf "%s%s", s, $2; s = "," }' "$T/spans")
[ -n "$alpha" ] || fail "the program wrote no span ids"
printf '%s' "$alpha" >"$T/alpha_ids"
"$CQ" "$URL" spans $CPU "$SEL" "@$T/alpha_ids" >"$T/span_alpha" || fail "SelectMergeSpanProfile failed"
printf '%s' "$all" >"$T/all_ids"
"$CQ" "$URL" spans $CPU "$SEL" "@$T/all_ids" >"$T/span_all" || fail "SelectMergeSpanProfile (all) failed"
"$CQ" -json "$URL" spans $CPU "$SEL" "@$T/alpha_ids" >"$T/span_alpha_json" || fail "SelectMergeSpanProfile over JSON failed"
"$CQ" "$URL" spans $CPU '{service_name="pyapp",handler="beta"}' "@$T/alpha_ids" >"$T/span_none" ||
	fail "SelectMergeSpanProfile (alpha spans, beta handler) failed"
"$CQ" "$URL" spans $CPU "$SEL" 0123456789abcdef >"$T/span_unknown" || fail "SelectMergeSpanProfile (unknown) failed"
head -4 "$T/span_alpha" "$T/span_all"
python3 - "$T" <<'PY' || fail "the span profiles are off"
import sys
d = sys.argv[1]
def read(name):
    v = {}
    for l in open(d + "/" + name):
        k, n = l.rsplit(" ", 1)
        v[k] = int(n)
    return v
alpha, every, js = read("span_alpha"), read("span_all"), read("span_alpha_json")
none, unknown = read("span_none"), read("span_unknown")
functions = read("functions")
assert alpha["tree"] == alpha["total"] and every["tree"] == every["total"], "tree and flamegraph differ"
assert js["total"] == alpha["total"], "JSON and proto answers differ"
assert none["total"] == 0 and unknown["total"] == 0, "spans outside the selection: %r %r" % (none, unknown)
ka, kb = alpha.get("kiln_alpha", 0), alpha.get("kiln_beta", 0)
print("alpha spans: total %d, kiln_alpha %d, kiln_beta %d; all spans %d" % (alpha["total"], ka, kb, every["total"]))
assert ka >= 50 * 10**7, "fewer than 50 samples of kiln_alpha in the alpha spans"
# a sample is tagged when the sampler reads the thread's tags: at a span's edge it may
# see the next span's id, so a few of kiln_beta's samples may land in an alpha span
assert kb <= 0.08 * ka, "kiln_beta in the alpha spans"
# every kiln_alpha and kiln_beta sample ran inside a span (but for the edges, as above)
for f in ("kiln_alpha", "kiln_beta"):
    e = every.get(f, 0)
    assert 0.95 * functions[f] <= e <= functions[f], "%s: %d in all spans, %d in the profile" % (f, e, functions[f])
assert every["total"] > alpha["total"]
PY
pass
