#!/usr/bin/env bash
# run-e2e.sh [PATTERN] — runs tests/e2e/*.sh (those whose name contains PATTERN).
# Each test exits 0 pass, 1 fail, 2 skip (printing why), after perf's shell tests.
# Output of each test goes to build/e2e-logs/NAME.log and is shown when it fails.
set -u
cd "$(dirname "$0")/.."
pattern=${1:-}
logs=build/e2e-logs
mkdir -p "$logs"
pass=0 fail=0 skip=0 failed=()
for t in tests/e2e/*.sh; do
	name=$(basename "$t" .sh)
	[ -n "$pattern" ] && [[ "$name" != *"$pattern"* ]] && continue
	start=$(date +%s)
	timeout --kill-after=10 "${E2E_TIMEOUT:-600}" bash "$t" > "$logs/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "ok    $name (${secs}s)" ;;
	2) skip=$((skip + 1)); echo "skip  $name: $(tail -n 1 "$logs/$name.log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL  $name (rc=$rc, ${secs}s)"
	   sed 's/^/    | /' "$logs/$name.log" | tail -n 40 ;;
	esac
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
