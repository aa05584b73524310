/* The SQLite backend: schema, loading the dictionaries, ingest, retention.
 *
 * Durability: journal_mode=WAL with synchronous=FULL, so a COMMIT returns only after the
 * WAL is fsync'd: an upload acknowledged with a 2xx survives kill -9 and power loss.
 * (NORMAL would survive kill -9 too, since the WAL is in the page cache once COMMIT
 * returns, but not a power cut; FULL costs one fsync per upload, not per row.)
 * Space: auto_vacuum=INCREMENTAL, so retention hands freed pages back to the file system. */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "profile/ptype.h"
#include "util/log.h"
#include "util/strbuf.h"

const int64_t level_step[NR_LEVELS] = { STORE_RAW_STEP, STORE_HOUR_STEP, STORE_DAY_STEP };

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS frames(id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
	" frame INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS services(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,"
	" units TEXT, spy_name TEXT, sample_rate INTEGER, last_seen INTEGER, profile_type TEXT);"
	"CREATE TABLE IF NOT EXISTS series(id INTEGER PRIMARY KEY, service INTEGER NOT NULL,"
	" profile_type TEXT NOT NULL DEFAULT '', labels TEXT NOT NULL, first_seen INTEGER,"
	" last_seen INTEGER, UNIQUE(service, profile_type, labels));"
	"CREATE TABLE IF NOT EXISTS samples(level INTEGER NOT NULL, service INTEGER NOT NULL,"
	" bucket INTEGER NOT NULL, series INTEGER NOT NULL, total INTEGER NOT NULL,"
	" nrows INTEGER NOT NULL, data BLOB NOT NULL,"
	" PRIMARY KEY(level, service, bucket, series)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS rollups(level INTEGER PRIMARY KEY, done_until INTEGER NOT NULL);";

/* Schema version 1: series and services have a profile type. Version 0 databases (no
 * user_version) are migrated in place by migrate(). */
#define SCHEMA_VERSION 1
static const char migrate_v1[] =
	"BEGIN IMMEDIATE;"
	"ALTER TABLE services ADD COLUMN profile_type TEXT;"
	"CREATE TABLE series_v1(id INTEGER PRIMARY KEY, service INTEGER NOT NULL,"
	" profile_type TEXT NOT NULL DEFAULT '', labels TEXT NOT NULL, first_seen INTEGER,"
	" last_seen INTEGER, UNIQUE(service, profile_type, labels));"
	"INSERT INTO series_v1(id, service, profile_type, labels, first_seen, last_seen)"
	" SELECT id, service, '', labels, first_seen, last_seen FROM series;"
	"DROP TABLE series;"
	"ALTER TABLE series_v1 RENAME TO series;"
	"PRAGMA user_version = 1;"
	"COMMIT;";

int sq__error(struct sqlite_store *s, int rc, const char *what, char *err, size_t errlen)
{
	errmsg(err, errlen, "failed to %s in '%s': %s", what, s->path, sqlite3_errmsg(s->db));
	return rc == SQLITE_FULL ? -ENOSPC : rc == SQLITE_BUSY ? -EBUSY : -EIO;
}

void sq__labels_key(struct strbuf *out, const struct labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t start = out->len;
		strbuf_addf(out, "%s\x1f", l->v[i].name);
		for (size_t j = start; j < out->len - 1; j++)
			if ((unsigned char)out->buf[j] < 0x20)
				out->buf[j] = '?';
		start = out->len;
		strbuf_addf(out, "%s\x1e", l->v[i].value);
		for (size_t j = start; j < out->len - 1; j++)
			if ((unsigned char)out->buf[j] < 0x20)
				out->buf[j] = '?';
	}
}

static void labels_from_key(struct labels *l, const char *key)
{
	while (*key) {
		const char *us = strchr(key, '\x1f'), *rs;
		if (!us)
			break;
		rs = strchr(us, '\x1e');
		if (!rs)
			break;
		/* appended: a key is sorted with unique names (labels__set would be N^2) */
		if (!(l->n & (l->n + 1)) || !l->n)
			l->v = xrealloc(l->v, (2 * l->n + 2) * sizeof(*l->v));
		l->v[l->n].name = xstrndup(key, (size_t)(us - key));
		l->v[l->n].value = xstrndup(us + 1, (size_t)(rs - us - 1));
		l->n++;
		key = rs + 1;
	}
}

