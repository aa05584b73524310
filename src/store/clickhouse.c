/* The ClickHouse backend: opening, the schema and its upgrades, retention by partition
 * drops, statistics, and the series table reader shared by writes and reads.
 *
 * The schema is made on every host (one node, or each shard of a cluster) by kiln itself,
 * statement by statement, each one idempotent (IF NOT EXISTS), so that two servers
 * opening a new database at once both succeed. kiln_schema holds one row per version
 * applied; upgrades[v] takes a database from version v to v + 1. */
#include "store/clickhouse_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

const int64_t ch_level_step[CH_NR_LEVELS] = { 10, 3600, 86400 };
const char *const ch_level_table[CH_NR_LEVELS] = { "samples", "samples_1h", "samples_1d" };
const char *const ch_fleet_table[CH_NR_LEVELS] = { "samples", "fleet_1h", "fleet_1d" };

/* Partition widths of the tables retention drops from, and how much older than the raw
 * cut-off each may grow (the multiple of the raw horizon). */
static const struct {
	const char *table;
	int64_t width;
	int64_t horizon;
} parted[] = {
	{ "samples", 86400, 1 },
	{ "samples_1h", 86400, 4 },
	{ "samples_1d", 30 * 86400, 16 },
	{ "fleet_10s", 86400, 1 },
	{ "fleet_1h", 86400, 4 },
	{ "fleet_1d", 30 * 86400, 16 },
	{ "series", 86400, 16 },
};

/* Whether the host whose version() is s->version has column codecs (ClickHouse 20 and
 * later; 18.16 has none): the sample tables then store their columns with the codecs
 * that suit them (bench/fleet.sh: 7.9 -> 4.8 B per raw row on 26.9), else with the
 * server's own compression (lz4 unless its config says otherwise). */
static bool has_codecs(const struct ch_store *s)
{
	return atoi(s->version) >= 20;
}

/* The statements of version 1 on one host, suffix L ("" or "_local"). The columns are
 * the same on every version; only their codecs differ (storage, not what is read). */
