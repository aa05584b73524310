#!/usr/bin/env bash
# A php process started in the middle of a session (by a parent given to --pids) is
# picked up: >= 95% of its samples carry _[php] frames, with the right shares and lines.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --php-proc-filter || skip "kiln record has no php reader"
PHP=$(command -v php8.2 || command -v php) || skip "no php (php-cli)"
bash -c "sleep 1.5; '$PHP' '$W/php_ratio.php' 4 >/dev/null" & parent=$!
reap $parent
record -d 5 -f 499 --no-flamegraph --php-mode auto --pids "$parent" >/dev/null
python3 "$W/phpcheck.py" ratio "$COL" "$W/php_ratio.php" ||
	fail "the php started mid-session lacks its PHP frames"
pass
