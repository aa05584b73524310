#!/usr/bin/env bash
# A frame-pointer C workload whose three leaves share the CPU 50/30/20: the .col shares
# are within 2 points (a 3-sigma bound over ~5,000+ samples) and every stack has its caller.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c ratio
"$WB/ratio" 2 30 & reap $!
sleep 0.3
record -d 8 -f 997 --perf-mode fp --no-flamegraph
colcheck header "$COL" >/dev/null || fail "header does not parse"
n=$(colcheck count "$COL" ratio)
echo "ratio samples: $n"
colcheck shares "$COL" ratio alpha=50 beta=30 gamma_=20 || fail "shares are off"
colcheck frac "$COL" ratio '^dispatch$' 0.95 || fail "the fp walk lost dispatch"
pass "$n samples"