static void create_v1(struct ch_store *s, struct strbuf *sql, const char *L)
{
	/* sorted content hashes are random: zstd finds the repeated ones; counts are small
	 * (T64 drops their zero bytes); times are runs (DoubleDelta) */
	static const char *const cols[2][2] = {
		{ "(service String, series UInt64, t UInt32, stack UInt64, count UInt64)",
		  "(service String, ptype String, t UInt32, stack UInt64, count UInt64)" },
		{ "(service String, series UInt64 CODEC(ZSTD(1)), t UInt32 CODEC(DoubleDelta,"
		  " ZSTD(1)), stack UInt64 CODEC(ZSTD(3)), count UInt64 CODEC(T64, ZSTD(1)))",
		  "(service String, ptype String, t UInt32 CODEC(DoubleDelta, ZSTD(1)), stack"
		  " UInt64 CODEC(ZSTD(3)), count UInt64 CODEC(T64, ZSTD(1)))" },
	};
	bool codecs = has_codecs(s);
	const char *samples_cols = cols[codecs][0], *fleet_cols = cols[codecs][1];
	static const char order[] = "ORDER BY (service, series, t, stack)";
	struct strbuf raw = STRBUF_INIT;

	/* the raw table: the rollups' columns and the series' type */
	strbuf_add(&raw, samples_cols, strlen(samples_cols) - 1);
	strbuf_addstr(&raw, ", ptype String)");
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS frames%s (id UInt64, name String)"
		    " ENGINE = ReplacingMergeTree() ORDER BY id\n", L);
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS stacks%s (id UInt64, frames Array(UInt64)%s)"
		    " ENGINE = ReplacingMergeTree() ORDER BY id\n", L, codecs ? " CODEC(ZSTD(3))" : "");
	/* series rows go in through a Null table, whose view folds them into one row per
	 * series and day (min first_seen, max last_seen, latest metadata): the table stays
	 * as small as the fleet's label sets, and retention drops it by day */
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS series_in%s (service String, series UInt64,"
		    " ptype String, labels String, in_first Int64, in_last Int64, in_units String,"
		    " in_spy String, in_rate UInt32, in_inserted UInt64) ENGINE = Null\n", L);
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS series%s (service String, series UInt64,"
		    " day Int64, ptype String, labels String, first_seen AggregateFunction(min,"
		    " Int64), last_seen AggregateFunction(max, Int64), inserted"
		    " AggregateFunction(min, UInt64), units AggregateFunction(argMax, String,"
		    " UInt64), spy AggregateFunction(argMax, String, UInt64), rate"
		    " AggregateFunction(argMax, UInt32, UInt64)) ENGINE = AggregatingMergeTree()"
		    " PARTITION BY day ORDER BY (service, series, day, ptype, labels)\n", L);
	strbuf_addf(sql, "CREATE MATERIALIZED VIEW IF NOT EXISTS series_mv%s TO series%s AS SELECT"
		    " service, series, intDiv(in_last, 86400) AS day, ptype, labels,"
		    " minState(in_first) AS first_seen, maxState(in_last) AS last_seen,"
		    " minState(in_inserted) AS inserted, argMaxState(in_units, if(in_units = '',"
		    " toUInt64(0), in_inserted)) AS units, argMaxState(in_spy, if(in_spy = '',"
		    " toUInt64(0), in_inserted)) AS spy, argMaxState(in_rate, if(in_rate = 0,"
		    " toUInt64(0), in_inserted)) AS rate FROM series_in%s GROUP BY service, series,"
		    " day, ptype, labels\n", L, L, L);
	/* raw rows carry their series' profile type (runs of one value: free), so that the
	 * whole-service rollups below can be keyed by it */
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS samples%s %s ENGINE = MergeTree()"
		    " PARTITION BY intDiv(t, 86400) %s\n", L, raw.buf, order);
	strbuf_release(&raw);
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS samples_1h%s %s ENGINE = SummingMergeTree()"
		    " PARTITION BY intDiv(t, 86400) %s\n", L, samples_cols, order);
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS samples_1d%s %s ENGINE = SummingMergeTree()"
		    " PARTITION BY intDiv(t, 2592000) %s\n", L, samples_cols, order);
	for (int level = 1; level < CH_NR_LEVELS; level++)
		strbuf_addf(sql, "CREATE MATERIALIZED VIEW IF NOT EXISTS %s_mv%s TO %s%s AS SELECT"
			    " service, series, toUInt32(intDiv(t, %" PRId64 ") * %" PRId64 ") AS t,"
			    " stack, sum(count) AS count FROM samples%s GROUP BY service, series, t,"
			    " stack\n", ch_level_table[level], L, ch_level_table[level], L,
			    ch_level_step[level], ch_level_step[level], L);
	/* whole-service rollups: a query of every series of a type (the whole fleet) reads
	 * one row per stack and hour (day) instead of one per series */
	for (int level = 1; level < CH_NR_LEVELS; level++) {
		strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS %s%s %s ENGINE = SummingMergeTree()"
			    " PARTITION BY intDiv(t, %d) ORDER BY (service, ptype, t, stack)\n",
			    ch_fleet_table[level], L, fleet_cols, level == 1 ? 86400 : 2592000);
		strbuf_addf(sql, "CREATE MATERIALIZED VIEW IF NOT EXISTS %s_mv%s TO %s%s AS SELECT"
			    " service, ptype, toUInt32(intDiv(t, %" PRId64 ") * %" PRId64 ") AS t,"
			    " stack, sum(count) AS count FROM samples%s GROUP BY service, ptype, t,"
			    " stack\n", ch_fleet_table[level], L, ch_fleet_table[level], L,
			    ch_level_step[level], ch_level_step[level], L);
	}
	/* a whole service's sample totals per 10 s: its timeline, without reading stacks */
	strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS fleet_10s%s (service String, ptype String,"
		    " t UInt32, count UInt64) ENGINE = SummingMergeTree() PARTITION BY"
		    " intDiv(t, 86400) ORDER BY (service, ptype, t)\n", L);
	strbuf_addf(sql, "CREATE MATERIALIZED VIEW IF NOT EXISTS fleet_10s_mv%s TO fleet_10s%s AS"
		    " SELECT service, ptype, t, sum(count) AS count FROM samples%s GROUP BY service,"
		    " ptype, t\n", L, L, L);
	if (!*L)
		return;
	/* the cluster's front tables: the same names as on one node */
	static const char *const front[][2] = {
		{ "frames", "id" }, { "stacks", "id" }, { "series_in", "series" }, { "series", "series" },
		{ "samples", "series" }, { "samples_1h", "series" }, { "samples_1d", "series" },
		{ "fleet_1h", "stack" }, { "fleet_1d", "stack" }, { "fleet_10s", "t" },
	};
	for (size_t i = 0; i < sizeof(front) / sizeof(front[0]); i++)
		strbuf_addf(sql, "CREATE TABLE IF NOT EXISTS %s AS %s%s ENGINE = Distributed(%s, %s,"
			    " %s%s, %s)\n", front[i][0], front[i][0], L, s->loc.cluster,
			    s->loc.database, front[i][0], L, front[i][1]);
}

