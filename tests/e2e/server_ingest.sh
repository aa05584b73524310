#!/usr/bin/env bash
# kiln serve end to end: a gProfiler-protocol upload and Pyroscope folded/lines pushes come
# back from the render API (flamebearer, .col), labels list them, the pprof export is read
# by `go tool pprof`, and bad uploads get their error and store nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"

start_server "$T/data" --token e2e-token --read-token "$READ_TOKEN"
now=$(date -u +%s)
start=$(date -u -d "@$((now - 60))" +%Y-%m-%dT%H:%M:%S)
end=$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%S)

cat > "$T/session.col" <<'COL'
# {"hostname": "e2e-host", "sampling_frequency": 11}
0;;python3;main_[p];compute_[p] 120
0;web-1;nginx;main;ngx_process_events;epoll_wait_[k] 30
1;web-1;nginx;main;ngx_http_handler 50
COL
code=$(gprofiler_upload checkout e2e-token "$T/session.col" "$start" "$end")
[ "$code" = 200 ] || fail "upload got $code: $(cat "$T/upload.reply")"
grep -q '"message":"ok"' "$T/upload.reply" || fail "unexpected reply $(cat "$T/upload.reply")"

# The .col export is the .col layout again: container and process in the prefix.
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=checkout&from=now-1h&until=now&format=collapsed" > "$T/all.col" ||
	fail "render collapsed failed"
grep -qx '0;;python3;main_\[p\];compute_\[p\] 120' "$T/all.col" || fail "python stack missing: $(cat "$T/all.col")"
grep -qx '0;web-1;nginx;main;ngx_http_handler 50' "$T/all.col" || fail "nginx stack missing"
grep -qx '0;web-1;nginx;main;ngx_process_events;epoll_wait_\[k\] 30' "$T/all.col" ||
	fail "nginx's kernel stack missing"
# a round trip: kiln report reads it as a .col (and writes the same stacks), and a
# re-upload of the export keeps the containers and processes as labels
"$KILN" report "$T/all.col" -f col | grep -v '^#' | sort > "$T/report.col" || fail "kiln report failed"
[ "$(grep -v '^#' "$T/all.col" | sort)" = "$(cat "$T/report.col")" ] ||
	fail "kiln report changed the export: $(cat "$T/report.col")"
code=$(gprofiler_upload again e2e-token "$T/all.col" "$start" "$end")
[ "$code" = 200 ] || fail "re-upload got $code: $(cat "$T/upload.reply")"
[ "$(curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=container&query=again")" = '["web-1"]' ] ||
	fail "the re-upload lost the container"
[ "$(curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=process&query=again")" = '["nginx","python3"]' ] ||
	fail "the re-upload lost the processes"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=again&from=now-1h&until=now&format=collapsed" |
	grep -v '^#' | sort > "$T/again.col"
[ "$(grep -v '^#' "$T/all.col" | sort)" = "$(cat "$T/again.col")" ] ||
	fail "the re-upload's export differs: $(cat "$T/again.col")"

# Label filters: container and process came from the .col prefix, host from the body.
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=checkout%7Bcontainer%3D%22web-1%22%7D&format=collapsed" > "$T/web.col"
grep -q python3 "$T/web.col" && fail "container filter kept python3"
grep -q ngx_http_handler "$T/web.col" || fail "container filter lost nginx"
[ "$(curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=host&query=checkout")" = '["e2e-host"]' ] ||
	fail "host label missing"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/labels?query=checkout" | grep -q '"process"' || fail "no process label"

# Flamebearer JSON: total ticks and names.
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=checkout&from=now-1h&until=now" > "$T/fb.json"
python3 - "$T/fb.json" <<'PY' || fail "flamebearer check failed"
import json, sys
fb = json.load(open(sys.argv[1]))
assert fb["flamebearer"]["numTicks"] == 200, fb["flamebearer"]["numTicks"]
assert "compute_[p]" in fb["flamebearer"]["names"]
assert fb["metadata"]["format"] == "single"
assert sum(fb["timeline"]["samples"]) == 200
PY

# Pyroscope pushes: folded and lines, with labels in the name.
printf 'main;handler;parse 70\nmain;handler;render 30\n' |
	curl -sf -X POST -H 'Authorization: Bearer e2e-token' --data-binary @- \
	"${URL}ingest?name=shop.cpu%7Bregion%3Deu%2Cpod%3Da%7D&from=$((now - 10))&until=$now&spyName=gospy&sampleRate=100" ||
	fail "folded push failed"
