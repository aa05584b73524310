# Sourced by the Java end-to-end tests (after tests/lib.sh): JDKs, the compiled
# known-answer workload and the java_probe driver (tests/tools/java_probe.c).
JVM_LIB=$ROOT/build/libkiln-jvm.so
JDK17=/usr/lib/jvm/java-17-openjdk-amd64

# The newest JDK on the machine above 17, or nothing.
newer_jdk() {
	local d v best="" bestv=17
	for d in /usr/lib/jvm/*/; do
		[ -x "$d/bin/java" ] && [ -f "$d/release" ] || continue
		v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$d/release")
		[[ "$v" =~ ^[0-9]+$ ]] || continue
		if [ "$v" -gt "$bestv" ]; then best=${d%/}; bestv=$v; fi
	done
	echo "$best"
}

# Builds the probe and the workload classes into $T. Skips when the JDK 17 or the agent
# library is missing.
java_setup() {
	[ -x "$JDK17/bin/javac" ] || skip "JDK 17 not installed ($JDK17)"
	[ -f "$JVM_LIB" ] || skip "build/libkiln-jvm.so not built"
	mkdir -p "$T/classes"
	"$JDK17/bin/javac" -d "$T/classes" "$ROOT/tests/workloads/JavaRatio.java" ||
		fail "javac failed"
	# shellcheck disable=SC2046
	cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$ROOT/src" -include "$ROOT/src/util/banned.h" \
		-o "$T/java_probe" "$ROOT/tests/tools/java_probe.c" "$ROOT/build/libkiln.a" \
		$(pkg-config --libs libelf libdw liblzma zlib jansson libcurl libmicrohttpd \
			sqlite3 libprotobuf-c libxxhash) -lpthread -lm || fail "cannot build java_probe"
}

# The driver, with this build's agent library.
probe() { "$T/java_probe" --lib "$JVM_LIB" "$@"; }

# Waits (at most 10 s) until pid has the JVM's attach handlers installed.
wait_jvm_ready() {
	local pid=$1 i
	for i in $(seq 100); do
		grep -q libjvm.so "/proc/$pid/maps" 2>/dev/null &&
			[ $(( 0x$(awk '/^SigCgt/{print $2}' "/proc/$pid/status") & 4 )) -ne 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# check_ratio PROBE_OUTPUT PID: the known answer of JavaRatio for one JVM. Prints the
# figures; fails unless >= 95% of the busy thread's samples carry Java names and alpha's
# share is within 3 sigma (from the sample count) of 75%.
check_ratio() {
	local out=$1 pid=$2
	awk -v pid="$pid" -F';' '
		$1 != pid { next }
		{ n = $NF; sub(/.* /, "", n); line = $0 }
		line ~ /JavaRatio\$Work\.run/ || line ~ /kiln-busy-worker/ {
			busy += n
			leaf = $NF; sub(/ [0-9]+$/, "", leaf)
			if (leaf ~ /^[A-Za-z_$][A-Za-z0-9_$.]*_\[[ji0]\]$/) named += n
			if (line ~ /Chain\.alpha/) a += n
			else if (line ~ /Chain\.beta/) b += n
		}
		END {
			if (busy == 0) { print "no samples of the busy thread"; exit 1 }
			share = a / (a + b); sigma = sqrt(0.75 * 0.25 / (a + b))
			tol = 3 * sigma
			printf "busy samples %d, with Java names %.1f%%, alpha share %.2f%% (truth 75%%, 3-sigma tolerance %.2f points)\n", busy, 100 * named / busy, 100 * share, 100 * tol
			if (named < 0.95 * busy) { print "fewer than 95% of samples named"; exit 1 }
			if (share < 0.75 - tol || share > 0.75 + tol) { print "share off"; exit 1 }
			if (tol > 0.03) print "note: fewer samples than a 3-point bound needs"
		}' "$out"
}

# ratio_test JAVA: runs JavaRatio under the given java and profiles it at 199 Hz with
# thread names, in rounds of 6 s (each one a new attach, which must find the agent the
# previous round stopped), until alpha and beta have the 1875 samples that make 3 points a
# 3-sigma bound, or 60 s have passed; then checks the known answer.
ratio_test() {
	local java=$1 pid n=0 round=0
	"$java" -cp "$T/classes" JavaRatio 120 > "$T/out" 2> "$T/err" &
	pid=$!
	reap "$pid"
	wait_jvm_ready "$pid" || fail "JVM $pid did not start"
	: > "$T/probe"
	while [ "$n" -lt 1875 ] && [ "$round" -lt 10 ]; do
		probe --pid "$pid" --hz 199 --seconds 6 --threads > "$T/round" 2> "$T/probe.err" ||
			fail "java_probe failed: $(cat "$T/probe.err")"
		grep "^jvm $pid " "$T/round" ||
			fail "JVM not profiled in round $round: $(cat "$T/round" "$T/probe.err")"
		cat "$T/round" >> "$T/probe"
		n=$(awk -F';' -v pid="$pid" '$1 == pid && /Chain\.(alpha|beta)/ {
			c = $NF; sub(/.* /, "", c); n += c } END { print n + 0 }' "$T/probe")
		round=$((round + 1))
	done
	grep -q "^$pid;\[kiln-busy-worker tid=[0-9]*\];" "$T/probe" ||
		fail "no thread name frame: $(head -3 "$T/probe")"
	grep -q '_\[[ji]\]' "$T/probe" || fail "no JIT frame annotations"
	check_ratio "$T/probe" "$pid" || fail "known answer not met"
	kill -0 "$pid" || fail "the JVM died under profiling"
}