typedef void (*upgrade_fn)(struct ch_store *s, struct strbuf *sql, const char *L);
/* upgrades[v]: from version v to v + 1. A new version appends its function here. */
static const upgrade_fn upgrades[CH_SCHEMA_VERSION] = { create_v1 };

/* Runs the newline-separated statements of sql on host h, one request each. */
static int run_all(struct ch_store *s, size_t h, const char *sql, char *err, size_t errlen)
{
	const char *p = sql;
	int ret = 0;

	while (!ret && *p) {
		const char *nl = strchr(p, '\n');
		char *one = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
		ret = ch__request(s, h, one, NULL, NULL, "create the schema", err, errlen);
		free(one);
		p = nl ? nl + 1 : p + strlen(p);
	}
	return ret;
}

/* The schema on host h: reads its version and applies every missing upgrade. */
static int ensure_host(struct ch_store *s, size_t h, char *err, size_t errlen)
{
	struct strbuf sql = STRBUF_INIT, out = STRBUF_INIT;
	uint64_t version = 0;
	int ret;

	/* the database may not exist yet: version() and its creation run in "default" */
	char *db = s->loc.database;
	s->loc.database = (char *)"default";
	ret = ch__request(s, h, "SELECT version()", NULL, &out, "connect", err, errlen);
	if (!ret) {
		snprintf(s->version, sizeof(s->version), "%.*s", (int)out.len, out.buf);
		s->version[strcspn(s->version, "\n")] = 0;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "CREATE DATABASE IF NOT EXISTS %s", db);
		ret = run_all(s, h, sql.buf, err, errlen);
	}
	s->loc.database = db;
	if (!ret)
		ret = run_all(s, h, "CREATE TABLE IF NOT EXISTS kiln_schema (version UInt32,"
			      " applied DateTime) ENGINE = MergeTree() ORDER BY version", err, errlen);
	strbuf_reset(&out);
	if (!ret)
		ret = ch__request(s, h, "SELECT toUInt64(max(version)) FROM kiln_schema FORMAT"
				  " RowBinary", NULL, &out, "read the schema version", err, errlen);
	if (!ret) {
		struct rb_reader r = rbr_of(&out);
		version = rbr_u64(&r);
		if (r.bad)
			version = 0;
	}
	if (!ret && version > CH_SCHEMA_VERSION) {
		errmsg(err, errlen, "failed to open clickhouse '%s': schema version %" PRIu64
		       " is newer than this kiln's %d", s->name, version, CH_SCHEMA_VERSION);
		ret = -EINVAL;
	}
	for (uint64_t v = version; !ret && v < CH_SCHEMA_VERSION; v++) {
		strbuf_reset(&sql);
		upgrades[v](s, &sql, s->loc.cluster ? "_local" : "");
		ret = run_all(s, h, sql.buf, err, errlen);
		if (ret)
			break;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "INSERT INTO kiln_schema VALUES (%" PRIu64 ", now())", v + 1);
		ret = run_all(s, h, sql.buf, err, errlen);
		if (!ret)
			log_info("clickhouse '%s' (%s): schema version %" PRIu64 ", %s", s->loc.hosts[h],
				 s->version, v + 1, has_codecs(s) ? "sample columns with codecs" :
				 "no column codecs before ClickHouse 20: the server's compression");
	}
	strbuf_release(&sql);
	strbuf_release(&out);
	return ret;
}

int ch__ensure(struct ch_store *s, char *err, size_t errlen)
{
	int ret = 0;

	if (__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&s->ensure_lock);
	/* one node: its one host; a cluster: every shard gets its local tables */
	for (size_t h = 0; !ret && !s->ready && h < s->loc.nr_hosts; h++)
		ret = ensure_host(s, h, err, errlen);
	if (!ret)
		__atomic_store_n(&s->ready, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->ensure_lock);
	return ret;
}

