#!/usr/bin/env bash
# Grafana's Pyroscope Java agent (io.pyroscope:agent from Maven Central, async-profiler
# inside) attached to a known Java program and pushing to kiln serve, twice:
#  - with its default format, JFR (`/ingest?format=jfr`, a multipart body with the gzipped
#    recording and the labels snapshot), CPU and allocation profiling on, the program
#    labelling its two functions' work phase=alpha / phase=beta through the agent's
#    Pyroscope.LabelsWrapper. Checked: the functions come back from /pyroscope/render and
#    the Connect querier with the same totals as process_cpu:cpu:nanoseconds, kilnAlpha:
#    kilnBeta (7:3 of the same work) hold 7:3 of the CPU within 3 sigma, the allocation
#    types hold Burn.kilnAlloc, and phase="alpha" selects all of kilnAlpha and no kilnBeta;
#  - with PYROSCOPE_FORMAT=otlp, OTLP profiles to /v1development/profiles. The agent's
#    OTLP carries neither the application name nor its labels (it warns so), so its
#    profiles land under service_name="unknown_service", as they would in Pyroscope.
#    Checked: the same totals through render and Connect, and the same 7:3.
# The jar is fetched by mvn into build/m2 (reused across runs).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
command -v java >/dev/null && command -v javac >/dev/null || skip "no JDK"
command -v mvn >/dev/null || skip "mvn is not installed"
VERSION=2.9.2
repo=$ROOT/build/m2
jar=$repo/io/pyroscope/agent/$VERSION/agent-$VERSION.jar
if [ ! -f "$jar" ]; then
	timeout 600 mvn -B -q -Dmaven.repo.local="$repo" dependency:get \
		-Dartifact=io.pyroscope:agent:$VERSION -Dtransitive=false >"$T/mvn.log" 2>&1 ||
		skip "could not fetch io.pyroscope:agent:$VERSION: $(tail -n 3 "$T/mvn.log")"
fi
CQ=$(go_tool connectq 25) || { echo "$CQ"; exit 2; }

start_server "$T/data"
cat >"$T/Burn.java" <<'JAVA'
import io.pyroscope.labels.v2.LabelsSet;
import io.pyroscope.labels.v2.Pyroscope;

public class Burn {
	static volatile double sink;
	static volatile Object keep;
	static void kilnAlpha(long n) {
		double x = 0;
		for (long i = 0; i < n; i++)
			x += Math.sqrt(x + i);
		sink = x;
	}
	static void kilnBeta(long n) {
		double x = 0;
		for (long i = 0; i < n; i++)
			x += Math.sqrt(x + i);
		sink = x;
	}
	static void kilnAlloc(int n) {
		for (int i = 0; i < n; i++)
			keep = new long[1024];
	}
	// Rounds of 7:3 of the same work (each under its phase label), each scaled by a
	// random factor so that no phase locks in with the profiler's timer, and a few
	// allocations, until the thread has had a[0] seconds of CPU (however loaded the
	// machine) or a[1] seconds have passed.
	public static void main(String[] a) {
		java.util.Random r = new java.util.Random();
		java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
		long cpu = Long.parseLong(a[0]) * 1000000000L;
		long stop = System.currentTimeMillis() + Long.parseLong(a[1]) * 1000L;
		LabelsSet alpha = new LabelsSet("phase", "alpha"), beta = new LabelsSet("phase", "beta");
		while (mx.getCurrentThreadCpuTime() < cpu && System.currentTimeMillis() < stop) {
			double u = 0.5 + r.nextDouble();
			Pyroscope.LabelsWrapper.run(alpha, () -> kilnAlpha((long)(70000 * u)));
			Pyroscope.LabelsWrapper.run(beta, () -> kilnBeta((long)(30000 * u)));
			kilnAlloc(20);
		}
	}
}
JAVA
javac -cp "$jar" -d "$T" "$T/Burn.java" || fail "javac failed"
# 1. the default format, JFR, with allocation profiling (async-profiler's alloc=256k)
PYROSCOPE_APPLICATION_NAME=javajfr PYROSCOPE_SERVER_ADDRESS=${URL%/} PYROSCOPE_PROFILER_ALLOC=256k \
	PYROSCOPE_UPLOAD_INTERVAL=2s PYROSCOPE_LOG_LEVEL=debug \
	timeout 120 java -javaagent:"$jar" -cp "$T" Burn 6 60 >"$T/jfr.log" 2>&1 ||
	fail "the Java program (JFR) failed: $(tail -n 20 "$T/jfr.log")"
