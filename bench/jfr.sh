#!/usr/bin/env bash
# bench/jfr.sh: kiln's JFR reader (format/jfr.h) on a recording the JDK makes here (CPU,
# allocation and lock events of a small program, -XX:StartFlightRecording) and on the
# Pyroscope Java agent's uploads kept in tests/unit/data, CPU time per parse; beside it,
# the JDK's own reader on the same file (`jfr print --json`, a JVM started each time).
# Grafana's jfr-parser (Pyroscope's reader) is not on the Go module proxy reachable here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v java >/dev/null && command -v javac >/dev/null && command -v jfr >/dev/null ||
	{ echo "bench/jfr.sh: needs a JDK (java, javac, jfr)" >&2; exit 2; }
make -s all
cc -std=c11 -D_GNU_SOURCE -O2 -g -Isrc -Ibuild/gen $(make -s print-PKG_CFLAGS) -include src/util/banned.h \
	-o build/bench-jfr bench/jfr.c build/libkiln.a $(make -s print-LDLIBS)
dir=$(mktemp -d /tmp/kiln-bench-jfr.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/Work.java" <<'JAVA'
public class Work {
	static volatile double sink; static volatile Object keep;
	static final Object lock = new Object();
	static void spin(long n) { double x = 0; for (long i = 0; i < n; i++) x += Math.sqrt(x + i); sink = x; }
	static void alloc(int n) { for (int i = 0; i < n; i++) { keep = new byte[4096 + (i & 1023)];
		if ((i & 63) == 0) keep = new byte[2 << 20]; } }
	static void locked() { synchronized (lock) { spin(200000); } }
	public static void main(String[] a) throws Exception {
		long stop = System.currentTimeMillis() + 3000;
		Thread t = new Thread(() -> { while (System.currentTimeMillis() < stop) locked(); });
		t.start();
		while (System.currentTimeMillis() < stop) { spin(100000); alloc(200); locked(); }
		t.join();
	}
}
JAVA
(cd "$dir" && javac Work.java && java -XX:StartFlightRecording=filename=w.jfr,settings=profile,jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true,jdk.JavaMonitorEnter#threshold=0ms -cp . Work >java.log 2>&1)
for f in "$dir/w.jfr" tests/unit/data/jfr-async-*.jfr; do
	size=$(stat -c %s "$f")
	n=$(( 200000000 / size + 1 ))
	nice build/bench-jfr "$f" "$n"
	s=$( { /usr/bin/time -f '%U %S' jfr print --json --stack-depth 64 "$f" >/dev/null; } 2>&1 | tail -1)
	echo "jdk jfr print --json: $(basename "$f"): $(echo "$s" | awk '{ printf "%.0f ms CPU (user+sys, JVM start included)", ($1 + $2) * 1000 }')"
done
