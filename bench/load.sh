#!/usr/bin/env bash
# Load on `kiln serve`: wrk drives Pyroscope /ingest uploads (keep-alive, CONNS
# connections) while a second loop renders and lists labels of the same service and
# reads a heavy one (HEAVY_ROWS rows, stored first: gProfiler uploads of 500 processes;
# its timeline and flamegraph), and the server's RSS is sampled. Prints uploads/s,
# upload latency percentiles, errors (non-2xx and socket errors), queries answered and
# their latency (all, and the heavy ones), the server's peak RSS, and acked vs stored
# samples (every acked upload carries 1 sample: the store must hold at least that many;
# the uploads in flight when wrk stops may add a few).
#   bench/load.sh [SECONDS (30)] [CONNS (16)]     KILN=path picks the binary (build/kiln)
#   HEAVY_ROWS=N (100000; 0: no heavy service, the load of earlier figures)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
conns=${2:-16}
kiln=${KILN:-build/kiln}
heavy_rows=${HEAVY_ROWS:-100000}
command -v wrk > /dev/null || { echo "load: wrk is not installed (Debian package wrk)" >&2; exit 2; }
dir=$(mktemp -d /tmp/kiln-load.XXXXXX)
q=
trap 'kill $srv $q 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$kiln" serve --listen 127.0.0.1:0 --data-dir "$dir/data" > "$dir/serve.out" 2> "$dir/serve.err" &
srv=$!
for _ in $(seq 100); do url=$(grep -o 'http://[^ ]*' "$dir/serve.out" 2> /dev/null) && break; sleep 0.1; done
[ -n "${url:-}" ] || { cat "$dir/serve.err"; exit 1; }
# the heavy service: rows of 10 s buckets before the load's, 500 series per upload
now=$(date +%s)
heavy_from=$(( (now - 7200) / 10 * 10 ))
heavy_uploads=$(( (heavy_rows + 499) / 500 ))
python3 - "$url" "$heavy_from" "$heavy_uploads" <<'PY' || exit 1
import gzip, http.client, json, sys, time, urllib.parse
url, base, n = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
c = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
col = '# {"hostname":"h"}\n' + "".join("0;ctr;p%d;main;mod%d;fn%d 1\n" % (j, j % 17, j)
                                     for j in range(500))
t0 = time.monotonic()
for i in range(n):
    body = gzip.compress(json.dumps({"start_time": base + i * 10, "end_time": base + i * 10 + 10,
                                     "hostname": "h", "profile": col}).encode())
    c.request("POST", "/api/v2/profiles?hostname=h", body=body, headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip",
        "GPROFILER-API-KEY": "k", "GPROFILER-SERVICE-NAME": "heavy"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit("load: heavy upload %d: %d" % (i, r.status))
if n:
    print("heavy service: %d rows in %.1f s" % (n * 500, time.monotonic() - t0))
PY
heavy_until=$((heavy_from + heavy_uploads * 10))
cat > "$dir/ingest.lua" <<'LUA'
-- one sample per upload, on 8 series; counts the 2xx answers per thread
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; bad = 0; n = 0 end
function request()
	n = n + 1
	return wrk.format("POST", "/ingest?name=load.cpu%7Bhost%3Dh" .. (n % 8) ..
		"%7D&from=1700000000&until=1700000010", nil, "main;work;leaf" .. (n % 50) .. " 1\n")
end
function response(status, headers, body)
	if status >= 200 and status < 300 then ok = ok + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
	local acked, refused = 0, 0
	for _, t in ipairs(threads) do acked = acked + t:get("ok"); refused = refused + t:get("bad") end
	io.write(string.format("uploads: %d in %.1f s = %.0f/s; acked %d, non-2xx %d, socket errors %d\n",
		summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
		acked, refused, summary.errors.connect + summary.errors.read + summary.errors.write +
		summary.errors.timeout))
	io.write(string.format("upload latency ms: p50 %.2f p90 %.2f p99 %.2f max %.2f\n",
		latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
		latency:percentile(99) / 1e3, latency.max / 1e3))
	io.write(string.format("ACKED %d\n", acked))
end
LUA
# queries while the uploads run: a render and a label listing, back to back, then the
# heavy service's timeline and flamegraph
(
	while :; do
		curl -s -o /dev/null -w '%{http_code} %{time_total}\n' \
			"${url}pyroscope/render?query=load.cpu%7B%7D&from=1699990000&until=1700010000"
		curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "${url}api/labels?query=load.cpu%7B%7D"
		[ "$heavy_rows" -gt 0 ] || continue
		curl -s -o /dev/null -w '%{http_code} %{time_total} heavy\n' \
			"${url}api/series?query=heavy%7B%7D&from=$heavy_from&until=$heavy_until"
		curl -s -o /dev/null -w '%{http_code} %{time_total} heavy\n' \
			"${url}pyroscope/render?query=heavy%7B%7D&from=$heavy_from&until=$heavy_until"
	done > "$dir/queries"
) &
q=$!
( peak=0; while kill -0 $srv 2>/dev/null; do
	r=$(awk '/^VmRSS/ {print $2}' /proc/$srv/status 2>/dev/null || echo 0)
	[ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" > "$dir/peak"
	sleep 0.5
done ) &
wrk -t 2 -c "$conns" -d "${secs}s" --timeout 30s -s "$dir/ingest.lua" "$url" > "$dir/wrk.out" 2>&1
kill $q 2>/dev/null || true
wait $q 2>/dev/null || true
grep -E '^(uploads|upload latency)' "$dir/wrk.out"
acked=$(awk '/^ACKED/ {print $2}' "$dir/wrk.out")
percentiles() {	# LABEL: the sorted "code seconds" lines on stdin
	awk -v what="$1" '{n++; t[n]=$2; if ($1 != 200) bad++} END {
	if (n) printf "%s: %d answered, non-200 %d; latency ms p50 %.1f p90 %.1f p99 %.1f max %.1f\n",
		what, n, bad + 0, t[int(n * 0.5) + 1] * 1000, t[int(n * 0.9) + 1] * 1000,
		t[int(n * 0.99) + 1] * 1000, t[n] * 1000 }'
}
sort -k2 -n "$dir/queries" | percentiles queries
grep heavy "$dir/queries" | sort -k2 -n | percentiles "heavy queries"
stored=$(curl -s "${url}pyroscope/render?query=load.cpu%7B%7D&from=1699990000&until=1700010000" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["flamebearer"]["numTicks"])')
echo "server peak RSS: $(( $(cat "$dir/peak" 2>/dev/null || echo 0) / 1024 )) MB"
# uploads in flight when wrk stops may be stored without wrk seeing their answer
echo "acked $acked, stored $stored: $([ "$stored" -ge "$acked" ] && echo "none lost" ||
	echo "$((acked - stored)) LOST")"
