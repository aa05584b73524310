#!/usr/bin/env bash
# Grafana's Pyroscope Java agent (io.pyroscope:agent from Maven Central, async-profiler
# inside) attached to a known Java program and pushing to kiln serve. The agent sends JFR
# by default, which kiln does not read; with PYROSCOPE_FORMAT=otlp it sends OTLP profiles
# to /v1development/profiles, which kiln does. The agent's OTLP carries neither the
# application name nor its labels (it warns so), so its profiles land under
# service_name="unknown_service", as they would in Pyroscope. Checked: the functions come
# back from /pyroscope/render and the Connect querier with the same totals, and
# kilnAlpha:kilnBeta (7:3 of the same work) hold 7:3 of the samples.
# The jar is fetched by mvn into build/m2 (reused across runs).
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
public class Burn {
	static volatile double sink;
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
	// Rounds of 7:3 of the same work, each scaled by a random factor so that no phase
	// locks in with the profiler's timer, until the thread has had a[0] seconds of CPU
	// (however loaded the machine) or a[1] seconds have passed.
	public static void main(String[] a) {
		java.util.Random r = new java.util.Random();
		java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
		long cpu = Long.parseLong(a[0]) * 1000000000L;
		long stop = System.currentTimeMillis() + Long.parseLong(a[1]) * 1000L;
		while (mx.getCurrentThreadCpuTime() < cpu && System.currentTimeMillis() < stop) {
			double u = 0.5 + r.nextDouble();
			kilnAlpha((long)(70000 * u));
			kilnBeta((long)(30000 * u));
		}
	}
}
JAVA
javac -d "$T" "$T/Burn.java" || fail "javac failed"
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
assert any(s.startswith("Burn.main;Burn.kilnAlpha") for s in col), "no Burn.main;Burn.kilnAlpha stack"
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
