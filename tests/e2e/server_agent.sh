#!/usr/bin/env bash
# The real agent uploads to the real server on loopback: `kiln record -u` sessions come
# back from the query API with the workload's stacks; with the server down for a session,
# the agent spools it and delivers every session exactly once when the server is back.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
need_root
command -v curl > /dev/null || skip "curl is not installed"
"$KILN" record --help 2>&1 | grep -q -- '--spool-dir' || skip "kiln record has no upload yet"

start_server "$T/data" --token agent-token --read-token "$READ_TOKEN"
port=${URL%/}
port=${port##*:}
cat > "$T/spin.py" <<'PY'
def kiln_spin():
    x = 0
    while True:
        x += 1
kiln_spin()
PY
python3 "$T/spin.py" &
reap $!

"$KILN" record -d 2 -f 99 --no-flamegraph -o "$T/out" --python-mode disabled \
	-u --server-host "$URL" --token agent-token --service-name agent-e2e > "$T/rec.log" 2>&1 ||
	fail "record failed: $(tail -n 5 "$T/rec.log")"
# The server holds exactly the session the agent wrote, from the process name down.
ticks() {
	curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=$1&from=now-10m&until=now" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["flamebearer"]["numTicks"])'
}
col_samples() { cat "$@" | grep -v '^#' | awk '{ s += $NF } END { print s + 0 }'; }
sent=$(col_samples "$T/out"/profile_*.col)
got=$(ticks agent-e2e)
[ "$sent" -gt 0 ] && [ "$sent" = "$got" ] || fail "server has $got samples, the agent wrote $sent"
top=$(grep -v '^#' "$T/out"/profile_*.col | sort -t' ' -k2 -rn | head -n 1)
want=$(echo "$top" | cut -d';' -f3-)
# the export is the .col layout, 0;<container>;<process>;...: compare from the process on
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=agent-e2e&from=now-10m&until=now&format=collapsed" |
	cut -d';' -f3- | grep -qxF "$want" || fail "the agent's top stack is not on the server: $want"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=host&query=agent-e2e" | grep -q "$(hostname)" ||
	fail "host label is not this machine"

# Server down for the first session: it is spooled, then sent once the server is back.
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
"$KILN" record -c -d 2 -f 49 --no-flamegraph -o "$T/out2" --spool-dir "$T/spool" --python-mode disabled \
	-u --server-host "http://127.0.0.1:$port" --token agent-token --service-name spooled > "$T/rec2.log" 2>&1 &
rec=$!
reap "$rec"
# The first session ends after 2 s and the start-up scan, which takes over 10 s on a
# loaded 2-CPU host: waited for up to 2 minutes.
for _ in $(seq 1200); do
	ls "$T/spool"/*.json.gz > /dev/null 2>&1 && break
	sleep 0.1
done
ls "$T/spool"/*.json.gz > /dev/null 2>&1 || fail "no session was spooled: $(tail -n 5 "$T/rec2.log")"
"$KILN" serve --listen "127.0.0.1:$port" --data-dir "$T/data" --token agent-token --read-token "$READ_TOKEN" > "$T/serve2.out" 2>&1 &
reap $!
# The agent retries the spool at each session's end: up to 2 minutes for it to empty.
for _ in $(seq 1200); do
	ls "$T/spool"/*.json.gz > /dev/null 2>&1 || break
	sleep 0.1
done
kill -INT "$rec"
wait "$rec"
ls "$T/spool"/*.json.gz > /dev/null 2>&1 && fail "spool not emptied: $(ls "$T/spool")"
sent=$(col_samples "$T/out2"/profile_*.col)
got=$(ticks spooled)
echo "sessions: $(ls "$T/out2"/profile_*.col | wc -l), samples written $sent, on the server $got"
[ "$sent" -gt 0 ] && [ "$sent" = "$got" ] || fail "server has $got samples, the agent wrote $sent"
pass
