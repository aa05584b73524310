/* Internals of the SQLite backend, shared by store/sqlite.c (schema, writes, retention)
 * and store/sqlite_query.c (reads). Not a public interface.
 *
 * Schema:
 *   frames(id, name)                        a frame name, stored once
 *   stacks(id, parent, frame)               parent-pointer tree: a stack is its leaf's id
 *   services(id, name, units, spy_name, sample_rate, last_seen, profile_type)
 *           profile_type: the default of a query naming none (the first one stored)
 *   series(id, service, profile_type, labels, first_seen, last_seen)
 *           labels: "k\x1fv\x1e..." sorted; profile_type '' for series stored before
 *           types were (schema version 0), read as the service's default (which is,
 *           until a put sets it, the type its name says: ptype__of_service)
 *   samples(level, service, bucket, series, total, nrows, data) WITHOUT ROWID
 *           level 0/1/2 = 10 s / 1 h / 1 d buckets; data = store/rows.h blob
 *   rollups(level, done_until)              level rows are complete below done_until
 *
 * Rollups are built when an hour (a day) has closed, from the finer rows, in the
 * transaction of the upload that closed it (store/sqlite_rollup.c): an upload writes only
 * its raw row, unless it comes late for a period already rolled up, then it is merged
 * into the coarser rows too. Reads use a level only below its done_until.
 *
 * The frames, stacks, services and series tables are mirrored in memory (loaded at open),
 * so that ingest deduplicates without a query and select rebuilds stacks without one. */
#ifndef KILN_STORE_SQLITE_INT_H
#define KILN_STORE_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/rows.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "util/hashmap.h"
#include "util/idmap.h"

#define NR_LEVELS 3

struct sqlite_store;

/* A read: a read-only connection of its own (from the store's pool, store/sqlite_read.c)
 * holding one read transaction, so that the read sees one committed state of the
 * database (whole uploads) while puts go on through the store's connection; and the
 * read's deadline. Used by one thread at a time. */
struct sq_reader {
	struct sqlite_store *s;
	sqlite3 *db;
	int64_t deadline_ns;	/* CLOCK_MONOTONIC; 0: none */
	uint64_t retains;	/* s->retains before the snapshot was taken */
	int64_t done_until[NR_LEVELS];	/* the snapshot's rollup watermarks */
	struct sq_reader *next;	/* in the pool of idle readers */
};

/* Takes a reader from the pool (opening one when none is idle), starts its read
 * transaction (the snapshot: every put that returned before, none in progress; its
 * rollup watermarks in rd->done_until) and its deadline (opts.query_timeout_ms), then
 * takes the mirror's read lock: the mirror holds at least what the snapshot does.
 * Returns NULL with a message in err. The caller copies what it needs of the mirror,
 * then calls sq__mirror_unlock before reading rows through rd->db. */
struct sq_reader *sq__read_begin(struct sqlite_store *s, char *err, size_t errlen);
/* Ends the read transaction and gives the reader back to the pool. Accepts NULL. */
void sq__read_end(struct sq_reader *rd);
/* The mirror's read lock (readers) and write lock (put, retain: held until their
 * transaction has committed or rolled back and the mirror matches the database again). */
void sq__mirror_rdlock(struct sqlite_store *s);
void sq__mirror_wrlock(struct sqlite_store *s);
void sq__mirror_unlock(struct sqlite_store *s);
/* True when the read is past its deadline. */
bool sq__read_expired(const struct sq_reader *rd);
/* The negative errno of a failed read step rc (-ETIMEDOUT past the deadline), with its
 * message. */
int sq__read_error(struct sq_reader *rd, int rc, const char *what, char *err, size_t errlen);
/* Closes the idle readers (at close: none may be in use). */
void sq__readers_close(struct sqlite_store *s);
/* Readers in use now. */
size_t sq__readers_busy(struct sqlite_store *s);

struct sq_service {
	int64_t id;
	char *name, *units, *spy_name;
	char *profile_type;	/* NULL: none known (a database of schema version 0) */
	uint32_t sample_rate;
	int64_t last_seen;
};

struct sq_series {
	int64_t id;
	int64_t service;
	char *profile_type;	/* "" for a series stored before types were */
	struct labels labels;
	int64_t first_seen, last_seen;
};

struct sqlite_store {
	struct store base;
	sqlite3 *db;
	char *path;

	/* frames: id -> name (names[0] unused), name -> id */
	char **names;
	size_t nr_names, alloc_names;
	struct hashmap *name_ids;

	/* stack nodes: id -> parent, frame (index 0 unused); (parent << 32 | frame) -> id */
	uint32_t *parent, *frame;
	size_t nr_nodes, alloc_nodes;	/* highest id + 1 */
	struct idmap *node_ids;

