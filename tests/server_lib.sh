# Helpers for the server's end-to-end tests, sourced after tests/lib.sh.

# The read token the tests give their servers (--read-token "$READ_TOKEN") and the header
# their queries send.
READ_TOKEN=e2e-reader
READ_AUTH="Authorization: Bearer $READ_TOKEN"

# start_server DATA_DIR [ARGS...]: starts kiln serve on a free loopback port, sets $URL
# (ending in /) and $SERVER_PID, and registers the process for cleanup.
start_server() {
	local data=$1
	shift
	"$KILN" serve --listen 127.0.0.1:0 --data-dir "$data" "$@" > "$T/serve.out" 2> "$T/serve.err" &
	SERVER_PID=$!
	reap "$SERVER_PID"
	for _ in $(seq 100); do
		URL=$(grep -o 'http://[^ ]*' "$T/serve.out" 2>/dev/null)
		[ -n "$URL" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/serve.err"
	fail "server did not start"
}

# gprofiler_upload SERVICE TOKEN COLFILE START END: posts a .col file as gProfiler's agent
# does (gzip JSON). Prints the HTTP status.
gprofiler_upload() {
	local service=$1 token=$2 col=$3 start=$4 end=$5
	python3 - "$col" "$start" "$end" > "$T/upload.json" <<'PY'
import json, sys
col, start, end = sys.argv[1], sys.argv[2], sys.argv[3]
print(json.dumps({"start_time": start, "end_time": end, "hostname": "e2e-host",
                  "profile": open(col).read(), "cpu_avg": 1.5, "mem_avg": 20.0,
                  "spawn_time": start, "gpid": 0}))
PY
	gzip -c "$T/upload.json" > "$T/upload.json.gz"
	curl -s -o "$T/upload.reply" -w '%{http_code}' -X POST --data-binary @"$T/upload.json.gz" \
		-H 'Content-Encoding: gzip' -H 'Content-Type: application/json' \
		-H "GPROFILER-API-KEY: $token" -H "GPROFILER-SERVICE-NAME: $service" \
		"${URL}api/v2/profiles?hostname=e2e-host"
}
