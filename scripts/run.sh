#!/usr/bin/env bash
# `make run`: start kiln serve (embedded SQLite store and web UI on 127.0.0.1:4040) and a
# continuous kiln record that uploads each session to it, until Ctrl-C.
# KILN_PORT, KILN_DATA, KILN_OUT, KILN_DURATION (seconds per session), KILN_FREQ (Hz) and
# KILN_TOKEN (the token; default: random, kept in $KILN_DATA/.run-token) override. The one
# token is the agent's write token and the web UI's read token.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${KILN_PORT:-4040}
data=${KILN_DATA:-./kiln-data}
out=${KILN_OUT:-./kiln-out}
secs=${KILN_DURATION:-30}
freq=${KILN_FREQ:-99}
token=${KILN_TOKEN:-$(cat "$data/.run-token" 2>/dev/null || head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}
mkdir -p "$data" && printf '%s\n' "$token" > "$data/.run-token" && chmod 600 "$data/.run-token"
[ "$(id -u)" -eq 0 ] || echo "kiln: not root; run 'sudo make run' if perf events are refused"

# The server runs in its own session so that Ctrl-C reaches the agent first: the agent
# uploads the session in progress, then the server is stopped.
setsid ./build/kiln serve --listen "127.0.0.1:$port" --data-dir "$data" --token "$token" --read-token "$token" &
server=$!
agent=""
stop() {
	trap - EXIT INT TERM
	[ -n "$agent" ] && kill -TERM "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	kill -TERM "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	exit 0
}
trap stop EXIT INT TERM
for _ in $(seq 50); do
	curl -fsS "http://127.0.0.1:$port/api/v1/health_check" >/dev/null 2>&1 && break
	kill -0 $server 2>/dev/null || { echo "kiln: the server did not start" >&2; exit 1; }
	sleep 0.2
done
echo "kiln: web UI at http://127.0.0.1:$port/ — the first session appears after ${secs}s"
echo "kiln: the UI asks for a token: $token (kept in $data/.run-token)"
echo "kiln: local files in $out (last_flamegraph.html); Ctrl-C stops both"
./build/kiln record -c -d "$secs" -f "$freq" -o "$out" --rotating-output \
	-u --server-host "http://127.0.0.1:$port" --token "$token" --service-name "$(hostname)" &
agent=$!
wait $agent