void sq__add_name(struct sqlite_store *s, uint32_t id, const char *name)
{
	bool created;

	if (id >= s->alloc_names) {
		size_t n = s->alloc_names ? s->alloc_names : 1024;
		while (n <= id)
			n *= 2;
		s->names = xrealloc(s->names, n * sizeof(*s->names));
		memset(s->names + s->alloc_names, 0, (n - s->alloc_names) * sizeof(*s->names));
		s->alloc_names = n;
	}
	s->names[id] = xstrdup(name);
	if (id >= s->nr_names)
		s->nr_names = id + 1;
	*hashmap__insert(s->name_ids, name, strlen(name), &created) = (void *)(uintptr_t)id;
}

void sq__add_node(struct sqlite_store *s, uint32_t id, uint32_t parent, uint32_t frame)
{
	if (id >= s->alloc_nodes) {
		size_t n = s->alloc_nodes ? s->alloc_nodes : 4096;
		while (n <= id)
			n *= 2;
		s->parent = xrealloc(s->parent, n * sizeof(*s->parent));
		s->frame = xrealloc(s->frame, n * sizeof(*s->frame));
		s->alloc_nodes = n;
	}
	s->parent[id] = parent;
	s->frame[id] = frame;
	if (id >= s->nr_nodes)
		s->nr_nodes = id + 1;
	if (id)
		idmap__set(s->node_ids, (uint64_t)parent << 32 | frame, id);
}

void sq__add_service(struct sqlite_store *s, int64_t id, const char *name, const char *units,
			const char *spy, uint32_t rate, int64_t last_seen, const char *profile_type)
{
	struct sq_service *v;
	bool created;

	s->services = xrealloc(s->services, (s->nr_services + 1) * sizeof(*s->services));
	v = &s->services[s->nr_services++];
	v->id = id;
	v->name = xstrdup(name);
	v->units = xstrdup(units ? units : "samples");
	v->spy_name = xstrdup(spy ? spy : "unknown");
	v->sample_rate = rate ? rate : 100;
	v->last_seen = last_seen;
	v->profile_type = profile_type && *profile_type ? xstrdup(profile_type) : NULL;
	*hashmap__insert(s->service_ids, name, strlen(name), &created) =
		(void *)(uintptr_t)s->nr_services;
}

void sq__series_key(struct strbuf *out, int64_t service, const char *profile_type,
		    const char *labels_key)
{
	strbuf_add(out, &service, sizeof(service));
	strbuf_addstr(out, profile_type);
	strbuf_addch(out, '\0');
	strbuf_addstr(out, labels_key);
}

bool sq__type_matches(const struct sq_service *svc, const struct sq_series *v,
		      const struct store_query *q)
{
	const char *def, *type;

	if (!svc)
		return !q->profile_type || !strcmp(v->profile_type, q->profile_type);
	/* a series stored before types were is of the service's default type */
	def = svc->profile_type ? svc->profile_type : ptype__of_service(svc->name);
	type = *v->profile_type ? v->profile_type : def;
	return !strcmp(type, q->profile_type ? q->profile_type : def);
}

void sq__add_series(struct sqlite_store *s, int64_t id, int64_t service,
		    const char *profile_type, const char *key, int64_t first, int64_t last)
{
	struct strbuf k = STRBUF_INIT;
	struct sq_series *v;
	bool created;

	s->series = xrealloc(s->series, (s->nr_series + 1) * sizeof(*s->series));
	v = &s->series[s->nr_series++];
	v->id = id;
	v->service = service;
	v->profile_type = xstrdup(profile_type ? profile_type : "");
	labels_init(&v->labels);
	labels_from_key(&v->labels, key);
	labels__sort(&v->labels);
	v->first_seen = first;
	v->last_seen = last;
	sq__series_key(&k, service, v->profile_type, key);
	*hashmap__insert(s->series_ids, k.buf, k.len, &created) = (void *)(uintptr_t)s->nr_series;
	strbuf_release(&k);
}

static void free_memory(struct sqlite_store *s)
{
	for (size_t i = 0; i < s->nr_names; i++)
		free(s->names[i]);
	free(s->names);
	hashmap__free(s->name_ids);
	free(s->parent);
	free(s->frame);
	idmap__free(s->node_ids);
	for (size_t i = 0; i < s->nr_services; i++) {
		free(s->services[i].name);
		free(s->services[i].units);
		free(s->services[i].spy_name);
		free(s->services[i].profile_type);
	}
	free(s->services);
	hashmap__free(s->service_ids);
	for (size_t i = 0; i < s->nr_series; i++) {
		labels_release(&s->series[i].labels);
		free(s->series[i].profile_type);
	}
	free(s->series);
	hashmap__free(s->series_ids);
	s->names = NULL;
	s->parent = s->frame = NULL;
	s->services = NULL;
	s->series = NULL;
	s->nr_names = s->alloc_names = s->nr_nodes = s->alloc_nodes = 0;
	s->nr_services = s->nr_series = 0;
}

