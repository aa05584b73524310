#!/usr/bin/env bash
# bench/fleet.sh [HOSTS [HOURS [ROWS]]]: a synthetic fleet (bench/server.c: HOSTS hosts
# uploading every 60 s for HOURS hours, ROWS distinct stacks per upload drawn from a
# fleet-wide pool, so hosts overlap) stored in SQLite, in one ClickHouse node and in a
# two-shard ClickHouse cluster, each through the store interface the server uses. Prints,
# per backend: ingest stack rows/s per kiln-server core (CPU of the kiln process; the
# ClickHouse servers' own CPU is printed apart), bytes on disk per stored stack sample
# (after ClickHouse merged its parts), and merged flamegraph latency over HTTP for the
# whole fleet (a day, 24 h unaligned, an hour) and one host.
#
# Defaults are the issue's fleet, 1000 hosts x 24 h x 300 rows (432M rows): far too long
# for a shared machine; pass a smaller one (e.g. 50 4 300) and say so beside the figures.
# CH_ZSTD=1 has the ClickHouse servers compress parts with zstd (a server setting).
# BENCH_THREADS=N puts each interval's uploads from N threads at once (as N HTTP workers
# of one kiln server would; ClickHouse groups them into shared INSERTs); FLEET_INGEST_ONLY=1
# stops each backend after its ingest figures (no merging, no queries).
# FLEET_BACKENDS picks what runs (default "sqlite one cluster"). FLEET_REPLICATE=N then
# copies the one-node store's sample rows N-1 times under other series ids inside
# ClickHouse (INSERT ... SELECT, rollups included), a fleet N times the size without N
# times the ingest, and times the whole-fleet queries on it again.
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-1000} hours=${2:-24} rows=${3:-300}
make -s all
cc -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Isrc $(make -s print-PKG_CFLAGS) -include src/util/banned.h \
	-o build/bench-server bench/server.c build/libkiln.a $(make -s print-LDLIBS)

set +e
. tests/lib.sh
. tests/lib_clickhouse.sh
ch_need

# ch_cpu NAME...: seconds of CPU the ClickHouse servers NAME... have used so far
ch_cpu() {
	local total=0 t
	for n in "$@"; do
		t=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$(cat "$T/ch-$n/pid")/stat")
		total=$(echo "$total + $t" | bc)
	done
	echo "$total"
}
# optimize LOCATION DB NAME...: merges every table's parts (FINAL), then prints bytes on
# disk per raw row over every table of DB on the servers NAME...
optimize() {
	local db=$1 bytes=0 rows=0 suffix=$2
	shift 2
	for n in "$@"; do
		for t in frames stacks series samples samples_1h samples_1d; do
			ch_query "$n" "OPTIMIZE TABLE $db.$t$suffix FINAL" > /dev/null
		done
		bytes=$((bytes + $(ch_query "$n" "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = '$db'")))
		rows=$((rows + $(ch_query "$n" "SELECT count() FROM $db.samples$suffix")))
	done
	echo "disk after merging: $(echo "scale=2; $bytes / $rows" | bc) bytes per stored stack sample ($bytes bytes, $rows raw rows incl. hour and day rollups, frames, stacks, series)   target <= 10"
	for n in "$@"; do
		ch_query "$n" "SELECT table, sum(rows), sum(bytes_on_disk) FROM system.parts WHERE active AND database = '$db' GROUP BY table ORDER BY table FORMAT TSV" | sed "s/^/    $n: /"
		# where the bytes of the sample tables go, per column (compressed bytes per row)
		ch_query "$n" "SELECT table, column, round(sum(column_data_compressed_bytes) / sum(rows), 2) FROM system.parts_columns WHERE active AND database = '$db' AND table LIKE 'samples%' GROUP BY table, column ORDER BY table, column FORMAT TSV" |
			awk -v n="$n" '$1 != t { if (t != "") print line; t = $1; line = "    " n ": " t " B/row:" } { line = line " " $2 " " $3 } END { if (t != "") print line }'
	done
}

echo "== fleet: $hosts hosts x $hours h, one upload per host per 60 s, $rows stacks per upload (ClickHouse parts: ${CH_ZSTD:+zstd}${CH_ZSTD:-lz4})"
backends=${FLEET_BACKENDS:-sqlite one cluster}
if [[ " $backends " == *" sqlite "* ]]; then
echo "== SQLite"
mkdir -p "$T/sqlite"
nice build/bench-server "$T/sqlite" "$hosts" "$hours" "$rows"
fi

if [[ " $backends " == *" one "* ]]; then
echo "== ClickHouse, one node"
ch_start one
c0=$(ch_cpu one)
loc="clickhouse://127.0.0.1:$CH_HTTP_one/fleet"
nice build/bench-server "$loc" "$hosts" "$hours" "$rows"
echo "clickhouse server CPU: $(echo "$(ch_cpu one) - $c0" | bc) s (ingest and queries)"
[ -n "${FLEET_INGEST_ONLY:-}" ] && ch_stop one
if [ -z "${FLEET_INGEST_ONLY:-}" ]; then
optimize fleet "" one
nice build/bench-server "$loc" 0 "$hours" "$rows" | grep '^query'
n=${FLEET_REPLICATE:-1}
if [ "$n" -gt 1 ]; then
	# copy k of every row: series id + k (no series row: the whole-fleet queries read every
	# row of the service, the one-host query only its own series)
	for t in samples; do
		ch_query one "INSERT INTO fleet.$t SELECT service, series + k, t, stack, count, ptype FROM
			fleet.$t ARRAY JOIN arrayMap(x -> x + 1, range($((n - 1)))) AS k" > /dev/null
	done
	for t in samples samples_1h samples_1d; do ch_query one "OPTIMIZE TABLE fleet.$t FINAL" > /dev/null; done
	echo "replicated x$n: $(ch_query one "SELECT count() FROM fleet.samples") raw rows, $(ch_query one "SELECT count() FROM fleet.samples_1h") hour rows, $(ch_query one "SELECT count() FROM fleet.samples_1d") day rows"
	nice build/bench-server "$loc" 0 "$hours" "$rows" | grep '^query' | sed "s/^query:/query x$n:/"
fi
ch_stop one
fi
fi

[[ " $backends " == *" cluster "* ]] || exit 0
echo "== ClickHouse, two shards (Distributed tables), one kiln server"
ch_cluster s1 s2 fleet
c0=$(ch_cpu s1 s2)
nice build/bench-server "$CH_CLUSTER_URL" "$hosts" "$hours" "$rows"
echo "clickhouse servers' CPU: $(echo "$(ch_cpu s1 s2) - $c0" | bc) s (ingest and queries)"
[ -n "${FLEET_INGEST_ONLY:-}" ] && exit 0
optimize fleet _local s1 s2
nice build/bench-server "$CH_CLUSTER_URL" 0 "$hours" "$rows" | grep '^query'
