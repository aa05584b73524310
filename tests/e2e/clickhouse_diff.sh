#!/usr/bin/env bash
# The ClickHouse backend answers as SQLite does: the same uploads (gProfiler .col,
# Pyroscope /ingest folded and pprof, Connect push) go to a SQLite-backed kiln server, to
# one on a one-node ClickHouse, and spread over two kiln servers on a two-shard ClickHouse
# cluster (Distributed tables, no ZooKeeper); render, render-diff, series, labels, label
# values and apps, and the Connect querier calls Grafana makes, then give the same answers
# on all four servers, and ClickHouse really holds the rows on both shards. A pprof with
# span_id labels is stored with its span companion in one write (one batch on
# ClickHouse): SelectMergeSpanProfile answers alike too.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need
command -v go > /dev/null || skip "go is not installed (it writes the pprof fixtures)"
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod HOME=${HOME:-/root}

go build -o "$T/goheap" "$ROOT/tests/workloads/goheap.go" 2> "$T/build.err" ||
	fail "cannot build the Go workload: $(cat "$T/build.err")"
"$T/goheap" "$T/heap.pprof" "$T/cpu.pprof" || fail "Go workload failed"

ch_start one
ch_cluster s1 s2
ch_kiln lite --storage "sqlite:$T/lite.db"
ch_kiln one --storage "clickhouse://127.0.0.1:$CH_HTTP_one/kiln"
ch_kiln c1 --storage "$CH_CLUSTER_URL"
ch_kiln c2 --storage "$CH_CLUSTER_URL"

now=$(date -u +%s)
now=$((now / 10 * 10))
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S; }
cat > "$T/a.col" <<'COL'
# {"hostname": "e2e-host", "sampling_frequency": 11}
0;;python3;main_[p];compute_[p] 120
0;web-1;nginx;main;ngx_process_events;epoll_wait_[k] 30
1;web-1;nginx;main;ngx_http_handler 50
COL
cat > "$T/b.col" <<'COL'
# {"hostname": "e2e-host", "sampling_frequency": 11}
0;;python3;main_[p];compute_[p] 80
0;;python3;main_[p];io_[p];read_[k] 15
2;web-2;nginx;main;ngx_http_handler 7
COL
PYTHONPATH="$ROOT/tests/tools" python3 - "$T/heap.pprof" > "$T/push.bin" <<'PY'
import sys
from protowire import field, label
series = (label("__name__", "memory") + label("service_name", "connectapp") +
          label("pod", "web-1") + field(2, field(1, open(sys.argv[1], "rb").read())))
sys.stdout.buffer.write(field(1, series))
PY
# a CPU pprof whose samples carry span ids: main;alpha 7 in span ...aa, main;beta 3 in
# span ...bb, main;idle 5 in none (10 ms samples)
PYTHONPATH="$ROOT/tests/tools" python3 - > "$T/spans.pprof" <<'PY'
import sys
from protowire import field, varint, vfield
strings = ["", "cpu", "nanoseconds", "main", "alpha", "beta", "idle", "span_id",
           "00000000000000aa", "00000000000000bb"]
s = {v: i for i, v in enumerate(strings)}
def packed(num, vals):
    return field(num, b"".join(varint(v) for v in vals))
out = field(1, vfield(1, s["cpu"]) + vfield(2, s["nanoseconds"]))
for fid, name in enumerate(["main", "alpha", "beta", "idle"], 1):
    out += field(5, vfield(1, fid) + vfield(2, s[name]))
    out += field(4, vfield(1, fid) + field(4, vfield(1, fid)))
for leaf, n, span in ((2, 7, "00000000000000aa"), (3, 3, "00000000000000bb"), (4, 5, None)):
    sample = packed(1, [leaf, 1]) + packed(2, [n * 10000000])
    if span:
        sample += field(3, vfield(1, s["span_id"]) + vfield(2, s[span]))
    out += field(2, sample)
out += b"".join(field(6, x) for x in strings)
out += field(11, vfield(1, s["cpu"]) + vfield(2, s["nanoseconds"])) + vfield(12, 10000000)
sys.stdout.buffer.write(out)
PY

