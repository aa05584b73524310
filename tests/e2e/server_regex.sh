#!/usr/bin/env bash
# Issue 19, finding 2: a regular expression in a query can no longer exhaust the server.
# The attack (20 and 22 chained '+', which took glibc's regcomp 4 s / 899 MB and 16 s /
# 3.27 GB, nested counted repetition of nullable groups, a back-reference, an overlong
# pattern) is sent on every query route, several at once, without a token; each is
# answered 400 with a message naming the expression (sent with a read token: an
# authorized client gets no further), while a normal client's health check,
# upload and render are served; the server's peak RSS stays far below the attack's cost.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"

start_server "$T/data" --token secret --read-token "$READ_TOKEN"
printf 'main;work 7\n' | curl -sf -X POST --data-binary @- \
	"${URL}ingest?name=rx.cpu%7Bhost%3Dweb-1%7D&from=now-10s&until=now&key=secret" > /dev/null ||
	fail "baseline upload failed"

long=$(printf 'a%.0s' $(seq 1100))
attacks=(
	'a++++++++++++++++++++'
	'a++++++++++++++++++++++'
	'((((a*){1,32}){1,64}){1,64})'
	'((a{1000}){1000}){1000}'
	'(a)\\1'	# a selector value unescapes once: the pattern is (a)\1
	"$long"
)
urlenc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
i=0
for a in "${attacks[@]}"; do
	sel=$(urlenc "rx.cpu{host=~\"$a\"}")
	for route in "pyroscope/render?query=$sel&from=now-1h&until=now" \
		     "pyroscope/labels?query=$sel" "pyroscope/label-values?label=host&query=$sel"; do
		curl -s -m 60 -H "$READ_AUTH" -o "$T/attack.$i" -w '%{http_code}\n' "${URL}${route}" \
			> "$T/attack.$i.code" &
		i=$((i + 1))
	done
done
# the normal client, during the attack
curl -sf -m 30 "${URL}healthz" | grep -q ok || fail "health check failed during the attack"
printf 'main;work 5\n' | curl -sf -m 30 -X POST --data-binary @- \
	"${URL}ingest?name=rx.cpu%7Bhost%3Dweb-2%7D&from=now-10s&until=now&key=secret" > /dev/null ||
	fail "upload failed during the attack"
curl -sf -m 30 -H "$READ_AUTH" "${URL}pyroscope/render?query=rx.cpu%7Bhost%3D~%22web-%5B0-9%5D%2B%22%7D&from=now-1h&until=now" |
	grep -q '"numTicks":12' || fail "a normal regex render did not see both uploads"
wait_attacks() { for p in $(jobs -p); do [ "$p" = "$SERVER_PID" ] || wait "$p"; done; }
wait_attacks
for ((j = 0; j < i; j++)); do
	code=$(cat "$T/attack.$j.code")
	[ "$code" = 400 ] || fail "attack $j answered $code: $(head -c 300 "$T/attack.$j")"
	grep -q 'regular expression' "$T/attack.$j" || fail "attack $j: no message: $(head -c 300 "$T/attack.$j")"
done
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")
[ "$hwm" -lt 400000 ] || fail "server peak RSS ${hwm} kB during the attack"
pass "$i regex attacks refused with 400, normal client served, peak RSS ${hwm} kB"
