#!/usr/bin/env bash
# The binary starts, lists its commands and rejects an unknown one.
. "$(dirname "$0")/../lib.sh"
"$KILN" --help | grep -q record || fail "help does not list record"
"$KILN" --version | grep -q '^kiln ' || fail "no version"
if "$KILN" no-such-command 2>"$T/err"; then fail "unknown command accepted"; fi
grep -q "unknown command 'no-such-command'" "$T/err" || fail "unclear error: $(cat "$T/err")"
pass
