#!/usr/bin/env bash
# A real php-fpm pool (Debian's php-fpm8.2 with its php.ini, our pool file) on a unix
# socket, serving requests sent with cgi-fcgi over FastCGI: its worker is profiled and
# shows Controller::handle -> render -> checksum as _[php] frames. With opcache (Debian's
# default) and without it, when every request compiles the script again at new addresses.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --php-proc-filter || skip "kiln record has no php reader"
FPM=$(command -v php-fpm8.2 || ls /usr/sbin/php-fpm* 2>/dev/null | head -n 1)
[ -n "$FPM" ] && [ -x "$FPM" ] || skip "no php-fpm"
command -v cgi-fcgi >/dev/null || skip "no cgi-fcgi (libfcgi-bin)"
request() {
	SCRIPT_FILENAME=$W/php_fpm_app.php REQUEST_METHOD=GET cgi-fcgi -bind -connect "$T/fpm.sock"
}
for opcache in 1 0; do
	echo "== opcache.enable=$opcache"
	rm -rf "$T/out" "$T/fpm.sock"
	cat >"$T/fpm.conf" <<CONF
[global]
pid = $T/fpm.pid
error_log = $T/fpm.log
daemonize = no
[test]
user = root
listen = $T/fpm.sock
pm = static
pm.max_children = 1
CONF
	"$FPM" -R -F -y "$T/fpm.conf" -d "opcache.enable=$opcache" & master=$!
	reap $master
	for _ in $(seq 100); do [ -S "$T/fpm.sock" ] && break; sleep 0.1; done
	[ -S "$T/fpm.sock" ] || fail "php-fpm did not start: $(cat "$T/fpm.log" 2>/dev/null)"
	request | grep -q '^sum ' || fail "php-fpm does not answer: $(request 2>&1 | head -n 5)"
	worker=$(pgrep -P "$master" | head -n 1)
	[ -n "$worker" ] || fail "no php-fpm worker"
	( while :; do request >/dev/null 2>&1; done ) & load=$!
	reap $load
	record -d 4 -f 499 --no-flamegraph --php-mode phpspy --php-proc-filter php-fpm \
		--pids "$worker" >/dev/null
	kill $load
	python3 "$W/phpcheck.py" frac "$COL" php-fpm 0.95 checksum || {
		grep php-fpm "$COL" | grep -v "_.php." | grep execute_ex | cut -c1-400 | head -n 8
		fail "the worker's PHP frames are missing"
	}
	grep -q "Controller::handle ($W/php_fpm_app.php:[0-9]*)_\[php\];render ($W/php_fpm_app.php:[0-9]*)_\[php\];checksum ($W/php_fpm_app.php:[0-9]*)_\[php\]" "$COL" ||
		fail "no Controller::handle -> render -> checksum stack"
	! grep -q '\[unknown\]_\[php\]' "$COL" || fail "unnamed PHP frames"
	kill $master
	wait $master 2>/dev/null
done
pass
