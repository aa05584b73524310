#!/usr/bin/env bash
# Pyroscope's Connect push API (what Grafana Alloy and the pyroscope-rs SDKs send): a
# PushRequest encoded by protobufjs (npm) from Pyroscope's own push.proto field numbers,
# gzipped, POSTed as Connect unary with application/proto, carrying a pprof that Go's
# runtime/pprof wrote. kiln stores it under service_name with its labels at the pprof's own
# time, with the totals `go tool pprof` reports; bad requests get Connect errors and store
# nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v node > /dev/null || skip "node is not installed"
command -v go > /dev/null || skip "go is not installed"
npm_dir=$ROOT/build/e2e-npm
if [ ! -d "$npm_dir/node_modules/protobufjs" ]; then
	mkdir -p "$npm_dir"
	npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error protobufjs@7 > "$T/npm.log" 2>&1 ||
		skip "could not install protobufjs from npm: $(tail -n 3 "$T/npm.log")"
fi

go build -o "$T/gopprof" "$ROOT/tests/workloads/gopprof.go" 2>"$T/build.err" ||
	fail "cannot build the Go workload: $(cat "$T/build.err")"
"$T/gopprof" "$T/cpu.pprof" 1500 || fail "Go workload failed"
go_total=$(go tool pprof -top -sample_index=samples "$T/cpu.pprof" 2>/dev/null | grep -o 'of [0-9]* total' | grep -o '[0-9]*')
[ -n "$go_total" ] || fail "go tool pprof cannot read the profile"

start_server "$T/data" --token push-token --read-token "$READ_TOKEN"
cat > "$T/push.js" <<'JS'
// push.js FILE.pprof CONTENT-TYPE TOKEN SERVICE: one Connect unary Push call; prints the
// HTTP status and the body.
const protobuf = require('protobufjs'), fs = require('fs'), zlib = require('zlib');
const [pprof, ctype, token, service] = process.argv.slice(2);
const root = protobuf.parse(`syntax = "proto3"; package push.v1;
message LabelPair { string name = 1; string value = 2; }
message RawSample { bytes raw_profile = 1; string ID = 2; }
message RawProfileSeries { repeated LabelPair labels = 1; repeated RawSample samples = 2; }
message PushRequest { repeated RawProfileSeries series = 1; }`).root;
const Req = root.lookupType('push.v1.PushRequest');
const labels = [{ name: '__name__', value: 'process_cpu' }, { name: '__delta__', value: 'false' },
	{ name: 'region', value: 'e2e' }, { name: 'pod', value: 'web-0' }];
if (service) labels.push({ name: 'service_name', value: service });
const msg = Req.create({ series: [{ labels, samples: [{ rawProfile: fs.readFileSync(pprof), ID: '5d3f0bde-6f0e-4e4b-9d67-0f6a4f0d5e11' }] }] });
const body = ctype === 'garbage' ? Buffer.from('\x0a\xff\xff\xff\x0fnot a proto') : zlib.gzipSync(Req.encode(msg).finish());
fetch(process.env.KILN_URL + '/push.v1.PusherService/Push', {
	method: 'POST', body,
	headers: { 'Content-Type': ctype === 'garbage' ? 'application/proto' : ctype,
		'Content-Encoding': ctype === 'garbage' ? 'identity' : 'gzip', 'Connect-Protocol-Version': '1',
		...(token ? { Authorization: 'Bearer ' + token } : {}) },
}).then(async (r) => { console.log(r.status, await r.text()); });
JS
push() { KILN_URL=${URL%/} NODE_PATH=$npm_dir/node_modules node "$T/push.js" "$@"; }

# refused: each with its Connect error, nothing stored
out=$(push "$T/cpu.pprof" application/proto "" goapp)
[ "${out%% *}" = 401 ] || fail "no token: $out"
out=$(push "$T/cpu.pprof" application/json push-token goapp)
[ "${out%% *}" = 415 ] || fail "JSON body: $out"
out=$(push "$T/cpu.pprof" garbage push-token goapp)
[ "${out%% *}" = 400 ] && echo "$out" | grep -q '"code": *"invalid_argument"' || fail "garbage: $out"
out=$(push "$T/cpu.pprof" application/proto push-token "")
[ "${out%% *}" = 400 ] && echo "$out" | grep -q 'service_name' || fail "no service_name: $out"
curl -sf -H "$READ_AUTH" "${URL}api/apps" | grep -q goapp && fail "a refused push was stored"

out=$(push "$T/cpu.pprof" application/proto push-token goapp)
[ "${out%% *}" = 200 ] || fail "push refused: $out"

curl -sf -H "$READ_AUTH" "${URL}api/apps" > "$T/apps.json"
grep -q '"name":"goapp.cpu"' "$T/apps.json" || fail "no goapp.cpu service: $(cat "$T/apps.json")"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=goapp.cpu%7Bregion%3D%22e2e%22%2Cpod%3D%22web-0%22%7D&from=now-10m&until=now" > "$T/fb.json"
python3 - "$T/fb.json" "$go_total" <<'PY' || fail "render does not hold the Go profile: $(head -c 400 "$T/fb.json")"
import json, sys
fb = json.load(open(sys.argv[1]))["flamebearer"]
total = int(sys.argv[2])
print("kiln", fb["numTicks"], "samples; go tool pprof", total)
assert fb["numTicks"] == total, "totals differ"
for f in ("main.alpha", "main.beta"):
    assert any(f == n for n in fb["names"]), f + " missing"
PY
# stored at the profile's own time (the pprof's time_nanos), not at the upload's
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=goapp.cpu%7B%7D&from=now-1h&until=now-10m" | grep -q '"numTicks":0' ||
	fail "samples stored outside the profile's time"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=pod&query=goapp.cpu" | grep -q '"web-0"' || fail "labels not stored"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/labels?query=goapp.cpu" | grep -q '__delta__' && fail "reserved labels stored"
pass "$go_total samples pushed over Connect"
