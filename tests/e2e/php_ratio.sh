#!/usr/bin/env bash
# Known-answer PHP workload on Debian's php: Work::alpha and beta share the CPU 70/30
# through <main> -> dispatch; >= 95% of the samples carry _[php] frames, merged after
# execute_ex, with the shares within 3 sigma and the right files and lines.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --php-proc-filter || skip "kiln record has no php reader"
PHP=$(command -v php8.2 || command -v php) || skip "no php (php-cli)"
"$PHP" "$W/php_ratio.php" 60 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 4 -f 499 --no-flamegraph --php-mode auto --pids "$pid" >/dev/null
python3 "$W/phpcheck.py" ratio "$COL" "$W/php_ratio.php" || fail "wrong PHP frames or shares"
pass
