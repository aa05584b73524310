#!/usr/bin/env bash
# Retention on ClickHouse drops whole partitions: with --retention-days 1, data of 60 days
# ago is gone from every level (raw, hour and day rows, and its series) once the server
# has run its maintenance (at start), on both shards of a cluster, while today's data
# stays; the partitions are gone from system.parts, not just hidden.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need

ch_cluster s1 s2 ret
ch_kiln a --storage "$CH_CLUSTER_URL" --retention-days 0
now=$(date -u +%s)
old=$((now - 60 * 86400))
for h in h1 h2 h3 h4 h5 h6; do	# several series, so that both shards get old rows
	printf 'main;old 5\n' | ch_upload_pyroscope "$KURL_a" "ret.cpu%7Bhost%3D%22$h%22%7D" $old $((old + 10)) |
		grep -qx 200 || fail "old upload refused: $(cat "$T/ingest.reply")"
	printf 'main;new 3\n' | ch_upload_pyroscope "$KURL_a" "ret.cpu%7Bhost%3D%22$h%22%7D" $((now - 20)) $((now - 10)) |
		grep -qx 200 || fail "new upload refused: $(cat "$T/ingest.reply")"
done
# old_parts: the partitions that hold the old day, on both shards
old_parts() {
	local n=0
	for s in s1 s2; do
		for t in samples_local samples_1h_local samples_1d_local series_local; do
			n=$((n + $(ch_query "$s" "SELECT count() FROM system.parts WHERE active AND
				database = 'ret' AND table = '$t' AND rows > 0 AND partition IN
				('$((old / 86400))', '$((old / 2592000))')")))
		done
	done
	echo "$n"
}
render() {
	curl -sf "${KURL}pyroscope/render?query=ret.cpu&from=$1&until=$2&format=collapsed" | grep -v '^#'
}
KURL=$KURL_a
before=$(old_parts)
# a range of whole days around the old data reads day rows; its edges hour and raw rows
[ "$(render $((old - 2 * 86400)) $((old + 2 * 86400)))" = "main;old 30" ] ||
	fail "old data not stored: $(render $((old - 2 * 86400)) $((old + 2 * 86400)))"
[ "$before" -ge 8 ] || fail "the old data is in only $before partitions"
ch_query s1 "SELECT count() FROM ret.samples_1d" | grep -qx '[1-9][0-9]*' || fail "no day rows"

kill "$KPID_a"
wait "$KPID_a" 2>/dev/null
ch_kiln b --storage "$CH_CLUSTER_URL" --retention-days 1
for _ in $(seq 100); do
	grep -q 'retention: deleted' "$T/kiln-b.err" && break
	sleep 0.1
done
grep -q 'retention: deleted 18 sample rows' "$T/kiln-b.err" ||
	fail "retention did not report 18 old rows (6 series x raw, hour, day): $(cat "$T/kiln-b.err")"
KURL=$KURL_b
after=$(old_parts)
echo "partitions holding the old day: $before before, $after after"
[ "$after" = 0 ] || fail "$after old partitions are left"
got=$(render $((old - 2 * 86400)) $((old + 2 * 86400)))
[ -z "$got" ] || fail "old data still answers: $got"
[ "$(render $((now - 3600)) $((now + 60)))" = "main;new 18" ] ||
	fail "today's data went too: $(render $((now - 3600)) $((now + 60)))"
pass "retention dropped $before old partitions on two shards and kept today's data"
