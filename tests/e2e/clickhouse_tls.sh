#!/usr/bin/env bash
# The ClickHouse location's credentials and TLS options: over HTTPS with secure=1 and the
# server's certificate as cacert=FILE uploads and queries work (as user kiln, password from
# $KILN_CLICKHOUSE_PASSWORD); without the CA the certificate is refused with a message
# (no silent fallback to plain HTTP), as is a wrong password: both stop the server at start.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need
command -v openssl > /dev/null || skip "openssl is not installed"

CH_TLS=1 ch_start tls
port=$(cat "$T/ch-tls/https_port")
KILN_CLICKHOUSE_PASSWORD=kiln-secret ch_kiln ok \
	--storage "clickhouse://kiln@127.0.0.1:$port/kiln?secure=1&cacert=$T/ch-tls/cert.pem"
now=$(date -u +%s)
code=$(printf 'main;tls 7\n' | ch_upload_pyroscope "$KURL_ok" tls.cpu $((now - 10)) $now)
[ "$code" = 200 ] || fail "upload over HTTPS got $code: $(cat "$T/ingest.reply")"
curl -sf "${KURL_ok}pyroscope/render?query=tls.cpu&from=now-1h&until=now&format=collapsed" |
	grep -qx 'main;tls 7' || fail "the stack did not come back over HTTPS"
[ "$(ch_query tls "SELECT sum(count) FROM kiln.samples")" = 7 ] || fail "the row is not in ClickHouse"

# no CA: the self-signed certificate is refused at start, and the message says so
if "$KILN" serve --listen 127.0.0.1:0 --storage "clickhouse://kiln:kiln-secret@127.0.0.1:$port/kiln?secure=1" \
	> "$T/noca.out" 2> "$T/noca.err"; then
	fail "an unverified certificate was accepted"
fi
grep -q "failed TLS (see cacert=" "$T/noca.err" || fail "unclear TLS error: $(cat "$T/noca.err")"

# a wrong password: refused at start by ClickHouse, reported as such
if "$KILN" serve --listen 127.0.0.1:0 --storage "clickhouse://kiln:wrong@127.0.0.1:$CH_HTTP_tls/kiln" \
	> "$T/pw.out" 2> "$T/pw.err"; then
	fail "a wrong password was accepted"
fi
grep -qi "password" "$T/pw.err" || fail "unclear password error: $(cat "$T/pw.err")"
pass "HTTPS with cacert= and a password from the environment work; a bad CA or password is a clear error"