	struct sq_service *services;
	size_t nr_services;
	struct hashmap *service_ids;	/* name -> index + 1 */

	struct sq_series *series;
	size_t nr_series;
	struct hashmap *series_ids;	/* service id bytes + labels key -> index + 1 */

	sqlite3_stmt *ins_frame, *ins_stack, *ins_series, *upd_series, *get_row, *put_row;
	sqlite3_stmt *upsert_service;

	/* Reads run in their own threads (struct sq_reader) while one thread writes: the
	 * mirror above and done_until/max_bucket below change only under the write lock
	 * of `mirror`, and are read under its read lock. */
	pthread_rwlock_t mirror;
	pthread_mutex_t pool_lock;
	struct sq_reader *idle;		/* idle readers */
	size_t nr_idle, nr_busy;
	uint64_t retains;		/* retains that deleted rows (ids may be reused after):
					 * atomic */

	int64_t done_until[NR_LEVELS];	/* [1], [2]: rollups complete below; 0 = none yet */
	int64_t max_bucket;		/* newest raw bucket stored */
};

extern const int64_t level_step[NR_LEVELS];

/* The series' labels as stored in the series table. */
void sq__labels_key(struct strbuf *out, const struct labels *l);
/* Finds a service by name; returns NULL when absent. For "app.cpu" also tries "app" and
 * the other way round, so gProfiler services answer Pyroscope-style queries. */
const struct sq_service *sq__find_service(const struct sqlite_store *s, const char *name);
int sq__error(struct sqlite_store *s, int rc, const char *what, char *err, size_t errlen);

void sq__add_name(struct sqlite_store *s, uint32_t id, const char *name);
void sq__add_node(struct sqlite_store *s, uint32_t id, uint32_t parent, uint32_t frame);
void sq__add_service(struct sqlite_store *s, int64_t id, const char *name, const char *units,
		     const char *spy, uint32_t rate, int64_t last_seen, const char *profile_type);
void sq__add_series(struct sqlite_store *s, int64_t id, int64_t service,
		    const char *profile_type, const char *key, int64_t first, int64_t last);
/* The series_ids key of (service, profile type, labels key). */
void sq__series_key(struct strbuf *out, int64_t service, const char *profile_type,
		    const char *labels_key);
/* True when series v of service svc holds the profile type q asks for (NULL: the
 * service's default). svc may be NULL: a series of any type matches a query of none. */
bool sq__type_matches(const struct sq_service *svc, const struct sq_series *v,
		      const struct store_query *q);
/* (Re)loads the in-memory mirror from the database, e.g. after a rolled-back put. */
int sq__load(struct sqlite_store *s, char *err, size_t errlen);

/* Rows of (level, service, bucket, series): merges rows into what is stored. */
int sq__add_rows(struct sqlite_store *s, int level, int64_t service, int64_t bucket,
		 int64_t series, const struct sample_row *rows, size_t n, uint64_t total,
		 char *err, size_t errlen);
/* Builds the hour and day rows of every period closed by the newest raw bucket (now 0) or
 * by the wall clock now, minus a grace period for late uploads, inside the caller's
 * transaction. */
int sq__rollup(struct sqlite_store *s, int64_t now, char *err, size_t errlen);
/* Starts the rollup watermarks at the first upload's time. */
int sq__rollup_init(struct sqlite_store *s, int64_t from, char *err, size_t errlen);
/* Reads done_until and max_bucket from the database. */
int sq__rollup_load(struct sqlite_store *s, char *err, size_t errlen);
int64_t sq__floor_to(int64_t t, int64_t step);

int sq__put(struct store *st, const struct store_put *put, char *err, size_t errlen);
int sq__retain(struct store *st, int64_t before, char *err, size_t errlen);
int sq__stats(struct store *st, struct store_stats *out, char *err, size_t errlen);
int sq__select(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct profile *out, char *err, size_t errlen);
int sq__select_tree(struct store *st, const struct store_query *q, int64_t from,
		    int64_t until, struct store_tree *out, char *err, size_t errlen);
int sq__series(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct store_series *out, char *err, size_t errlen);
int sq__label_names(struct store *st, const struct store_query *q, int64_t from, int64_t until,
		    char ***out, size_t *n, char *err, size_t errlen);
int sq__label_values(struct store *st, const struct store_query *q, const char *name,
		     int64_t from, int64_t until, char ***out, size_t *n, char *err,
		     size_t errlen);
int sq__services(struct store *st, struct store_service **out, size_t *n, char *err,
		 size_t errlen);

#endif
