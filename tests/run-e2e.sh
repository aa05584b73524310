#!/usr/bin/env bash
# run-e2e.sh [PATTERN] — runs tests/e2e/*.sh (those whose name contains PATTERN).
# Each test exits 0 pass, 1 fail, 2 skip (printing why), after perf's shell tests.
# Output of each test goes to build/e2e-logs/NAME.log and is shown when it fails.
# A test whose known answer is a share of sampled stacks says so with a line
# '# e2e: sampled' and gets one more recording when it fails: a 3-sigma bound on ~100
# shares misses a few times in a hundred runs by chance, and a real bias misses twice.
# The first run's log stays in NAME.first.log and the rerun is listed in the summary.
set -u
cd "$(dirname "$0")/.."
pattern=${1:-}
logs=build/e2e-logs
mkdir -p "$logs"
pass=0 fail=0 skip=0 failed=() reran=()
run() {
	timeout --kill-after=10 "${E2E_TIMEOUT:-600}" bash "$1" > "$2" 2>&1
}
for t in tests/e2e/*.sh; do
	name=$(basename "$t" .sh)
	[ -n "$pattern" ] && [[ "$name" != *"$pattern"* ]] && continue
	start=$(date +%s)
	run "$t" "$logs/$name.log"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && grep -q '^# e2e: sampled' "$t"; then
		mv "$logs/$name.log" "$logs/$name.first.log"
		echo "RERUN $name (rc=$rc): $(grep -v '^+' "$logs/$name.first.log" | tail -n 1)"
		reran+=("$name")
		run "$t" "$logs/$name.log"
		rc=$?
	fi
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "ok    $name (${secs}s)" ;;
	2) skip=$((skip + 1)); echo "skip  $name: $(tail -n 1 "$logs/$name.log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL  $name (rc=$rc, ${secs}s)"
	   sed 's/^/    | /' "$logs/$name.log" | tail -n 40 ;;
	esac
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ ${#reran[@]} -gt 0 ] && echo "e2e: recorded twice after a failure: ${reran[*]}"
[ "$fail" -eq 0 ]
