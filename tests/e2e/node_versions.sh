#!/usr/bin/env bash
# The known-answer Node.js workload (alpha/beta 70/30 through main -> phase -> dispatch,
# TurboFan inlining them into phase) under every node this machine has or can fetch
# (tests/workloads/node_env.sh): the system node, Debian bookworm's Node 18, the official
# 22 and 24 from the npm registry. Under each whose V8 kiln reads: >= 95% of the main
# thread's samples carry _[js] frames, alpha's share within 3 sigma of 70% (the sample
# count's), the inlined functions named, files and lines right. A node whose V8 kiln has
# no layout for must show the skip marker and no _[js] frame. Says which ran.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
# one: the known-answer check under $NODE
one() {
	local name=$1 v8
	node_ratio_record "$NODE"
	if node_supported "$NODE"; then
		python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js"
	else
		v8=$(node_v8 "$NODE")
		echo "$name: unsupported"
		grep -q "Profiling skipped: unsupported node (V8 ${v8%.*}" "$COL" ||
			{ echo "no skip marker"; return 1; }
		python3 "$W/nodecheck.py" none "$COL"
	fi
}
node_each one
