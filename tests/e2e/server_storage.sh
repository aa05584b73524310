#!/usr/bin/env bash
# kiln serve --storage: the store is picked by the location's scheme. An unknown scheme
# exits non-zero naming the known ones (and creates nothing); sqlite:PATH stores in that
# file and keeps the data across a restart; --data-dir and --storage together are refused.
. "$(dirname "$0")/../lib.sh"
command -v curl > /dev/null || skip "curl is not installed"

cd "$T" || fail "no temp dir"
for url in foo://x bar+baz://h:9000/db; do
	scheme=${url%%:*}
	if "$KILN" serve --listen 127.0.0.1:0 --storage "$url" > "$T/bad.out" 2> "$T/bad.err"; then
		fail "--storage $url was accepted"
	fi
	grep -qF "unknown storage scheme '$scheme' (known: sqlite, clickhouse)" "$T/bad.err" ||
		fail "unclear error for $url: $(cat "$T/bad.err")"
	[ -e "$scheme:" ] && fail "--storage $url created '$scheme:'"
done
if "$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/a" --storage "sqlite:$T/b.db" \
	> "$T/both.out" 2> "$T/both.err"; then
	fail "--data-dir with --storage was accepted"
fi
grep -q 'give one' "$T/both.err" || fail "unclear error for both: $(cat "$T/both.err")"

# serve_sqlite: starts kiln serve on sqlite:$T/own.db, sets URL and PID.
serve_sqlite() {
	"$KILN" serve --listen 127.0.0.1:0 --storage "sqlite:$T/own.db" > "$T/serve.out" 2> "$T/serve.err" &
	PID=$!
	reap "$PID"
	URL=
	for _ in $(seq 100); do
		URL=$(grep -o 'http://[^ ]*' "$T/serve.out" 2>/dev/null) && [ -n "$URL" ] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "server did not start: $(cat "$T/serve.err")"
}

serve_sqlite
now=$(date -u +%s)
printf 'main;work;spin 40\nmain;idle 2\n' |
	curl -sf -X POST --data-binary @- "${URL}ingest?name=own.cpu&from=$((now - 10))&until=$now" ||
	fail "push failed"
[ -s "$T/own.db" ] || fail "sqlite:$T/own.db was not written"
kill "$PID" && wait "$PID"

serve_sqlite
curl -sf "${URL}pyroscope/render?query=own.cpu&from=now-1h&until=now&format=collapsed" > "$T/own.col" ||
	fail "render failed"
grep -qx 'main;work;spin 40' "$T/own.col" || fail "stack lost across restart: $(cat "$T/own.col")"
grep -qx 'main;idle 2' "$T/own.col" || fail "stack lost across restart: $(cat "$T/own.col")"
[ -e "$T/kiln-data" ] && fail "a default data dir was created beside sqlite:PATH"
pass "sqlite:PATH stores and reopens; unknown schemes are refused"
