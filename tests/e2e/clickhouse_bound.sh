#!/usr/bin/env bash
# The bound on uploads waiting for ClickHouse: with ClickHouse paused and
# --max-waiting-uploads 4, a burst of 12 gets 4 uploads in (they wait, holding no thread)
# and 8 answered at once with a 503 that says why; once ClickHouse answers, the 4 get
# their 200, and only their rows are stored.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_clickhouse.sh"
ch_need

MAX=4 N=12
ch_start db
ch_kiln k --threads 2 --max-waiting-uploads "$MAX" --storage "clickhouse://127.0.0.1:$CH_HTTP_db/kiln"
now=$(date -u +%s)
printf 'main;warm 1\n' | ch_upload_pyroscope "$KURL_k" "bound.cpu%7Bhost%3D%22w%22%7D" $((now - 30)) $now > /dev/null

ch_pause db
ch_burst "$KURL_k" bound.cpu "$N" $((now - 30)) $now &
burst=$!
# until the refused ones have their answer (bounded, not a measurement)
for _ in $(seq 600); do
	[ "$(grep -lx 503 "$T"/burst/*.code 2>/dev/null | wc -l)" -ge $((N - MAX)) ] && break
	sleep 0.05
done
ch_resume db
wait "$burst"

ok=() refused=0
for i in $(seq "$N"); do
	case $(cat "$T/burst/$i.code") in
	200) ok+=("$i") ;;
	503)
		grep -q "uploads already wait for the store" "$T/burst/$i.body" ||
			fail "upload $i: 503 without the reason: $(cat "$T/burst/$i.body")"
		refused=$((refused + 1)) ;;
	*) fail "upload $i: $(cat "$T/burst/$i.code") $(cat "$T/burst/$i.body")" ;;
	esac
done
[ "${#ok[@]}" = "$MAX" ] && [ "$refused" = $((N - MAX)) ] ||
	fail "${#ok[@]} uploads acknowledged and $refused refused, want $MAX and $((N - MAX))"
ch_burst_stored "$KURL_k" 'bound.cpu%7Bhost%21%3D%22w%22%7D' "${ok[@]}"
pass "$MAX of $N uploads waited for a paused ClickHouse and were stored, $refused got a 503"
