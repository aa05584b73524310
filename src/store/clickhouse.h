/* The ClickHouse backend (store/clickhouse*.c): what it adds to the contract of
 * store/store.h. It speaks ClickHouse's HTTP interface with libcurl: gzip-compressed
 * request bodies both ways, RowBinary for every bulk insert and every result set, so no
 * row is ever written as SQL text.
 *
 * Locations: "clickhouse://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...]/DB[?OPTIONS]",
 * HTTP port (default 8123, 8443 with secure=1). Without a password in the location,
 * $KILN_CLICKHOUSE_PASSWORD is used (so it stays off the command line). Options, '&'
 * separated:
 *   cluster=NAME   the hosts are the shards of the remote_servers cluster NAME: tables are
 *                  created on every host as local tables (NAME_local) with a Distributed
 *                  table over them; rows are sharded by series. No ZooKeeper is needed:
 *                  kiln runs the DDL on each host itself. Without it, one node.
 *   secure=1       HTTPS; cacert=FILE verifies the server with FILE; insecure=1 does not
 *                  verify it at all (testing only).
 *   timeout=S      seconds a request may take (default 60).
 *
 * Stateless: every id is a content hash (frames: of the name; stacks: of their frame ids;
 * series: of service, profile type and labels), so any number of kiln servers write and
 * read one database without agreeing on anything. What a server keeps in memory (frames,
 * stacks and series it has seen) is a cache that only saves inserts and lookups.
 *
 * Schema (version CH_SCHEMA_VERSION, kept in table kiln_schema; created on first use, and
 * upgraded step by step when a newer kiln opens an older database):
 *   frames(id, name), stacks(id, frames Array)     ReplacingMergeTree: stored once
 *   series_in -> series(service, series, day, ptype, labels, first_seen, last_seen,
 *          units, spy, rate, inserted)             written when a series is new or its
 *                                                  range grows by > CH_SERIES_SLACK, into
 *                                                  a Null table whose view folds the rows
 *                                                  (AggregatingMergeTree) into one per
 *                                                  series and day
 *   samples(service, series, t, stack, count)      10 s rows, ORDER BY (service, series,
 *                                                  t, stack): one service, labels and range
 *                                                  is one contiguous read
 *          + ptype                                 the series' type, for the fleet rows
 *   samples_1h, samples_1d                         SummingMergeTree, filled at insert by
 *                                                  materialized views
 *   fleet_10s, fleet_1h, fleet_1d                  the same summed over every series of a
 *                                                  (service, type): what a query whose
 *                                                  labels keep every series reads
 *                                                  (fleet_10s: totals only, no stacks:
 *                                                  the timeline)
 * The same statements run on ClickHouse 18.16 (Debian bookworm) and on current releases:
 * plain MergeTree engines, no TTL, no LowCardinality, no codecs.
 *
 * Resolutions: as SQLite (store/sqlite.h): 10 s, hour and day rows; a range is cut into
 * whole days, whole hours and 10 s edges. The rollups are complete at all times (the
 * views are written with the insert), so no watermark is needed.
 *
 * Retention: store__retain drops whole partitions (raw and hour rows by day, day rows by
 * 30 days, fleet rows alike; series rows by day of last_seen) older than the cut-off
 * (raw), 4x (hour) and 16x (day and series), on every host. Frames and stacks are kept.
 *
 * Durability: store__put returns 0 only after ClickHouse acknowledged every insert (with
 * insert_distributed_sync=1 on a cluster: after every shard did). An insert is atomic per
 * shard; a failed put may leave dictionary rows (harmless) but its samples either landed
 * on a shard or not. When ClickHouse is unreachable calls fail with -EAGAIN (the server
 * answers uploads with 503) and the next call tries again: there is no state to rebuild.
 *
 * Group commit (store/clickhouse_batch.c): puts from several threads share INSERTs. A put
 * adds its rows to the open batch and waits (store__put), or leaves a callback
 * (store__put_async, which store__async_puts says it has); the store's sender thread
 * sends the open batch whenever none is on the network (one INSERT per table for all its
 * puts), and every put of it returns, or is reported done, when it was acknowledged, or
 * fails with its error. So the durability above holds per put, a failed batch fails all
 * its puts, and N concurrent uploads cost about one round of inserts instead of N. A
 * batch takes puts until it holds CH_BATCH_ROWS sample rows or CH_BATCH_BYTES of rows;
 * then store__put waits for the next and store__put_async fails with -EBUSY.
 *
 * Threads: store__put and store__put_async may be called from any thread, beside any
 * other call (store__concurrent_puts is true), and so may the reads
 * (store__concurrent_reads is true: each request has a curl handle of its own); retention
 * and stats take the store's lock for their whole duration. */
#ifndef KILN_STORE_CLICKHOUSE_H
#define KILN_STORE_CLICKHOUSE_H

#include "store/store.h"

/* The schema version this kiln creates and reads. */
#define CH_SCHEMA_VERSION 1
/* A series row is written again when its range grows by more than this (seconds); label
 * and series queries widen last_seen by as much. */
#define CH_SERIES_SLACK 600

/* Group commit: a batch takes puts until it holds this many sample rows, or this many
 * bytes of rows (the puts after wait for the next, or fail: see above); its sender waits at most CH_BATCH_WAIT_MS for the puts already
 * hashing their rows, and CH_BATCH_LINGER_MS for any when the last batch had several
 * puts. A lone client's put (no put coming, batches of one) goes out at once. */
#define CH_BATCH_ROWS (1u << 20)
#define CH_BATCH_BYTES (256u << 20)
#define CH_BATCH_WAIT_MS 20
#define CH_BATCH_LINGER_MS 5

/* The backend's entry in store__open's table: scheme "clickhouse". */
extern const struct store_backend clickhouse_store_backend;

#endif