# upload N: the N-th upload, the same for every backend
upload() {
	local url=$1 n=$2 code
	case $n in
	1) code=$(URL=$url gprofiler_upload checkout tok "$T/a.col" "$(iso $((now - 300)))" "$(iso $((now - 240)))") ;;
	2) code=$(URL=$url gprofiler_upload checkout tok "$T/b.col" "$(iso $((now - 120)))" "$(iso $((now - 60)))") ;;
	3) code=$(printf 'main;handler;parse 70\nmain;handler;render 30\n' |
		ch_upload_pyroscope "$url" 'app.cpu%7Benv%3Dprod%2Chost%3Dh1%7D' $((now - 200)) $((now - 190))) ;;
	4) code=$(printf 'main;handler;parse 5\nmain;gc 9\n' |
		ch_upload_pyroscope "$url" 'app.cpu%7Benv%3Dprod%2Chost%3Dh2%7D' $((now - 100)) $((now - 90))) ;;
	5) code=$(printf 'main;handler;render 11\nmain;gc 1\n' |
		ch_upload_pyroscope "$url" 'app.cpu%7Benv%3Ddev%2Chost%3Dh1%7D' $((now - 3 * 3600)) $((now - 3 * 3600 + 10))) ;;
	6) code=$(printf 'main;old 4\n' |
		ch_upload_pyroscope "$url" 'app.cpu%7Benv%3Dprod%2Chost%3Dh1%7D' $((now - 30 * 3600)) $((now - 30 * 3600 + 10))) ;;
	7) code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$T/heap.pprof" \
		"${url}ingest?name=goapp%7Bpod%3Dweb-0%7D&format=pprof&from=$((now - 50))&until=$((now - 40))") ;;
	8) code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$T/cpu.pprof" \
		"${url}ingest?name=goapp%7Bpod%3Dweb-0%7D&format=pprof&from=$((now - 50))&until=$((now - 40))") ;;
	9) code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/proto' \
		--data-binary @"$T/push.bin" "${url}push.v1.PusherService/Push") ;;
	10) code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$T/spans.pprof" \
		"${url}ingest?name=spanapp&format=pprof&from=$((now - 30))&until=$((now - 20))") ;;
	esac
	[ "$code" = 200 ] || fail "upload $n to $url got $code: $(cat "$T/upload.reply" "$T/ingest.reply" 2>/dev/null)"
}
for n in $(seq 10); do
	upload "$KURL_lite" "$n"
	upload "$KURL_one" "$n"
	# the cluster's uploads alternate between its two kiln servers
	if [ $((n % 2)) = 1 ]; then upload "$KURL_c1" "$n"; else upload "$KURL_c2" "$n"; fi
done
# KILN_TEST_INJECT=1 proves the checker can fail: one more stack on the one-node side
if [ -n "${KILN_TEST_INJECT:-}" ]; then
	printf 'main;injected 1\n' | ch_upload_pyroscope "$KURL_one" 'app.cpu%7Benv%3Dprod%2Chost%3Dh2%7D' \
		$((now - 100)) $((now - 90)) > /dev/null
fi

F=$((now - 2 * 86400)) U=$((now + 60))
queries=(
	"pyroscope/render?query=checkout&from=$F&until=$U"
	"pyroscope/render?query=checkout%7Bcontainer%3D%22web-1%22%7D&from=$F&until=$U&format=collapsed"
	"pyroscope/render?query=app.cpu&from=$F&until=$U"
	"pyroscope/render?query=app.cpu%7Bhost%3D%22h1%22%7D&from=$F&until=$U"
	"pyroscope/render?query=app.cpu%7Bhost%3D~%22h.*%22%2Cenv%21%3D%22dev%22%7D&from=$((now - 3600))&until=$U"
	"pyroscope/render?query=app.cpu&from=$((now - 3600))&until=$U&format=collapsed"
	"pyroscope/render?query=goapp.alloc_space&from=$F&until=$U"
	"pyroscope/render?query=goapp.cpu&from=$F&until=$U"
	"render?query=goapp&profile_type=process_cpu:cpu:nanoseconds:cpu:nanoseconds&from=$F&until=$U&format=collapsed"
	"render?query=connectapp%7Bpod%3D%22web-1%22%7D&profile_type=memory:inuse_objects:count:space:bytes&from=$F&until=$U&format=collapsed"
	"pyroscope/render-diff?leftQuery=app.cpu%7Bhost%3D%22h1%22%7D&rightQuery=app.cpu%7Bhost%3D%22h2%22%7D&leftFrom=$F&leftUntil=$U&rightFrom=$F&rightUntil=$U"
	"api/series?query=app.cpu&from=$((now - 3600))&until=$U"
	"api/series?query=app.cpu&from=$F&until=$U"
	"pyroscope/labels?query=app.cpu&from=$F&until=$U"
	"pyroscope/label-values?label=host&query=app.cpu&from=$F&until=$U"
	"pyroscope/label-values?label=container&query=checkout&from=$F&until=$U"
	"pyroscope/label-values?label=__name__&from=$F&until=$U"
	"api/labels?query=app.cpu&from=$F&until=$U"
	"api/labels?query=checkout&from=$F&until=$U"
	"api/apps"
)
i=0
for q in "${queries[@]}"; do
	i=$((i + 1))
	for s in lite one c1 c2; do
		eval "url=\$KURL_$s"
		curl -sf "$url$q" > "$T/q$i.$s" || fail "query $q failed on $s: $(cat "$T/kiln-$s.err")"
		python3 "$ROOT/tests/clickhouse_norm.py" "$T/q$i.$s" > "$T/q$i.$s.norm"
	done
	[ -s "$T/q$i.lite.norm" ] || fail "empty answer to $q"
	for s in one c1 c2; do
		grep -v '^LASTSEEN' "$T/q$i.$s.norm" > "$T/a" ; grep -v '^LASTSEEN' "$T/q$i.lite.norm" > "$T/b"
		cmp -s "$T/a" "$T/b" || {
			diff "$T/q$i.lite.norm" "$T/q$i.$s.norm" | head -n 30
			fail "$s answers $q unlike SQLite"
		}
		# lastSeen: at most CH_SERIES_SLACK (600 s) behind SQLite's
		paste <(grep '^LASTSEEN' "$T/q$i.lite.norm") <(grep '^LASTSEEN' "$T/q$i.$s.norm") |
			awk '{ if ($2 != $5 || $3 - $6 > 600 || $6 > $3) { print; bad = 1 } } END { exit bad }' ||
			fail "$s: lastSeen of $q is off"
	done
	echo "same: $q"