printf 'main;idle\nmain;idle\nmain;work\n' | gzip |
	curl -sf -X POST -H 'Authorization: Bearer e2e-token' -H 'Content-Encoding: gzip' --data-binary @- \
	"${URL}ingest?name=shop.cpu%7Bregion%3Dus%7D&format=lines&from=$((now - 10))&until=$now" ||
	fail "gzip lines push failed"
curl -sf -H "$READ_AUTH" "${URL}render?query=shop.cpu%7Bregion%3D%22eu%22%7D&format=collapsed" | grep -qx 'main;handler;parse 70' ||
	fail "folded push not returned"
curl -sf -H "$READ_AUTH" "${URL}render?query=shop.cpu%7Bregion%3D~%22u.*%22%7D&format=collapsed" | grep -qx 'main;idle 2' ||
	fail "lines push not returned"
curl -sf -H "$READ_AUTH" "${URL}api/apps" | grep -q '"name":"shop.cpu","spyName":"gospy"' || fail "apps list wrong"

# The diff between two label sets.
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render-diff?leftQuery=shop.cpu%7Bregion%3D%22eu%22%7D&rightQuery=shop.cpu%7Bregion%3D%22us%22%7D&leftFrom=now-1h&leftUntil=now&rightFrom=now-1h&rightUntil=now" > "$T/diff.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["leftTicks"]==100 and d["rightTicks"]==3 and d["metadata"]["format"]=="double"' "$T/diff.json" ||
	fail "diff wrong: $(head -c 300 "$T/diff.json")"

# pprof export read by go tool pprof.
if command -v go > /dev/null; then
	curl -sf -H "$READ_AUTH" -o "$T/checkout.pb.gz" "${URL}pyroscope/render?query=checkout&from=now-1h&until=now&format=pprof" ||
		fail "pprof export failed"
	HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod go tool pprof -top -sample_index=0 "$T/checkout.pb.gz" > "$T/top.txt" 2>&1 ||
		fail "go tool pprof could not read the export: $(cat "$T/top.txt")"
	grep -q 'compute_\[p\]' "$T/top.txt" || fail "pprof top lacks compute: $(cat "$T/top.txt")"
	grep -q "ngx_http_handler" "$T/top.txt" || fail "pprof top lacks nginx"
	cat "$T/top.txt"
	# The export pushed back as a Pyroscope SDK does: multipart with a 'profile' part.
	curl -sf -X POST -H 'Authorization: Bearer e2e-token' -F "profile=@$T/checkout.pb.gz;filename=profile" \
		"${URL}ingest?name=roundtrip%7Bvia%3Dmultipart%7D&from=$((now - 10))&until=$now&spyName=nodespy" ||
		fail "multipart pprof push failed"
	curl -sf -H "$READ_AUTH" "${URL}render?query=roundtrip.cpu&format=collapsed" | grep -qx 'python3;main_\[p\];compute_\[p\] 120' ||
		fail "multipart pprof push not returned"
fi

# Bad uploads: each gets its error, none is stored.
before=$(curl -sf -H "$READ_AUTH" "${URL}api/apps")
code=$(gprofiler_upload checkout wrong-token "$T/session.col" "$start" "$end")
[ "$code" = 401 ] || fail "bad token got $code"
code=$(gprofiler_upload 'bad name' e2e-token "$T/session.col" "$start" "$end")
[ "$code" = 400 ] || fail "bad service name got $code"
printf '0;;p;f notanumber\n' > "$T/bad.col"
code=$(gprofiler_upload broken e2e-token "$T/bad.col" "$start" "$end")
[ "$code" = 422 ] || fail "bad .col got $code"
grep -q '"error"' "$T/upload.reply" || fail "no JSON error: $(cat "$T/upload.reply")"
# gProfiler's client logs "(no message in response)" unless the 4xx body has "message"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])).get("message"); sys.exit(0 if m else 1)' \
	"$T/upload.reply" || fail "no message for gProfiler: $(cat "$T/upload.reply")"
code=$(printf 'garbage' | curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer e2e-token' \
	-H 'Content-Encoding: gzip' --data-binary @- "${URL}ingest?name=junk")
[ "$code" = 400 ] || fail "bad gzip got $code"
code=$(printf 'a;b 1\n' | curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer e2e-token' \
	--data-binary @- "${URL}ingest?name=junk%7Bx%3D")
[ "$code" = 400 ] || fail "bad name got $code"
[ "$(curl -sf -H "$READ_AUTH" "${URL}api/apps")" = "$before" ] || fail "a bad upload was stored"
pass