void ch__free_series(struct ch_series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].service);
		free(v[i].ptype);
		labels_release(&v[i].labels);
	}
	free(v);
}

const char *ch__default_type(struct ch_store *s, const char *service)
{
	pthread_rwlock_rdlock(&s->cache_lock);
	void **slot = hashmap__find(s->types, service, strlen(service));
	const char *type = slot ? *slot : NULL;
	pthread_rwlock_unlock(&s->cache_lock);
	return type;
}

void ch__set_default_type(struct ch_store *s, const char *service, const char *type)
{
	bool created;

	pthread_rwlock_wrlock(&s->cache_lock);
	void **slot = hashmap__insert(s->types, service, strlen(service), &created);
	if (created || strcmp(*slot, type)) {
		if (!created) {	/* a reader may hold it: kept until close */
			s->old_types = xrealloc(s->old_types,
						(s->nr_old_types + 1) * sizeof(*s->old_types));
			s->old_types[s->nr_old_types++] = *slot;
		}
		*slot = xstrdup(type);
	}
	pthread_rwlock_unlock(&s->cache_lock);
}

int ch__load_series(struct ch_store *s, const char *const *services, size_t nr_services,
		    int64_t since, struct ch_series **out, size_t *n, char *err, size_t errlen)
{
	struct strbuf sql = STRBUF_INIT, ans = STRBUF_INIT;
	size_t alloc = 0;
	int ret;

	*out = NULL;
	*n = 0;
	ret = ch__ensure(s, err, errlen);
	/* the default types come from the first series ever stored: only a read of every
	 * day finds it, so prune by day only where it is known */
	for (size_t i = 0; i < nr_services; i++)
		if (!ch__default_type(s, services[i]))
			since = 0;
	if (!nr_services)
		since = 0;
	strbuf_addstr(&sql, "SELECT service, series, any(ptype), any(labels), minMerge(first_seen),"
		      " maxMerge(last_seen), minMerge(inserted) AS ins FROM series");
	for (size_t i = 0; i < nr_services; i++) {
		strbuf_addstr(&sql, i ? ", " : " WHERE service IN (");
		ch__quote(&sql, services[i]);
	}
	if (nr_services)
		strbuf_addch(&sql, ')');
	/* a series whose newest row is older than since - slack has no data after since */
	if (since > CH_SERIES_SLACK)
		strbuf_addf(&sql, " AND day >= %lld", (long long)((since - CH_SERIES_SLACK) / 86400));
	strbuf_addstr(&sql, " GROUP BY service, series ORDER BY service, ins, series FORMAT RowBinary");
	if (!ret)
		ret = ch__request(s, SIZE_MAX, sql.buf, NULL, &ans, "read series", err, errlen);
	struct rb_reader r = rbr_of(&ans);
	const char *prev = NULL;
	size_t prev_len = 0;
	while (!ret && rbr_more(&r)) {
		size_t sl, pl, ll;
		const char *svc = rbr_str(&r, &sl);
		uint64_t id = rbr_u64(&r);
		const char *pt = rbr_str(&r, &pl);
		const char *lk = rbr_str(&r, &ll);
		int64_t first = (int64_t)rbr_u64(&r), last = (int64_t)rbr_u64(&r);
		rbr_u64(&r);
		if (r.bad)
			break;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		struct ch_series *v = &(*out)[(*n)++];
		v->id = id;
		v->service = xstrndup(svc, sl);
		v->ptype = xstrndup(pt, pl);
		labels_init(&v->labels);
		ch__labels_parse(&v->labels, lk, ll);
		v->first_seen = first;
		v->last_seen = last;
		/* rows come by service, oldest first: the first one is the default type */
		if (!prev || prev_len != sl || memcmp(prev, svc, sl))
			ch__set_default_type(s, v->service, v->ptype);
		prev = svc;
		prev_len = sl;
	}
	if (!ret && r.bad) {
		errmsg(err, errlen, "failed to read series from clickhouse '%s': malformed answer",
		       s->name);
		ret = -EIO;
	}
	if (ret) {
		ch__free_series(*out, *n);
		*out = NULL;
		*n = 0;
	}
	strbuf_release(&sql);
	strbuf_release(&ans);
	return ret;
}

