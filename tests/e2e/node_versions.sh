#!/usr/bin/env bash
# The known-answer Node.js workload (alpha/beta 70/30 through main -> phase -> dispatch,
# TurboFan inlining them into phase) under every node this machine has or can fetch
# (tests/workloads/node_env.sh): the system node, Debian bookworm's Node 18, the official
# 22 and 24 from the npm registry. Under each whose V8 kiln reads: >= 95% of the main
# thread's samples carry _[js] frames, alpha's share within 3 sigma of 70% (the sample
# count's), the inlined functions named, files and lines right. A node whose V8 kiln has
# no layout for must show the skip marker and no _[js] frame. Says which ran.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
. "$W/node_env.sh"
ran=() failed=() absent=() seen=()
for name in system debian 22 24; do
	if ! node=$(node_get "$name" 2>"$T/why"); then
		absent+=("$name ($(cat "$T/why"))")
		continue
	fi
	v8=$(node_v8 "$node")
	[[ " ${seen[*]} " == *" $v8 "* ]] && continue	# the system node is Debian's 18
	seen+=("$v8")
	"$node" "$W/node_ratio.js" 30 >/dev/null & pid=$!
	reap $pid
	sleep 1.5	# past start-up: the hot functions are optimized
	rm -rf "$T/out"
	record -d 5 -f 499 --no-flamegraph --pids "$pid" >/dev/null
	kill $pid 2>/dev/null
	echo "== $name: $node ($("$node" --version), V8 $v8)"
	if node_supported "$node"; then
		ran+=("$name:V8-${v8%.*}")
		python3 "$W/nodecheck.py" ratio "$COL" "$W/node_ratio.js" || failed+=("$name")
	else
		ran+=("$name:V8-${v8%.*}(unsupported)")
		grep -q "Profiling skipped: unsupported node (V8 ${v8%.*}" "$COL" ||
			{ echo "no skip marker"; failed+=("$name"); }
		python3 "$W/nodecheck.py" none "$COL" || failed+=("$name")
	fi
done
echo "ran: ${ran[*]:-none}; could not have: ${absent[*]:-none}"
[ ${#ran[@]} -gt 0 ] || skip "no node could be had: ${absent[*]}"
[ ${#failed[@]} -eq 0 ] || fail "wrong Node.js stacks under: ${failed[*]}"
pass "${ran[*]}"
