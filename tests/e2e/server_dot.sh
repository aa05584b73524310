#!/usr/bin/env bash
# The render as a DOT call graph (format=dot, and PROFILE_FORMAT_DOT of the Connect
# SelectMergeStacktraces), parsed by Graphviz's own dot (scripts/deps/server.txt): a
# folded push main;parse;lex 50, main;parse 10, main;render 40 gives a box per function
# with its flat and cumulative counts and shares, edges weighted by the samples through
# them, and maxNodes keeps the heaviest functions.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || fail "curl is not installed"
command -v dot >/dev/null || fail "graphviz is not installed (scripts/deps/server.txt)"

start_server "$T/data"
now=$(date +%s)
printf 'main;parse;lex 50\nmain;parse 10\nmain;render 40\n' |
	curl -sf -X POST --data-binary @- \
	"${URL}ingest?name=dotapp.cpu&from=$((now - 10))&until=$now&sampleRate=100" ||
	fail "the push failed"
curl -sf "${URL}render?query=dotapp.cpu&from=now-1h&until=now&format=dot" >"$T/g.dot" ||
	fail "format=dot failed"
dot -Tsvg "$T/g.dot" >"$T/g.svg" 2>"$T/dot.err" || fail "dot refused it: $(cat "$T/dot.err")"
grep -q '<svg' "$T/g.svg" || fail "dot wrote no SVG"
# dot's own reading of the graph: node labels and edge labels by name
dot -Tplain "$T/g.dot" >"$T/g.plain" || fail "dot -Tplain failed"
python3 - "$T/g.dot" <<'PY' || fail "the graph is wrong: $(cat "$T/g.dot")"
import re, sys
text = open(sys.argv[1]).read()
nodes = {}
for m in re.finditer(r'^(N\d+) \[label="([^"\\]*)\\n(\d+) \(([\d.]+)%\)\\nof (\d+) \(([\d.]+)%\)"', text, re.M):
    nodes[m.group(2)] = (m.group(1), int(m.group(3)), float(m.group(4)), int(m.group(5)))
want = {"main": (0, 0.0, 100), "parse": (10, 10.0, 60), "lex": (50, 50.0, 50), "render": (40, 40.0, 40)}
for name, (flat, share, cum) in want.items():
    assert name in nodes, (name, nodes)
    assert nodes[name][1:] == (flat, share, cum), (name, nodes[name])
edges = {(a, b): int(w) for a, b, w in re.findall(r'^(N\d+) -> (N\d+) \[label=" (\d+)"', text, re.M)}
ids = {n: v[0] for n, v in nodes.items()}
assert edges == {(ids["main"], ids["parse"]): 60, (ids["parse"], ids["lex"]): 50,
                 (ids["main"], ids["render"]): 40}, edges
assert "Total: 100 samples" in text
PY
[ "$(grep -c "^node " "$T/g.plain")" = 5 ] || fail "dot sees $(grep -c "^node " "$T/g.plain") nodes (4 and the legend)"
curl -sf "${URL}render?query=dotapp.cpu&from=now-1h&until=now&format=dot&maxNodes=2" >"$T/two.dot"
dot -Tplain "$T/two.dot" | grep '^node ' | grep -q . || fail "maxNodes=2: no nodes"
[ "$(dot -Tplain "$T/two.dot" | grep -c '^node ')" = 3 ] ||	# main, parse and the legend
	fail "maxNodes=2 kept: $(dot -Tplain "$T/two.dot" | grep '^node ')"
grep -q 'Showing 2 of 4 nodes' "$T/two.dot" || fail "the legend does not say 2 of 4"

# the Connect querier's PROFILE_FORMAT_DOT, over JSON
curl -sf -H 'Content-Type: application/json' -d "{\"profileTypeID\":\"process_cpu:samples:count:cpu:nanoseconds\",\"labelSelector\":\"{service_name=\\\"dotapp\\\"}\",\"start\":\"$(((now - 3600) * 1000))\",\"end\":\"$(((now + 60) * 1000))\",\"format\":\"PROFILE_FORMAT_DOT\"}" \
	"${URL}querier.v1.QuerierService/SelectMergeStacktraces" >"$T/c.json" ||
	fail "SelectMergeStacktraces DOT failed: $(cat "$T/c.json")"
python3 -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["dot"])' "$T/c.json" >"$T/c.dot" ||
	fail "no dot in $(cat "$T/c.json")"
dot -Tsvg "$T/c.dot" >/dev/null 2>"$T/dot.err" || fail "dot refused Connect's: $(cat "$T/dot.err")"
grep -q 'Total: 100 ' "$T/c.dot" || fail "Connect's graph: $(head -5 "$T/c.dot")"
pass
