#!/usr/bin/env bash
# Grafana's Pyroscope Go SDK (github.com/grafana/pyroscope-go, from the Go module proxy)
# profiling a known Go service and pushing to kiln serve every 2 s: every profile type it
# sends comes back under Pyroscope's own type ids (the Connect querier, driven by
# Pyroscope's generated client), the CPU time of the two TagWrapper-labelled handlers is
# 7:3 within 3 sigma, the 40 parked goroutines and the allocating function are there, and
# the SDK's labels are series labels while its per-run __session_id__ is not.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
SDK=$(go_tool gosdk 22) || { echo "$SDK"; exit 2; }
CQ=$(go_tool connectq 25) || { echo "$CQ"; exit 2; }

start_server "$T/data"
"$SDK" "${URL%/}" gosvc 8 >"$T/sdk.log" 2>&1 || fail "the SDK program failed: $(cat "$T/sdk.log")"

"$CQ" "$URL" types | cut -d' ' -f1 >"$T/types"
cat "$T/types"
for id in process_cpu:cpu:nanoseconds:cpu:nanoseconds process_cpu:samples:count:cpu:nanoseconds \
	memory:alloc_objects:count:space:bytes memory:alloc_space:bytes:space:bytes \
	memory:inuse_objects:count:space:bytes memory:inuse_space:bytes:space:bytes \
	goroutine:goroutine:count:goroutine:count mutex:contentions:count:contentions:count \
	mutex:delay:nanoseconds:contentions:count block:contentions:count:contentions:count \
	block:delay:nanoseconds:contentions:count; do
	grep -qx "$id" "$T/types" || fail "no $id among the types"
done

CPU=process_cpu:cpu:nanoseconds:cpu:nanoseconds
"$CQ" "$URL" totals $CPU '{service_name="gosvc"}' handler >"$T/cpu" || fail "CPU totals failed"
cat "$T/cpu"
python3 - "$T/cpu" <<'PY' || fail "the handlers' CPU shares are off"
import math, sys
v = {l.split()[1]: float(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("series")}
a, b = v.get("{handler=alpha}", 0), v.get("{handler=beta}", 0)
n = (a + b) / 1e7                       # 100 Hz samples of 10 ms
if n < 50:
    sys.exit("only %d samples" % n)
share, bound = a / (a + b), 3 * math.sqrt(0.7 * 0.3 / n)
print("alpha %.3f of %d samples (0.7 +- %.3f)" % (share, n, bound))
sys.exit(0 if abs(share - 0.7) <= bound else 1)
PY
render() {
	curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$1" --data-urlencode "profile_type=$2" \
		--data-urlencode from=now-1h --data-urlencode until=now --data-urlencode format=collapsed
}
render gosvc $CPU | grep -q 'main\.alpha' || fail "no main.alpha in the CPU profile"
# the labels do not mix: no alpha under handler=beta (a sample of the wrapper itself,
# pprof.Do with the labels already set, is beta's; CI saw one of 229)
beta=$(render 'gosvc{handler="beta"}' $CPU) || fail "cannot render handler=beta"
echo "$beta" | grep -v '^#' | grep -q 'main\.alpha' &&
	fail "handler=beta holds main.alpha: $(echo "$beta" | head -5)"
echo "$beta" | grep -q 'main\.beta' || fail "no main.beta under handler=beta"
render gosvc memory:alloc_space:bytes:space:bytes | grep -q 'main\.grow' || fail "no main.grow in alloc_space"
out=$("$CQ" "$URL" totals goroutine:goroutine:count:goroutine:count '{service_name="gosvc"}')
g=$(echo "$out" | awk '/^flamegraph/ { print $2 }')
[ "${g:-0}" -ge 40 ] || fail "goroutines: $out"
render gosvc goroutine:goroutine:count:goroutine:count | grep -q 'main\.park' || fail "no main.park goroutines"
names=$("$CQ" "$URL" names '{service_name="gosvc"}')
echo "labels: $names"
for l in handler region service_name; do
	echo " $names " | grep -q " $l " || fail "no $l label"
done
echo " $names " | grep -q "__session_id__" && fail "__session_id__ became a series label"
pass
