#!/usr/bin/env bash
# The web UI in Debian's chromium against a kiln serve with write and read tokens
# (tests/browser/auth_test.js): the page asks for a token, refuses a wrong or write token,
# shows the profile with the read token, keeps it for the session, downloads with it.
. "$(dirname "$0")/../lib.sh"
command -v node > /dev/null || skip "node is not installed (scripts/deps/ui.txt)"
[ -x /usr/bin/chromium ] || skip "chromium is not installed (scripts/deps/ui.txt)"
"$ROOT/tests/browser/install.sh" || fail "failed to install playwright-core from tests/browser/package-lock.json"
mkdir -p "$ROOT/build/artifacts"
ARTIFACTS="$ROOT/build/artifacts" KILN="$KILN" node "$ROOT/tests/browser/auth_test.js" || fail "browser checks"
pass "token form, session token and downloads in chromium; screenshot build/artifacts/ui-auth.png"
