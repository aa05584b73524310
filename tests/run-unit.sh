#!/usr/bin/env bash
# run-unit.sh BIN... — runs cmocka unit test binaries (built with ASan/UBSan).
# Prints "unit: N passed, N failed" and exits non-zero when any failed. A binary that runs
# past UNIT_TIMEOUT seconds (900) is killed and counted failed, so a hang cannot hold CI.
set -u
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in "$@"; do
	if timeout --kill-after=10 "${UNIT_TIMEOUT:-900}" "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $t"; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
