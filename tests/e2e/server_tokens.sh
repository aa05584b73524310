#!/usr/bin/env bash
# kiln serve's access rules from the command line: --tokens-file with roles and tenants
# (a write token cannot read, a read token cannot write, each tenant sees its own), an
# open server on 0.0.0.0 refused without --insecure-open, and a second server on the same
# data directory or port refused with a message while the first keeps serving.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"

cat > "$T/tokens" <<'TOK'
# agents of two teams, their readers, and one reader of everything
w-acme write tenant=acme
r-acme read tenant=acme
rw-beta rw tenant=beta
r-ops read
TOK
start_server "$T/data" --tokens-file "$T/tokens"
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
ingest() { printf '%s\n' "$2" | code -X POST -H "Authorization: Bearer $1" --data-binary @- \
	"${URL}ingest?name=app.cpu&from=now-10&until=now"; }
render() { code -H "Authorization: Bearer $1" ${2:+-H "X-Scope-OrgID: $2"} \
	"${URL}render?query=app.cpu&format=collapsed&from=now-1h&until=now"; }

[ "$(ingest w-acme 'main;acme_only 3')" = 200 ] || fail "acme upload: $(cat "$T/body")"
[ "$(ingest rw-beta 'main;beta_only 5')" = 200 ] || fail "beta upload: $(cat "$T/body")"
[ "$(ingest r-acme 'main;forged 1')" = 403 ] || fail "a read token uploaded"
[ "$(render w-acme)" = 403 ] || fail "a write token read"
[ "$(render nope)" = 401 ] || fail "a wrong token read"
[ "$(render r-acme)" = 200 ] && grep -qx 'main;acme_only 3' "$T/body" && ! grep -q beta "$T/body" ||
	fail "acme's reader: $(cat "$T/body")"
[ "$(render rw-beta)" = 200 ] && grep -qx 'main;beta_only 5' "$T/body" && ! grep -q acme "$T/body" ||
	fail "beta's reader: $(cat "$T/body")"
[ "$(render r-acme beta)" = 403 ] || fail "acme's token read beta's services"
[ "$(render r-ops beta)" = 200 ] && grep -qx 'main;beta_only 5' "$T/body" || fail "ops with X-Scope-OrgID"
[ "$(code "${URL}healthz")" = 200 ] || fail "the health check needs no token"

port=${URL%/}
port=${port##*:}
"$KILN" serve --listen "127.0.0.1:$port" --data-dir "$T/other" --tokens-file "$T/tokens" > "$T/second.out" 2>&1 &&
	fail "a second server started on port $port"
grep -q "failed to listen" "$T/second.out" || fail "second server, same port: $(cat "$T/second.out")"
"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/data" --tokens-file "$T/tokens" > "$T/second.out" 2>&1 &&
	fail "a second server started on the same data directory"
grep -q "in use by another kiln serve" "$T/second.out" || fail "second server, same data: $(cat "$T/second.out")"
[ "$(render r-acme)" = 200 ] || fail "the first server stopped serving"

"$KILN" serve --listen 0.0.0.0:0 --data-dir "$T/open" > "$T/open.out" 2>&1 && fail "an open server on 0.0.0.0 started"
grep -q -- "--insecure-open" "$T/open.out" || fail "open server message: $(cat "$T/open.out")"
printf 'w-x bogus\n' > "$T/bad-tokens"
"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/bad" --tokens-file "$T/bad-tokens" > "$T/bad.out" 2>&1 &&
	fail "a tokens file with an unknown role was accepted"
grep -q "unknown word 'bogus'" "$T/bad.out" || fail "bad tokens file: $(cat "$T/bad.out")"
pass "roles and tenants from --tokens-file; open, second-port and second-store servers refused"