/* Drops the partitions of table on host h that lie wholly below cut. Adds the rows
 * dropped to *deleted. */
static int drop_old(struct ch_store *s, size_t h, const char *table, int64_t width,
		    int64_t cut, int64_t *deleted, char *err, size_t errlen)
{
	struct strbuf sql = STRBUF_INIT, ans = STRBUF_INIT;
	const char *L = s->loc.cluster ? "_local" : "";
	int ret;

	strbuf_addf(&sql, "SELECT partition, sum(rows) FROM system.parts WHERE database = ");
	ch__quote(&sql, s->loc.database);
	strbuf_addf(&sql, " AND table = '%s%s' AND active GROUP BY partition FORMAT RowBinary",
		    table, L);
	ret = ch__request(s, h, sql.buf, NULL, &ans, "list partitions", err, errlen);
	struct rb_reader r = rbr_of(&ans);
	while (!ret && rbr_more(&r)) {
		size_t len;
		const char *p = rbr_str(&r, &len);
		uint64_t rows = rbr_u64(&r);
		char num[32];
		char *end;

		if (r.bad || !len || len >= sizeof(num))
			break;
		memcpy(num, p, len);
		num[len] = 0;
		long long part = strtoll(num, &end, 10);
		if (*end || (part + 1) * width > cut)
			continue;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "ALTER TABLE %s%s DROP PARTITION %lld", table, L, part);
		ret = ch__request(s, h, sql.buf, NULL, NULL, "drop an old partition", err, errlen);
		if (!ret)
			*deleted += (int64_t)rows;
	}
	strbuf_release(&sql);
	strbuf_release(&ans);
	return ret;
}

static int ch_retain(struct store *st, int64_t before, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	int64_t now = (int64_t)time(NULL), deleted = 0, raw = 0;
	int ret;

	if (before <= 0)
		return 0;
	ret = ch__ensure(s, err, errlen);
	for (size_t h = 0; !ret && h < s->loc.nr_hosts; h++) {
		for (size_t i = 0; !ret && i < sizeof(parted) / sizeof(parted[0]); i++) {
			int64_t cut = now - parted[i].horizon * (now - before);
			int64_t *count = i < 3 ? &raw : &deleted;	/* rows as SQLite counts */
			ret = drop_old(s, h, parted[i].table, parted[i].width, cut, count, err,
				       errlen);
		}
	}
	if (ret)
		return ret;
	if (raw) {	/* series rows that went may be written again: forget them */
		pthread_rwlock_wrlock(&s->cache_lock);
		hashmap__clear(s->seen);
		pthread_rwlock_unlock(&s->cache_lock);
	}
	return raw > INT32_MAX ? INT32_MAX : (int)raw;
}

static int ch_stats(struct store *st, struct store_stats *out, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct strbuf ans = STRBUF_INIT, sql = STRBUF_INIT;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = ch__ensure(s, err, errlen);
	if (!ret)
		ret = ch__request(s, SIZE_MAX, "SELECT count(), sum(count), (SELECT uniqExact(id) FROM"
				  " stacks), (SELECT uniqExact(id) FROM frames) FROM samples FORMAT"
				  " RowBinary", NULL, &ans, "count samples", err, errlen);
	if (!ret) {
		struct rb_reader r = rbr_of(&ans);
		out->rows = rbr_u64(&r);
		out->samples = rbr_u64(&r);
		out->stacks = rbr_u64(&r);
		out->frames = rbr_u64(&r);
	}
	strbuf_addstr(&sql, "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND"
		      " database = ");
	ch__quote(&sql, s->loc.database);
	strbuf_addstr(&sql, " FORMAT RowBinary");
	for (size_t h = 0; !ret && h < s->loc.nr_hosts; h++) {
		strbuf_reset(&ans);
		ret = ch__request(s, h, sql.buf, NULL, &ans, "measure the database", err, errlen);
		struct rb_reader r = rbr_of(&ans);
		if (!ret)
			out->bytes += rbr_u64(&r);
	}
	strbuf_release(&ans);
	strbuf_release(&sql);
	return ret;
}

