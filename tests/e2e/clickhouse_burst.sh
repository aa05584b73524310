#!/usr/bin/env bash
# A burst of uploads larger than the server's --threads, all in flight at once (ClickHouse
# paused while they arrive): a waiting upload holds no HTTP thread, so all of them join
# the batches (the largest takes more uploads than there are threads), every one gets
# its 200 once ClickHouse acknowledged it, and every one's rows are read back once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need

THREADS=2 N=32
ch_start db
ch_kiln k --threads "$THREADS" --storage "clickhouse://127.0.0.1:$CH_HTTP_db/kiln"
now=$(date -u +%s)
# the service, its type and the common stack known (a batch of one)
printf 'main;warm 1\n' | ch_upload_pyroscope "$KURL_k" "burst.cpu%7Bhost%3D%22w%22%7D" $((now - 30)) $now > /dev/null
port=${KURL_k##*:}
port=${port%/}

ch_pause db
ch_burst "$KURL_k" burst.cpu "$N" $((now - 30)) $now &
burst=$!
# until every upload has its connection (bounded, not a measurement)
for _ in $(seq 600); do
	[ "$(ss -Htn state established "( sport = :$port )" | wc -l)" -ge "$N" ] && break
	sleep 0.05
done
sleep 1	# let them join the batch ClickHouse will take next (a bound: fewer just means more batches)
ch_resume db
wait "$burst"

bad=0
for i in $(seq "$N"); do
	[ "$(cat "$T/burst/$i.code")" = 200 ] && continue
	echo "upload $i: $(cat "$T/burst/$i.code") $(cat "$T/burst/$i.body" 2>/dev/null)"
	bad=$((bad + 1))
done
[ "$bad" = 0 ] || fail "$bad of $N uploads were not acknowledged"
# rows read back: the warm-up's stack is not among main;b*, its shared stack adds one
ch_burst_stored "$KURL_k" 'burst.cpu%7Bhost%21%3D%22w%22%7D' $(seq "$N")
# the largest sample INSERT (a part of level 0; merged ones stay listed for minutes)
largest=$(ch_query db "SELECT max(rows) FROM system.parts WHERE database = 'kiln' AND table = 'samples' AND level = 0")
inserts=$(ch_query db "SELECT count() FROM system.parts WHERE database = 'kiln' AND table = 'samples' AND level = 0")
# two rows per upload: a batch of at most THREADS uploads has at most 2 * THREADS
[ "$largest" -gt $((2 * THREADS)) ] ||
	fail "the largest batch had $largest sample rows: no more uploads than the $THREADS threads"
pass "$N uploads at once on $THREADS threads all acknowledged and stored, in $((inserts - 1)) sample INSERTs (the largest $((largest / 2)) uploads)"
