/* The SQLite backend's reads off the writer: a pool of read-only connections, one per
 * read in progress, each in its own read transaction. In WAL mode a reader sees the
 * database as it was committed when its transaction began, whatever is written after,
 * and neither blocks the writer nor waits for it; so a slow query no longer holds up
 * ingest (the server's lock then guards writes only).
 *
 * The in-memory mirror (dictionaries, rollup watermarks) is the one thing reads and the
 * writer share: a put or retain holds the mirror's write lock from its BEGIN until it has
 * committed or rolled back (and reloaded), so that under the read lock the mirror matches
 * the committed database. A read takes its snapshot first (off the lock: the watermarks
 * come from the snapshot's own rollups table), then the read lock: the ids its rows name
 * are in the mirror, and stay there (the mirror only grows) unless a retain deletes rows,
 * which the read finds in s->retains and answers by starting over. */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/strbuf.h"

/* Idle readers kept open; more readers at once are opened and closed again. */
#define MAX_IDLE_READERS 8

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool sq__read_expired(const struct sq_reader *rd)
{
	return rd->deadline_ns && mono_ns() > rd->deadline_ns;
}

/* sqlite3_progress_handler: a non-zero return interrupts the statement. */
static int progress(void *arg)
{
	return sq__read_expired(arg);
}

int sq__read_error(struct sq_reader *rd, int rc, const char *what, char *err, size_t errlen)
{
	if (rc == SQLITE_INTERRUPT || sq__read_expired(rd)) {
		errmsg(err, errlen, "query stopped after its deadline of %d ms in '%s': narrow "
		       "the time range or the selector", rd->s->base.opts.query_timeout_ms,
		       rd->s->path);
		return -ETIMEDOUT;
	}
	errmsg(err, errlen, "failed to %s in '%s': %s", what, rd->s->path, sqlite3_errmsg(rd->db));
	return rc == SQLITE_BUSY ? -EBUSY : -EIO;
}

void sq__mirror_rdlock(struct sqlite_store *s)
{
	pthread_rwlock_rdlock(&s->mirror);
}

void sq__mirror_wrlock(struct sqlite_store *s)
{
	pthread_rwlock_wrlock(&s->mirror);
}

void sq__mirror_unlock(struct sqlite_store *s)
{
	pthread_rwlock_unlock(&s->mirror);
}

static struct sq_reader *reader_open(struct sqlite_store *s, char *err, size_t errlen)
{
	struct sq_reader *rd = xcalloc(1, sizeof(*rd));
	int rc;

	rd->s = s;
	rc = sqlite3_open_v2(s->path, &rd->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (!rc)
		rc = sqlite3_exec(rd->db, "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;"
				  " PRAGMA mmap_size=1073741824;", NULL, NULL, NULL);
	if (rc) {
		errmsg(err, errlen, "failed to open a read connection to '%s': %s", s->path,
		       rd->db ? sqlite3_errmsg(rd->db) : sqlite3_errstr(rc));
		sqlite3_close(rd->db);
		free(rd);
		return NULL;
	}
	sqlite3_busy_timeout(rd->db, 5000);
	sqlite3_progress_handler(rd->db, 1000, progress, rd);
	return rd;
}

static void reader_close(struct sq_reader *rd)
{
	sqlite3_close(rd->db);
	free(rd);
}

static struct sq_reader *reader_get(struct sqlite_store *s, char *err, size_t errlen)
{
	struct sq_reader *rd;

	pthread_mutex_lock(&s->pool_lock);
	rd = s->idle;
	if (rd) {
		s->idle = rd->next;
		s->nr_idle--;
	}
	s->nr_busy++;
	pthread_mutex_unlock(&s->pool_lock);
	if (!rd && !(rd = reader_open(s, err, errlen))) {
		pthread_mutex_lock(&s->pool_lock);
		s->nr_busy--;
		pthread_mutex_unlock(&s->pool_lock);
	}
	return rd;
}

static void reader_put(struct sq_reader *rd)
{
	struct sqlite_store *s = rd->s;

	pthread_mutex_lock(&s->pool_lock);
	s->nr_busy--;
	if (s->nr_idle < MAX_IDLE_READERS) {
		rd->next = s->idle;
		s->idle = rd;
		s->nr_idle++;
		rd = NULL;
	}
	pthread_mutex_unlock(&s->pool_lock);
	if (rd)
		reader_close(rd);
}

struct sq_reader *sq__read_begin(struct sqlite_store *s, char *err, size_t errlen)
{
	struct sq_reader *rd = reader_get(s, err, errlen);
	sqlite3_stmt *st;
	int ms = s->base.opts.query_timeout_ms, rc;

	if (!rd)
		return NULL;
	rd->deadline_ns = ms > 0 ? mono_ns() + (int64_t)ms * 1000000 : 0;
	rd->retains = __atomic_load_n(&s->retains, __ATOMIC_SEQ_CST);
	memset(rd->done_until, 0, sizeof(rd->done_until));
	/* BEGIN is deferred: the snapshot is taken by the transaction's first read. */
	rc = sqlite3_exec(rd->db, "BEGIN", NULL, NULL, NULL);
	if (!rc)
		rc = sqlite3_prepare_v2(rd->db, "SELECT level, done_until FROM rollups", -1, &st,
					NULL);
	if (!rc) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int level = sqlite3_column_int(st, 0);
			if (level > 0 && level < NR_LEVELS)
				rd->done_until[level] = sqlite3_column_int64(st, 1);
		}
		rc = rc == SQLITE_DONE ? 0 : rc;
		sqlite3_finalize(st);
	}
	if (rc) {
		sq__read_error(rd, rc, "start a read", err, errlen);
		sqlite3_exec(rd->db, "ROLLBACK", NULL, NULL, NULL);
		reader_put(rd);
		return NULL;
	}
	/* puts commit under the write lock: the mirror now holds every id of the snapshot */
	sq__mirror_rdlock(s);
	return rd;
}

void sq__read_end(struct sq_reader *rd)
{
	if (!rd)
		return;
	if (sqlite3_exec(rd->db, "COMMIT", NULL, NULL, NULL))
		sqlite3_exec(rd->db, "ROLLBACK", NULL, NULL, NULL);
	rd->deadline_ns = 0;
	reader_put(rd);
}

size_t sq__readers_busy(struct sqlite_store *s)
{
	size_t n;

	pthread_mutex_lock(&s->pool_lock);
	n = s->nr_busy;
	pthread_mutex_unlock(&s->pool_lock);
	return n;
}

void sq__readers_close(struct sqlite_store *s)
{
	while (s->idle) {
		struct sq_reader *rd = s->idle;
		s->idle = rd->next;
		reader_close(rd);
	}
	s->nr_idle = 0;
	if (s->nr_busy)
		log_warn("closing '%s' with %zu reads in progress", s->path, s->nr_busy);
}
