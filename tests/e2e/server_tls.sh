#!/usr/bin/env bash
# kiln serve --tls-cert/--tls-key with a self-signed certificate made here (openssl):
# HTTPS verified against it serves, unverified or plain HTTP gets nothing; the agent
# (kiln record -u, as root) delivers with --ca-file, does not with the system's CAs (the
# session is spooled, not sent in clear), and delivers with --insecure-skip-verify, which
# it says loudly. Half a TLS option and an unreadable key are refused at start.
. "$(dirname "$0")/../lib.sh"
command -v curl > /dev/null || skip "curl is not installed"
command -v openssl > /dev/null || skip "openssl is not installed (scripts/deps/server.txt)"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 > "$T/openssl.log" 2>&1 ||
	fail "openssl: $(cat "$T/openssl.log")"

"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/bad" --tls-cert "$T/cert.pem" > "$T/bad.out" 2>&1 &&
	fail "--tls-cert without --tls-key was accepted"
grep -q "both a certificate and a key" "$T/bad.out" || fail "half TLS: $(cat "$T/bad.out")"
"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/bad" --tls-cert "$T/cert.pem" --tls-key "$T/nope.pem" \
	> "$T/bad.out" 2>&1 && fail "an unreadable key was accepted"
grep -q "nope.pem" "$T/bad.out" || fail "unreadable key: $(cat "$T/bad.out")"

"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/data" --token w-tls --read-token r-tls \
	--tls-cert "$T/cert.pem" --tls-key "$T/key.pem" > "$T/serve.out" 2> "$T/serve.err" &
reap $!
for _ in $(seq 100); do
	URL=$(grep -o 'https://[^ ]*' "$T/serve.out" 2>/dev/null) && break
	sleep 0.1
done
[ -n "$URL" ] || fail "no https URL: $(cat "$T/serve.out" "$T/serve.err")"
curl -sf --cacert "$T/cert.pem" "${URL}healthz" | grep -q ok || fail "verified health check failed"
curl -s -o /dev/null "${URL}healthz" && fail "an unverified client got an answer"
plain=http${URL#https}
curl -s -o /dev/null -m 5 "${plain}healthz" && fail "plain HTTP got an answer"
printf 'main;over_tls 4\n' | curl -sf --cacert "$T/cert.pem" -H 'Authorization: Bearer w-tls' -X POST \
	--data-binary @- "${URL}ingest?name=tls.cpu&from=now-10&until=now" > /dev/null || fail "ingest over TLS"
curl -sf --cacert "$T/cert.pem" -H 'Authorization: Bearer r-tls' \
	"${URL}render?query=tls.cpu&format=collapsed&from=now-1h&until=now" | grep -qx 'main;over_tls 4' ||
	fail "render over TLS"

[ "$(id -u)" -eq 0 ] || pass "served over TLS (the agent part needs root)"
rec() {	# rec NAME ARGS...: one 1 s session uploaded to the server
	local name=$1 rc
	shift
	# something to sample: an idle machine gives cpu-clock nothing, and an empty session
	# would prove nothing about delivery
	( while :; do :; done ) &
	local busy=$!
	"$KILN" record -d 1 -f 49 --no-flamegraph -o "$T/out-$name" --spool-dir "$T/spool-$name" \
		--python-mode disabled -u --server-host "$URL" --token w-tls --service-name "$name" "$@" \
		> "$T/rec-$name.log" 2>&1
	rc=$?
	kill "$busy"
	return $rc
}
ticks() {
	curl -sf --cacert "$T/cert.pem" -H 'Authorization: Bearer r-tls' \
		"${URL}pyroscope/render?query=$1&from=now-10m&until=now" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["flamebearer"]["numTicks"])' 2>/dev/null ||
		echo 0
}
rec verified --ca-file "$T/cert.pem" || fail "record with --ca-file: $(tail -5 "$T/rec-verified.log")"
[ "$(ticks verified)" -gt 0 ] || fail "nothing delivered with --ca-file"
rec unverified
[ "$(ticks unverified)" = 0 ] || fail "delivered to a server the system's CAs do not know"
ls "$T/spool-unverified"/*.json.gz > /dev/null 2>&1 || fail "the refused session was not spooled"
grep -qi "certificate" "$T/rec-unverified.log" || fail "no certificate message: $(tail -5 "$T/rec-unverified.log")"
rec insecure --insecure-skip-verify || fail "record --insecure-skip-verify: $(tail -5 "$T/rec-insecure.log")"
grep -q "not verifying the certificate" "$T/rec-insecure.log" || fail "no warning for --insecure-skip-verify"
[ "$(ticks insecure)" -gt 0 ] || fail "nothing delivered with --insecure-skip-verify"
pass "TLS served and verified; agent: --ca-file delivers, system CAs refuse, --insecure-skip-verify warns"
