#!/usr/bin/env bash
# Eight agents uploading at once to one ClickHouse-backed kiln server (8 HTTP threads),
# whose puts share batched INSERTs: every acknowledged upload is stored exactly once (its
# own stack with its own count, a stack common to all with the sum of every upload, and
# the raw rows in ClickHouse one per upload and stack), nothing is refused, and the
# uploads needed fewer sample INSERTs than there were uploads (they were grouped).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need

AGENTS=8 EACH=25
ch_start db
ch_kiln k --threads "$AGENTS" --storage "clickhouse://127.0.0.1:$CH_HTTP_db/kiln"
now=$(date -u +%s)
# INSERTs into the raw samples so far: each makes one part of level 0 (merged parts stay
# listed, inactive, for minutes: longer than this test)
inserts() {
	ch_query db "SELECT count() FROM system.parts WHERE database = 'kiln' AND table = 'samples' AND level = 0"
}
# the first upload makes the service and its frames known (a batch of one)
printf 'main;warm 1\n' | ch_upload_pyroscope "$KURL_k" "conc.cpu%7Bhost%3D%22w%22%7D" $((now - 30)) $now > /dev/null
i0=$(inserts)

# agent A: EACH uploads in a row, upload i carrying "main;a<A>;u<i> <A*100+i>" and
# "main;shared 1", in its own series (host=a<A>); logs "A i status"
agent() {
	local a=$1 i code
	for i in $(seq "$EACH"); do
		code=$(printf 'main;a%d;u%d %d\nmain;shared 1\n' "$a" "$i" $((a * 100 + i)) |
			curl -s -m 30 -o /dev/null -w '%{http_code}' -X POST --data-binary @- \
			"${KURL_k}ingest?name=conc.cpu%7Bhost%3D%22a$a%22%7D&from=$((now - 30))&until=$now&spyName=ebpfspy&sampleRate=99")
		echo "$a $i $code" >> "$T/codes.$a"
	done
}
pids=()
for a in $(seq "$AGENTS"); do
	agent "$a" &
	pids+=($!)
	reap $!
done
for p in "${pids[@]}"; do
	wait "$p"
done
cat "$T"/codes.* > "$T/codes"
total=$((AGENTS * EACH))
[ "$(wc -l < "$T/codes")" = $total ] || fail "only $(wc -l < "$T/codes") of $total uploads were tried"
bad=$(awk '$3 != 200' "$T/codes" | wc -l)
[ "$bad" = 0 ] || fail "$bad uploads were not acknowledged: $(awk '$3 != 200' "$T/codes" | head -n 3 | tr '\n' ' ')"
batches=$(($(inserts) - i0))

curl -sf "${KURL_k}pyroscope/render?query=conc.cpu&from=now-1h&until=now&format=collapsed" > "$T/all.col" ||
	fail "render failed"
wrong=0
while read -r a i _; do
	n=$(grep -c "^main;a$a;u$i " "$T/all.col")
	if [ "$n" != 1 ] || ! grep -qx "main;a$a;u$i $((a * 100 + i))" "$T/all.col"; then
		echo "upload $a/$i: $(grep "^main;a$a;u$i " "$T/all.col" | tr '\n' ' ')(want count $((a * 100 + i)) once)"
		wrong=$((wrong + 1))
	fi
done < "$T/codes"
[ "$wrong" = 0 ] || fail "$wrong of $total uploads are missing or stored twice"
grep -qx "main;shared $total" "$T/all.col" ||
	fail "the common stack has $(grep '^main;shared ' "$T/all.col") (want $total: one per upload)"
# in ClickHouse itself: one raw row per upload and stack, none repeated
# (plus the first upload's one)
rows=$(ch_query db "SELECT count(), uniqExact(series, stack, count) FROM kiln.samples WHERE service = 'conc.cpu'")
[ "$rows" = "$((2 * total + 1))	$((AGENTS * (EACH + 1) + 1))" ] ||
	fail "raw rows (count, distinct): $rows, want $((2 * total + 1)) and $((AGENTS * (EACH + 1) + 1))"
echo "uploads: $total acknowledged, their samples sent in $batches INSERTs"
# one INSERT per upload when each goes alone
[ "$batches" -lt "$total" ] || fail "$total uploads took $batches sample INSERTs: they were not grouped"
pass "$total concurrent uploads of $AGENTS agents stored exactly once, in $batches sample INSERTs"
