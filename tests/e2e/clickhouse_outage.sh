#!/usr/bin/env bash
# ClickHouse killed (SIGKILL) and restarted while uploads keep coming: every upload that
# got a 2xx is there afterwards; while ClickHouse is down uploads get 503 with a message
# naming it and queries a clear error; kiln recovers by itself, without a restart.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need

ch_start db
ch_kiln k --storage "clickhouse://kiln:kiln-secret@127.0.0.1:$CH_HTTP_db/kiln"
now=$(date -u +%s)

# uploader: upload i carries one stack of its own ("main;u<i> 1"); logs "i status"
uploader() {
	local i=0
	while [ ! -e "$T/stop" ] && [ $i -lt 2000 ]; do
		i=$((i + 1))
		code=$(printf 'main;u%d 1\n' "$i" | curl -s -o "$T/reply.$((i % 2))" -w '%{http_code}' \
			-X POST --data-binary @- "${KURL_k}ingest?name=dur.cpu&from=$((now - 30))&until=$now")
		echo "$i $code" >> "$T/codes"
		[ "$code" = 503 ] && cp "$T/reply.$((i % 2))" "$T/reply.503"
		sleep 0.02
	done
}
uploader &
up=$!
reap "$up"
tried() { if [ -e "$T/codes" ]; then wc -l < "$T/codes"; else echo 0; fi; }
wait_for() {	# wait_for N: until N uploads were tried
	for _ in $(seq 600); do
		[ "$(tried)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the uploader is stuck at $(wc -l < "$T/codes") uploads"
}
wait_for 20
KILL=1 ch_stop db
before=$(tried)
wait_for $((before + 10))
# down: queries fail clearly, uploads get 503
code=$(curl -s -o "$T/query.reply" -w '%{http_code}' "${KURL_k}pyroscope/render?query=dur.cpu&from=now-1h&until=now")
[ "$code" -ge 500 ] || fail "a query with ClickHouse down got $code"
grep -q "clickhouse '127.0.0.1:$CH_HTTP_db' is unavailable" "$T/query.reply" ||
	fail "unclear query error: $(cat "$T/query.reply")"
ch_restart db
after=$(tried)
wait_for $((after + 20))
touch "$T/stop"
wait "$up"

ok=$(awk '$2 == 200' "$T/codes" | wc -l)
down=$(awk '$2 == 503' "$T/codes" | wc -l)
other=$(awk '$2 != 200 && $2 != 503' "$T/codes" | wc -l)
echo "uploads: $ok acknowledged, $down refused with 503, $other other"
[ "$other" = 0 ] || fail "uploads got other statuses: $(awk '$2 != 200 && $2 != 503' "$T/codes" | head -n 3)"
[ "$down" -gt 0 ] || fail "no upload saw ClickHouse down"
grep -q 'unavailable' "$T/reply.503" || fail "the 503 says nothing: $(cat "$T/reply.503")"
tail -n 5 "$T/codes" | awk '$2 != 200 { exit 1 }' || fail "kiln did not recover: $(tail -n 5 "$T/codes")"

curl -sf "${KURL_k}pyroscope/render?query=dur.cpu&from=now-1h&until=now&format=collapsed" > "$T/all.col" ||
	fail "render after the restart failed"
missing=0
while read -r i code; do
	[ "$code" = 200 ] || continue
	grep -qx "main;u$i 1" "$T/all.col" || { echo "upload $i (acknowledged) is missing"; missing=$((missing + 1)); }
done < "$T/codes"
[ "$missing" = 0 ] || fail "$missing acknowledged uploads were lost"

# a cluster with one shard down: uploads through the other shard's Distributed table get
# 503 too (the shard's error is a "later"), and work again when it is back
ch_cluster s1 s2
ch_kiln c --storage "$CH_CLUSTER_URL"
push() {	# push HOST: one upload of three series, so that both shards get rows
	for h in a b c; do
		printf 'main;c 1\n' | ch_upload_pyroscope "$KURL_c" "clu.cpu%7Bhost%3D%22$1$h%22%7D" $((now - 30)) $now
		echo
	done
}
[ "$(push x | sort -u)" = 200 ] || fail "cluster uploads refused with both shards up"
ch_stop s2
got=$(push y | sort -u | tr '\n' ' ')
case $got in *503*) ;; *) fail "with a shard down uploads got $got" ;; esac
case $got in *500*) fail "with a shard down an upload got 500: $(cat "$T/ingest.reply")" ;; esac
ch_restart s2
[ "$(push z | sort -u)" = 200 ] || fail "cluster uploads refused after the shard came back"
pass "$ok acknowledged uploads all kept across a SIGKILL of ClickHouse; $down got 503 while it was down; a shard down is a 503 too"