static void free_values(struct hashmap *m)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (m && hashmap__next(m, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(m);
}

static void ch_close(struct store *st)
{
	struct ch_store *s = (struct ch_store *)st;

	ch__batch_stop(s);	/* no put runs: what was joined is sent */
	ch__batch_free(s->open);	/* an empty one (NULL: none) */
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->sent);
	pthread_cond_destroy(&s->joined);
	ch__http_close(s);
	free_values(s->frames);
	free_values(s->stacks);
	free_values(s->seen);
	free_values(s->types);
	for (size_t i = 0; i < s->nr_old_types; i++)
		free(s->old_types[i]);
	free(s->old_types);
	pthread_rwlock_destroy(&s->cache_lock);
	pthread_mutex_destroy(&s->ensure_lock);
	pthread_mutex_destroy(&s->pool_lock);
	ch_location_release(&s->loc);
	free(s->name);
	free(s);
}

/* Retention and stats hold the store's lock throughout (put locks for itself, and the
 * reads lock only the caches they look into). */
#define LOCKED(call) do {				\
		struct ch_store *s_ = (struct ch_store *)st;	\
		pthread_mutex_lock(&s_->mu);		\
		int ret_ = call;			\
		pthread_mutex_unlock(&s_->mu);		\
		return ret_;				\
	} while (0)

static int l_retain(struct store *st, int64_t before, char *err, size_t errlen)
{
	LOCKED(ch_retain(st, before, err, errlen));
}

static int l_stats(struct store *st, struct store_stats *out, char *err, size_t errlen)
{
	LOCKED(ch_stats(st, out, err, errlen));
}

static const struct store_ops clickhouse_ops = {
	.put = ch__put,
	.put_async = ch__put_async,
	.select = ch__select,
	.select_tree = ch__select_tree,
	.series = ch__series,
	.label_names = ch__label_names,
	.label_values = ch__label_values,
	.services = ch__services,
	.retain = l_retain,
	.stats = l_stats,
	.close = ch_close,
};

static struct store *ch_open(const char *rest, const struct store_options *opts, char *err,
			     size_t errlen)
{
	struct ch_store *s = xcalloc(1, sizeof(*s));
	struct strbuf name = STRBUF_INIT;
	char why[256];
	int ret;

	s->base.ops = &clickhouse_ops;
	s->base.generation = 1;
	s->base.concurrent_puts = true;
	s->base.concurrent_reads = true;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->pool_lock, NULL);
	pthread_mutex_init(&s->ensure_lock, NULL);
	pthread_rwlock_init(&s->cache_lock, NULL);
	pthread_cond_init(&s->sent, NULL);
	pthread_cond_init(&s->joined, NULL);
	s->batch_rows = CH_BATCH_ROWS;
	s->batch_bytes = CH_BATCH_BYTES;
	s->batch_wait_ms = CH_BATCH_WAIT_MS;
	s->batch_linger_ms = CH_BATCH_LINGER_MS;
	s->base.resolution = ch_level_step[0];
	if (opts)
		s->base.opts = *opts;
	s->frames = hashmap__new();
	s->stacks = hashmap__new();
	s->seen = hashmap__new();
	s->types = hashmap__new();
	ch_location_init(&s->loc);
	if (ch_location__parse(&s->loc, rest, err, errlen))
		goto fail;
	strbuf_addstr(&name, "clickhouse://");
	for (size_t i = 0; i < s->loc.nr_hosts; i++)
		strbuf_addf(&name, "%s%s", i ? "," : "", s->loc.hosts[i]);
	strbuf_addf(&name, "/%s", s->loc.database);
	s->name = strbuf_detach(&name, NULL);
	if (ch__http_open(s, err, errlen) || ch__batch_start(s, err, errlen))
		goto fail;
	/* ClickHouse down at start is not fatal: every call tries the schema again */
	ret = ch__ensure(s, why, sizeof(why));
	if (ret == -EAGAIN) {
		log_warn("%s (will retry)", why);
	} else if (ret) {
		errmsg(err, errlen, "%s", why);
		goto fail;
	} else {
		log_info("storing profiles in %s (ClickHouse %s%s%s)", s->name, s->version,
			 s->loc.cluster ? ", cluster " : "", s->loc.cluster ? s->loc.cluster : "");
	}
	return &s->base;
fail:
	ch_close(&s->base);
	return NULL;
}

const struct store_backend clickhouse_store_backend = {
	.scheme = "clickhouse",
	.open = ch_open,
	.open_dir = NULL,
};
