#!/usr/bin/env bash
# --listen: an IPv6 loopback address serves (health, ingest, query); addresses that are not
# ADDR:PORT are refused with a message and a non-zero exit.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"
# ::1 on lo, from the kernel's own table (no iproute2 needed)
[ -r /proc/net/if_inet6 ] || skip "IPv6 is disabled in this kernel (no /proc/net/if_inet6)"
grep -Eq '^0{31}1 .* lo$' /proc/net/if_inet6 || skip "lo has no ::1 (IPv6 disabled on loopback)"

for bad in "::1:4040" "127.0.0.1" "127.0.0.1:70000" "[::1:4040"; do
	"$KILN" serve --listen "$bad" --data-dir "$T/bad" > "$T/bad.out" 2>&1 && fail "--listen $bad was accepted"
	grep -q "failed to parse listen address" "$T/bad.out" || fail "--listen $bad: $(cat "$T/bad.out")"
done

"$KILN" serve --listen '[::1]:0' --data-dir "$T/data" > "$T/serve.out" 2> "$T/serve.err" &
reap $!
for _ in $(seq 100); do
	URL=$(grep -o 'http://[^ ]*' "$T/serve.out" 2>/dev/null) && break
	sleep 0.1
done
case $URL in http://\[::1\]:*/) ;; *) fail "no IPv6 URL: $URL $(cat "$T/serve.err")" ;; esac
curl -sfg "${URL}healthz" | grep -q ok || fail "health check over IPv6 failed"
printf 'main;work 7\n' | curl -sfg -X POST --data-binary @- "${URL}ingest?name=v6app.cpu&from=now-10s&until=now" ||
	fail "ingest over IPv6 failed"
curl -sfg "${URL}pyroscope/render?query=v6app.cpu%7B%7D&from=now-5m&until=now" | grep -q '"numTicks":7' ||
	fail "render over IPv6 failed"
pass "served on $URL"