/* (Re)loads the in-memory mirror of the dictionaries from the database. */
int sq__load(struct sqlite_store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	free_memory(s);
	s->name_ids = hashmap__new();
	s->node_ids = idmap__new();
	s->service_ids = hashmap__new();
	s->series_ids = hashmap__new();
	sq__add_node(s, 0, 0, 0);

	if (sqlite3_prepare_v2(s->db, "SELECT id, name FROM frames", -1, &st, NULL))
		return sq__error(s, 0, "read frames", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq__add_name(s, (uint32_t)sqlite3_column_int64(st, 0),
			 (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq__error(s, rc, "read frames", err, errlen);

	if (sqlite3_prepare_v2(s->db, "SELECT id, parent, frame FROM stacks", -1, &st, NULL))
		return sq__error(s, 0, "read stacks", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq__add_node(s, (uint32_t)sqlite3_column_int64(st, 0),
			 (uint32_t)sqlite3_column_int64(st, 1), (uint32_t)sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq__error(s, rc, "read stacks", err, errlen);

	if (sqlite3_prepare_v2(s->db, "SELECT id, name, units, spy_name, sample_rate, last_seen,"
			       " profile_type FROM services ORDER BY id", -1, &st, NULL))
		return sq__error(s, 0, "read services", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq__add_service(s, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
			    (const char *)sqlite3_column_text(st, 2),
			    (const char *)sqlite3_column_text(st, 3),
			    (uint32_t)sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
			    (const char *)sqlite3_column_text(st, 6));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq__error(s, rc, "read services", err, errlen);

	if (sqlite3_prepare_v2(s->db, "SELECT id, service, profile_type, labels, first_seen,"
			       " last_seen FROM series ORDER BY id", -1, &st, NULL))
		return sq__error(s, 0, "read series", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sq__add_series(s, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			   (const char *)sqlite3_column_text(st, 2),
			   (const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 4),
			   sqlite3_column_int64(st, 5));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq__error(s, rc, "read series", err, errlen);
	return sq__rollup_load(s, err, errlen);
}

const struct sq_service *sq__find_service(const struct sqlite_store *s, const char *name)
{
	size_t len = strlen(name);
	void **slot = hashmap__find(s->service_ids, name, len);

	if (!slot && len > 4 && !strcmp(name + len - 4, ".cpu"))
		slot = hashmap__find(s->service_ids, name, len - 4);
	if (!slot) {
		struct strbuf alt = STRBUF_INIT;
		strbuf_addf(&alt, "%s.cpu", name);
		slot = hashmap__find(s->service_ids, alt.buf, alt.len);
		strbuf_release(&alt);
	}
	return slot ? &s->services[(uintptr_t)*slot - 1] : NULL;
}

static int exec(struct sqlite_store *s, const char *sql, char *err, size_t errlen)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	return rc ? sq__error(s, rc, sql, err, errlen) : 0;
}

/* Brings a database of an older schema to SCHEMA_VERSION; a new one is created at it. */
static int migrate(struct sqlite_store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int version = -1, has_series = 0, ret;

	if (sqlite3_prepare_v2(s->db, "SELECT (SELECT user_version FROM pragma_user_version),"
			       " (SELECT count(*) FROM sqlite_master WHERE name = 'series')", -1,
			       &st, NULL))
		return sq__error(s, 0, "read the schema version", err, errlen);
	if (sqlite3_step(st) == SQLITE_ROW) {
		version = sqlite3_column_int(st, 0);
		has_series = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	if (version < 0)
		return sq__error(s, 0, "read the schema version", err, errlen);
	if (version > SCHEMA_VERSION) {
		errmsg(err, errlen, "failed to open database '%s': schema version %d is newer than"
		       " this kiln's %d", s->path, version, SCHEMA_VERSION);
		return -EINVAL;
	}
	if (!has_series)	/* new: created at the current version */
		return exec(s, "PRAGMA user_version = 1;", err, errlen);
	if (version == 0) {
		ret = exec(s, migrate_v1, err, errlen);
		if (ret) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return ret;
		}
		log_info("migrated '%s' to schema version %d (profile types)", s->path,
			 SCHEMA_VERSION);
	}
	return 0;
}

static void sq_close(struct store *st);

static const struct store_ops sqlite_ops = {
	.put = sq__put,
	.select = sq__select,
	.select_tree = sq__select_tree,
	.series = sq__series,
	.label_names = sq__label_names,
	.label_values = sq__label_values,
	.services = sq__services,
	.retain = sq__retain,
	.stats = sq__stats,
	.close = sq_close,
};

/* Opens (creating) the database file path. */
static struct store *sq_open(const char *path, const struct store_options *opts, char *err,
			     size_t errlen)
{
	struct sqlite_store *s = xcalloc(1, sizeof(*s));
	int rc;

	s->base.ops = &sqlite_ops;
	s->base.generation = 1;
	s->base.resolution = STORE_RAW_STEP;
	if (opts)
		s->base.opts = *opts;
	s->path = xstrdup(path);
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	/* a put waits for the reads holding the mirror, not for the ones that come after */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->mirror, &attr);
	pthread_rwlockattr_destroy(&attr);
	pthread_mutex_init(&s->pool_lock, NULL);
	s->base.concurrent_reads = true;
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc) {
		errmsg(err, errlen, "failed to open database '%s': %s", path,
		       s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* auto_vacuum must be set before the first table is created. */
	if (exec(s, "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL;"
		 " PRAGMA synchronous=FULL; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
		 " PRAGMA mmap_size=1073741824;",
		 err, errlen) ||
	    migrate(s, err, errlen) || exec(s, schema, err, errlen))
		goto fail;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO frames(id, name) VALUES(?, ?)", -1,
			       &s->ins_frame, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO stacks(id, parent, frame) VALUES(?, ?, ?)", -1,
			       &s->ins_stack, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO series(service, labels, first_seen, last_seen,"
			       " profile_type) VALUES(?, ?, ?, ?, ?)", -1, &s->ins_series, NULL) ||
	    sqlite3_prepare_v2(s->db, "UPDATE series SET first_seen = min(first_seen, ?),"
			       " last_seen = max(last_seen, ?) WHERE id = ?", -1, &s->upd_series, NULL) ||
	    sqlite3_prepare_v2(s->db, "SELECT total, nrows, data FROM samples WHERE level = ? AND"
			       " service = ? AND bucket = ? AND series = ?", -1, &s->get_row, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO samples(level, service, bucket, series,"
			       " total, nrows, data) VALUES(?, ?, ?, ?, ?, ?, ?)", -1, &s->put_row, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO services(name, units, spy_name, sample_rate,"
			       " last_seen, profile_type) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
			       " ON CONFLICT(name) DO UPDATE SET"
			       " units = coalesce(?2, units), spy_name = coalesce(?3, spy_name),"
			       " sample_rate = coalesce(?4, sample_rate),"
			       " last_seen = max(last_seen, ?5),"
			       " profile_type = coalesce(profile_type, ?6)", -1, &s->upsert_service,
			       NULL)) {
		sq__error(s, 0, "prepare statements", err, errlen);
		goto fail;
	}
	if (sq__load(s, err, errlen))
		goto fail;
	return &s->base;
fail:
	sq_close(&s->base);
	return NULL;
}

/* The database of a data directory. */
static struct store *sq_open_dir(const char *dir, const struct store_options *opts,
				 char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	struct store *s;

	strbuf_addf(&path, "%s/kiln.db", dir);
	s = sq_open(path.buf, opts, err, errlen);
	strbuf_release(&path);
	return s;
}

const struct store_backend sqlite_store_backend = {
	.scheme = "sqlite",
	.open = sq_open,
	.open_dir = sq_open_dir,
};

static void sq_close(struct store *st)
{
	struct sqlite_store *s = (struct sqlite_store *)st;

	sqlite3_finalize(s->ins_frame);
	sqlite3_finalize(s->ins_stack);
	sqlite3_finalize(s->ins_series);
	sqlite3_finalize(s->upd_series);
	sqlite3_finalize(s->get_row);
	sqlite3_finalize(s->put_row);
	sqlite3_finalize(s->upsert_service);
	sq__readers_close(s);
	sqlite3_close(s->db);
	free_memory(s);
	pthread_rwlock_destroy(&s->mirror);
	pthread_mutex_destroy(&s->pool_lock);
	free(s->path);
	free(s);
}
