#!/usr/bin/env bash
# The web UI in Debian's chromium, driven by playwright-core, against a real kiln serve
# holding profiles uploaded through its API (tests/browser/ui_test.js): loads cleanly,
# picks a service, draws, zooms, searches, sorts, filters, diffs, downloads, and restores
# the view from a shared URL. Screenshots: build/artifacts/ui-*.png.
. "$(dirname "$0")/../lib.sh"
command -v node > /dev/null || skip "node is not installed (scripts/deps/ui.txt)"
[ -x /usr/bin/chromium ] || skip "chromium is not installed (scripts/deps/ui.txt)"
"$ROOT/tests/browser/install.sh" || fail "failed to install playwright-core from tests/browser/package-lock.json"
mkdir -p "$ROOT/build/artifacts"
ARTIFACTS="$ROOT/build/artifacts" KILN="$KILN" node "$ROOT/tests/browser/ui_test.js" || fail "browser checks"
pass "web UI checks in chromium; screenshots in build/artifacts/"
