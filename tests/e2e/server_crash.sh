#!/usr/bin/env bash
# kill -9 of the server while uploads are in flight loses nothing that was acknowledged:
# every upload that got a 200 before the kill is in the database after a restart.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"

start_server "$T/data"
url=$URL
now=$(date -u +%s)
# A body of many stacks, so that the kill tends to land inside a transaction.
for i in $(seq 2000); do echo "main;filler_$i;leaf_$((i % 97)) 1"; done > "$T/filler.txt"

# Three writers; each records the uploads the server acknowledged.
for w in 1 2 3; do
	(
		i=0
		while :; do
			i=$((i + 1))
			{ cat "$T/filler.txt"; echo "main;ack;w${w}_u$i 1"; } > "$T/body.$w"
			code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$T/body.$w" \
				"${url}ingest?name=crash.cpu&from=$((now - 10))&until=$now" 2>/dev/null) || break
			[ "$code" = 200 ] && echo "main;ack;w${w}_u$i 1" >> "$T/acked.$w"
			[ "$code" = 000 ] && break
		done
	) &
	reap $!
done
sleep 3
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
sleep 0.5
cat "$T"/acked.* > "$T/acked" 2>/dev/null
n=$(wc -l < "$T/acked")
[ "$n" -gt 0 ] || fail "no upload was acknowledged before the kill"

start_server "$T/data"
code=$(curl -s -o "$T/render" -w '%{http_code}' \
	"${URL}render?query=crash.cpu&from=now-1h&until=now&format=collapsed&maxNodes=1000000")
# a failed render would read as every upload lost: say so instead
[ "$code" = 200 ] || fail "render after the restart got $code: $(head -c 300 "$T/render") $(tail -5 "$T/serve.err")"
grep '^main;ack;' "$T/render" | sort > "$T/stored"
missing=$(sort "$T/acked" | comm -23 - "$T/stored" | wc -l)
echo "acknowledged $n uploads before kill -9, stored after restart $(wc -l < "$T/stored"), missing $missing"
[ "$missing" -eq 0 ] || fail "$missing acknowledged uploads were lost: $(sort "$T/acked" | comm -23 - "$T/stored" | head -3)"
pass "$n acknowledged uploads all survived kill -9"
