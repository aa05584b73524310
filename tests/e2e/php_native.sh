#!/usr/bin/env bash
# PHP frames merged into the native stack: a call into an extension function
# (gzcompress) shows zlib's native frames above it and its PHP caller; a callback run
# by array_map sits in its own execute_ex activation, under array_map_[php].
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --php-proc-filter || skip "kiln record has no php reader"
PHP=$(command -v php8.2 || command -v php) || skip "no php (php-cli)"
"$PHP" "$W/php_zlib.php" 60 >/dev/null & pid=$!
reap $pid
sleep 0.5
record -d 4 -f 499 --no-flamegraph --php-mode auto --pids "$pid" >/dev/null
python3 "$W/phpcheck.py" native "$COL" gzcompress 'deflate|libz' 0.8 ||
	fail "zlib's frames are missing above gzcompress"
grep -q "squash ($W/php_zlib.php:[0-9]*)_\[php\];gzcompress_\[php\]" "$COL" ||
	fail "gzcompress is not under squash"
python3 "$W/phpcheck.py" callback "$COL" spin array_map 0.9 ||
	fail "the callback's activation is not merged at its own execute_ex"
pass
