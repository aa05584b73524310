#!/usr/bin/env bash
# --perf-mode fp still shows the PHP frames (under the process name when the fp walk
# cannot reach execute_ex: Debian's php has no frame pointers); --php-mode disabled, and
# a --php-proc-filter that matches neither the name nor the command line, show none.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --php-proc-filter || skip "kiln record has no php reader"
PHP=$(command -v php8.2 || command -v php) || skip "no php (php-cli)"
"$PHP" "$W/php_ratio.php" 30 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 4 -f 499 --no-flamegraph --perf-mode fp --php-mode auto --pids "$pid" >/dev/null
echo "== --perf-mode fp"
python3 "$W/phpcheck.py" ratio "$COL" "$W/php_ratio.php" || fail "fp mode lost the PHP frames"
for args in "--php-mode disabled" "--php-mode auto --php-proc-filter ^php-fpm"; do
	rm -rf "$T/out"
	record -d 2 -f 199 --no-flamegraph $args --pids "$pid" >/dev/null
	echo "== $args"
	python3 "$W/phpcheck.py" none "$COL" || fail "PHP frames with $args"
	grep -q "^[^#]*;php[0-9.]*;" "$COL" || fail "no samples of php with $args"
done
pass