grep -q 'Upload attempt 1 to .*format=jfr' "$T/jfr.log" ||
	fail "the agent uploaded no JFR: $(tail -n 20 "$T/jfr.log")"
grep -q 'Error uploading' "$T/jfr.log" &&
	fail "kiln refused a JFR upload: $(grep -A2 'Error uploading' "$T/jfr.log" | head)"
"$CQ" "$URL" types >"$T/jtypes"
CPU=process_cpu:cpu:nanoseconds:cpu:nanoseconds
for t in $CPU memory:alloc_in_new_tlab_objects:count:space:bytes memory:alloc_in_new_tlab_bytes:bytes:space:bytes; do
	grep -q "^$t " "$T/jtypes" || fail "no $t type after the JFR uploads: $(cat "$T/jtypes")"
done
JSEL='{service_name="javajfr"}'
curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$JSEL" --data-urlencode "profile_type=$CPU" \
	--data-urlencode from=now-1h --data-urlencode until=now --data-urlencode format=collapsed \
	>"$T/jrender.col" || fail "render of the JFR profile failed"
"$CQ" "$URL" functions "$CPU" "$JSEL" >"$T/jfunctions" || fail "SelectMergeStacktraces (JFR) failed"
"$CQ" "$URL" totals "$CPU" "$JSEL" >"$T/jtotals" || fail "the Connect totals (JFR) failed"
"$CQ" "$URL" functions "$CPU" '{service_name="javajfr",phase="alpha"}' >"$T/jalpha" ||
	fail "SelectMergeStacktraces of phase=alpha failed"
"$CQ" "$URL" functions memory:alloc_in_new_tlab_objects:count:space:bytes "$JSEL" >"$T/jalloc" ||
	fail "SelectMergeStacktraces of the allocations failed"
"$CQ" "$URL" functions memory:alloc_in_new_tlab_bytes:bytes:space:bytes "$JSEL" >"$T/jallocb" ||
	fail "SelectMergeStacktraces of the allocated bytes failed"
"$CQ" "$URL" values phase "$JSEL" >"$T/jphases" || fail "LabelValues of phase failed"
cat "$T/jtotals" "$T/jphases"
python3 - "$T" <<'PY' || fail "the Java profile from JFR is off"
import math, sys
d = sys.argv[1]
def funcs(name):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(d + "/" + name)}
col = {}
for l in open(d + "/jrender.col"):
    if l.strip() and not l.startswith("#"):
        stack, n = l.rsplit(" ", 1)
        col[stack] = int(n)
fn, alpha = funcs("jfunctions"), funcs("jalpha")
alloc, allocb = funcs("jalloc"), funcs("jallocb")
tot = open(d + "/jtotals").read().split()
fg, pp = int(tot[1]), int(tot[3])
total = sum(col.values())
assert total > 0, "render returned nothing"
assert fg == pp == total == fn["total"], "render %d, flamegraph %d, pprof %d differ" % (total, fg, pp)
def render_of(f):
    return sum(n for s, n in col.items() if f in s.split(";"))
a, b = render_of("Burn.kilnAlpha"), render_of("Burn.kilnBeta")
assert a == fn.get("Burn.kilnAlpha") and b == fn.get("Burn.kilnBeta"), \
    "render (%d, %d) and Connect (%r, %r) differ" % (a, b, fn.get("Burn.kilnAlpha"), fn.get("Burn.kilnBeta"))
assert any(s.startswith("Burn.main;") and s.endswith(";Burn.kilnAlpha") for s in col), \
    "no Burn.main;...;Burn.kilnAlpha stack: %s" % list(col)[:5]
assert total % 10000000 == 0, "CPU total %d is not a whole number of 10 ms samples" % total
n = (a + b) / 1e7        # sampleRate=100: each sample is 10 ms of CPU
share = a / (a + b) if n else 0
bound = 3 * math.sqrt(0.21 / n) + 0.05 if n else 1
print("JFR: kilnAlpha %.3f of %d samples (0.7 +- %.3f)" % (share, n, bound))
assert n >= 40, "only %d samples" % n
assert abs(share - 0.7) <= bound, "kilnAlpha's share is %.3f" % share
# every kilnAlpha sample ran under phase=alpha, no kilnBeta one did
assert alpha.get("Burn.kilnAlpha") == a, "phase=alpha has %r of kilnAlpha's %d" % (alpha.get("Burn.kilnAlpha"), a)
assert "Burn.kilnBeta" not in alpha, "phase=alpha holds kilnBeta"
assert alloc.get("Burn.kilnAlloc", 0) > 0 and allocb.get("Burn.kilnAlloc", 0) > 0, \
    "no allocations in Burn.kilnAlloc: %r %r" % (alloc.get("total"), allocb.get("total"))
