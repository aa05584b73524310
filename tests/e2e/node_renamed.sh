#!/usr/bin/env bash
# node under another name, as a single executable application or a copied binary runs
# (`cp $(which node) svc-api`): kiln finds V8 by the postmortem symbols the binary
# exports, not by its file name. The known-answer workload run by a copy of each node
# named svc-api: its samples carry _[js] frames, alpha and beta named at their lines,
# the shares within 3 sigma (its main thread is svc-api, or MainThread from Node 24 on).
# A copy, not a link: kiln sees the file a process maps.
# Debian's node keeps V8 in libnode.so, found by that name whatever the executable's is.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
one() {
	local name=$1 real app=$T/svc-api.bin/svc-api cmd
	real=$(node_real "$NODE")
	rm -rf "$T/svc-api.bin" && mkdir -p "$T/svc-api.bin" && cp "$real" "$app" || return 1
	cmd=$app
	if head -c 2 "$NODE" | grep -q '#!'; then	# Debian's from build/: its wrapper runs the copy
		sed "s| exec $real | exec $app |" "$NODE" >"$T/svc-api" && chmod +x "$T/svc-api"
		cmd=$T/svc-api
	fi
	node_ratio_record "$cmd"
	python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" svc-api,MainThread
}
node_each one
