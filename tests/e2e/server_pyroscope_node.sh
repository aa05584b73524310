#!/usr/bin/env bash
# A real Pyroscope client, @pyroscope/nodejs from npm, pushes its profiles to kiln serve
# unchanged; the render API returns the functions the Node program burned CPU in.
# The package is installed into build/e2e-npm (test-local, reused across runs).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v node > /dev/null || skip "node is not installed"
command -v npm > /dev/null || skip "npm is not installed"
command -v curl > /dev/null || skip "curl is not installed"
# 0.6 wants node >= 20.20.2; 0.4.7 is the newest whose engines allow Debian's node 18
version=0.6
node -e 'const [a,b,c]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&(b>20||(b==20&&c>=2)))?0:1)' ||
	version=0.4.7
echo "node $(node --version), @pyroscope/nodejs@$version"
npm_dir=$ROOT/build/e2e-npm/pyroscope-$version
if [ ! -d "$npm_dir/node_modules/@pyroscope/nodejs" ]; then
	mkdir -p "$npm_dir"
	npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "@pyroscope/nodejs@$version" > "$T/npm.log" 2>&1 ||
		skip "could not install @pyroscope/nodejs@$version from npm: $(tail -n 3 "$T/npm.log")"
fi

start_server "$T/data" --token node-token --read-token "$READ_TOKEN"
cat > "$T/app.js" <<'JS'
const Pyroscope = require('@pyroscope/nodejs').default;
Pyroscope.init({
	serverAddress: process.env.KILN_URL,
	appName: 'nodeapp',
	authToken: 'node-token',
	flushIntervalMs: 1500,
	tags: { region: 'e2e' },
});
Pyroscope.startWallProfiling();
function kilnBurnAlpha(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }
function kilnBurnBeta(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x += Math.sin(x + 1); return x; }
const stopAt = Date.now() + 5000;
(function loop() {
	kilnBurnAlpha(30);
	kilnBurnBeta(10);
	if (Date.now() < stopAt) setImmediate(loop);
	else Pyroscope.stopWallProfiling().then(() => process.exit(0));
})();
JS
KILN_URL=${URL%/} NODE_PATH=$npm_dir/node_modules DEBUG=pyroscope timeout 60 node "$T/app.js" > "$T/node.log" 2>&1 ||
	fail "node app failed: $(tail -n 20 "$T/node.log")"
grep -q 'rejected' "$T/node.log" && fail "kiln rejected a push: $(grep -A1 rejected "$T/node.log" | head)"

curl -sf -H "$READ_AUTH" "${URL}api/apps" > "$T/apps.json"
grep -q '"name":"nodeapp.cpu"' "$T/apps.json" || fail "no nodeapp.cpu service: $(cat "$T/apps.json")"
curl -sf -H "$READ_AUTH" "${URL}pyroscope/render?query=nodeapp.cpu%7Bregion%3D%22e2e%22%7D&from=now-5m&until=now" > "$T/fb.json"
python3 - "$T/fb.json" <<'PY' || fail "render did not return the Node functions: $(head -c 400 "$T/fb.json")"
import json, sys
fb = json.load(open(sys.argv[1]))["flamebearer"]
names = fb["names"]
assert fb["numTicks"] > 0, "no samples"
for f in ("kilnBurnAlpha", "kilnBurnBeta"):
    assert any(f in n for n in names), f + " missing"
print("node samples:", fb["numTicks"], "names:", len(names))
PY
curl -sf -H "$READ_AUTH" "${URL}pyroscope/label-values?label=region&query=nodeapp.cpu" | grep -q '"e2e"' || fail "tag not stored as a label"
pass