# a long[1024] is 8 KiB and more: the TLAB it opened is at least that
ka, kb = alloc["Burn.kilnAlloc"], allocb["Burn.kilnAlloc"]
print("JFR: kilnAlloc %d objects, %d bytes" % (ka, kb))
assert kb >= 8192 * ka, "kilnAlloc's %d bytes for %d objects of 8 KiB" % (kb, ka)
PY
grep -qx 'alpha beta' "$T/jphases" || fail "phase values are '$(cat "$T/jphases")', not 'alpha beta'"

# 2. OTLP
PYROSCOPE_APPLICATION_NAME=javaapp PYROSCOPE_SERVER_ADDRESS=${URL%/} PYROSCOPE_FORMAT=otlp \
	PYROSCOPE_UPLOAD_INTERVAL=2s PYROSCOPE_LOG_LEVEL=debug \
	timeout 120 java -javaagent:"$jar" -cp "$T" Burn 6 60 >"$T/java.log" 2>&1 ||
	fail "the Java program failed: $(tail -n 20 "$T/java.log")"
grep -q 'Upload attempt 1 to .*v1development/profiles' "$T/java.log" ||
	fail "the agent uploaded nothing: $(tail -n 20 "$T/java.log")"
grep -q 'Error uploading' "$T/java.log" && fail "kiln refused an upload: $(grep -A2 'Error uploading' "$T/java.log" | head)"

"$CQ" "$URL" types >"$T/types"
cat "$T/types"
TYPE=$(awk '{ print $1 }' "$T/types" | grep -m1 '^itimer:') || fail "no itimer type: $(cat "$T/types")"
SEL='{service_name="unknown_service"}'
curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$SEL" --data-urlencode "profile_type=$TYPE" \
	--data-urlencode from=now-1h --data-urlencode until=now --data-urlencode format=collapsed \
	>"$T/render.col" || fail "render failed"
"$CQ" "$URL" functions "$TYPE" "$SEL" >"$T/functions" || fail "SelectMergeStacktraces failed"
"$CQ" "$URL" totals "$TYPE" "$SEL" >"$T/totals" || fail "the Connect totals failed"
cat "$T/totals"
python3 - "$T" <<'PY' || fail "the Java profile is off"
import math, sys
d = sys.argv[1]
col = {}
for l in open(d + "/render.col"):
    if l.strip() and not l.startswith("#"):
        stack, n = l.rsplit(" ", 1)
        col[stack] = int(n)
fn = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(d + "/functions")}
tot = open(d + "/totals").read().split()
fg, pp = int(tot[1]), int(tot[3])
total = sum(col.values())
assert total > 0, "render returned nothing"
assert fg == pp == total == fn["total"], "render %d, flamegraph %d, pprof %d differ" % (total, fg, pp)
# every sample of a function, from render's stacks and from Connect's flamegraph
def render_of(f):
    return sum(n for s, n in col.items() if f in s.split(";"))
a, b = render_of("Burn.kilnAlpha"), render_of("Burn.kilnBeta")
assert a == fn.get("Burn.kilnAlpha") and b == fn.get("Burn.kilnBeta"), \
    "render (%d, %d) and Connect (%r, %r) differ" % (a, b, fn.get("Burn.kilnAlpha"), fn.get("Burn.kilnBeta"))
assert any(s.startswith("Burn.main;") and s.endswith(";Burn.kilnAlpha") for s in col), \
    "no Burn.main;...;Burn.kilnAlpha stack"
n = (a + b) / 1e7        # async-profiler's itimer: one sample per 10 ms of CPU
share = a / (a + b)
# 7:3 of the work: within 3 sigma, plus 5% for the JIT (the two are compiled apart, and
# run slower until they are)
bound = 3 * math.sqrt(0.21 / n) + 0.05 if n else 1
print("kilnAlpha %.3f of %d samples (0.7 +- %.3f)" % (share, n, bound))
assert n >= 40, "only %d samples" % n
assert abs(share - 0.7) <= bound, "kilnAlpha's share is %.3f" % share
PY
pass