done
# Pyroscope's Connect querier API (what Grafana calls), JSON codec; times in ms
Fm=$((F * 1000)) Um=$((U * 1000))
calls=(
	"ProfileTypes {\"start\":\"$Fm\",\"end\":\"$Um\"}"
	"LabelNames {\"matchers\":[\"{service_name=\\\"app\\\"}\"],\"start\":\"$Fm\",\"end\":\"$Um\"}"
	"LabelValues {\"name\":\"host\",\"start\":\"$Fm\",\"end\":\"$Um\"}"
	"SelectMergeStacktraces {\"profileTypeID\":\"process_cpu:samples:count:cpu:nanoseconds\",\"labelSelector\":\"{service_name=\\\"app\\\",host=\\\"h1\\\"}\",\"start\":\"$Fm\",\"end\":\"$Um\"}"
	"SelectSeries {\"profileTypeID\":\"process_cpu:samples:count:cpu:nanoseconds\",\"labelSelector\":\"{service_name=\\\"app\\\"}\",\"start\":\"$Fm\",\"end\":\"$Um\",\"step\":3600,\"groupBy\":[\"host\"]}"
	"SelectMergeSpanProfile {\"profileTypeID\":\"process_cpu:cpu:nanoseconds:cpu:nanoseconds\",\"labelSelector\":\"{service_name=\\\"spanapp\\\"}\",\"spanSelector\":[\"00000000000000aa\"],\"start\":\"$Fm\",\"end\":\"$Um\"}"
)
for c in "${calls[@]}"; do
	i=$((i + 1))
	for s in lite one c1 c2; do
		eval "url=\$KURL_$s"
		curl -sf -X POST -H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' \
			--data-binary "${c#* }" "${url}querier.v1.QuerierService/${c%% *}" > "$T/q$i.$s" ||
			fail "Connect ${c%% *} failed on $s: $(cat "$T/q$i.$s")"
		python3 "$ROOT/tests/clickhouse_norm.py" "$T/q$i.$s" > "$T/q$i.$s.norm"
	done
	for s in one c1 c2; do
		cmp -s "$T/q$i.lite.norm" "$T/q$i.$s.norm" || {
			diff "$T/q$i.lite.norm" "$T/q$i.$s.norm" | head -n 30
			fail "$s answers Connect ${c%% *} unlike SQLite"
		}
	done
	echo "same: Connect ${c%% *}: $(head -c 120 "$T/q$i.lite" | tr -d '\n')"
done

# the answers hold something: not an empty store on every side
grep -q '"numTicks":0[,}]' "$T/q1.lite" && fail "checkout is empty"
grep -q 'ngx_http_handler' "$T/q2.lite" || fail "the container filter lost nginx"
grep -q '"total":"70000000"' "$T/q$i.lite" || fail "the span profile of ...aa: $(cat "$T/q$i.lite")"

# both shards hold sample rows, and the Distributed table sees them all
r1=$(ch_query s1 "SELECT count() FROM kiln.samples_local")
r2=$(ch_query s2 "SELECT count() FROM kiln.samples_local")
all=$(ch_query s1 "SELECT count() FROM kiln.samples")
one=$(ch_query one "SELECT count() FROM kiln.samples")
echo "sample rows: shard 1 $r1, shard 2 $r2, cluster $all, one node $one"
[ "$r1" -gt 0 ] && [ "$r2" -gt 0 ] || fail "a shard holds no rows ($r1, $r2)"
[ $((r1 + r2)) = "$all" ] && [ "$all" = "$one" ] || fail "rows differ: $r1 + $r2 vs $all vs $one"
pass "SQLite, one ClickHouse node and a two-shard cluster behind two kiln servers answer ${#queries[@]} queries and ${#calls[@]} Connect calls alike"
