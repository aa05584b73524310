#!/usr/bin/env bash
# The flamegraph renderer's tree building, diff tree, runtime colours and search, under node
# (tests/unit/test_flamegraph.js); drawing is checked in a browser by flamegraph_html.sh.
. "$(dirname "$0")/../lib.sh"
command -v node >/dev/null || skip "node is not installed"
node "$ROOT/tests/unit/test_flamegraph.js" || fail "flamegraph.js unit checks"
pass
