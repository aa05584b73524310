/* The SQLite backend's retention and statistics.
 *
 * Retention deletes raw rows older than `before`, hourly rows older than four times that
 * age and daily rows older than sixteen times (but never rows not yet rolled up, and it
 * first rolls up every period the wall clock has closed: see sqlite_rollup.c), then drops the stack nodes and frame names
 * no remaining row reaches (a mark pass over every blob: parents always have smaller ids
 * than their children, so one backward sweep marks all ancestors), and finally returns the
 * freed pages to the file system (incremental vacuum, WAL checkpoint). */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/log.h"
#include "util/strbuf.h"

struct mark {
	uint8_t *live;
	size_t n;
	int bad;
};

static void mark_one(uint32_t stack, uint64_t count, void *arg)
{
	struct mark *m = arg;

	(void)count;
	if (stack < m->n)
		m->live[stack] = 1;
	else
		m->bad = 1;
}

static int delete_ids(struct sqlite_store *s, const char *sql, const uint8_t *live, size_t n,
		      const uint8_t *exists, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret = 0;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL))
		return sq__error(s, 0, "prepare delete", err, errlen);
	for (size_t id = 1; !ret && id < n; id++) {
		if (live[id] || !exists[id])
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)id);
		if (sqlite3_step(st) != SQLITE_DONE)
			ret = sq__error(s, 0, "delete unused ids", err, errlen);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* Deletes stack nodes and frames that no sample row references. */
static int collect_garbage(struct sqlite_store *s, char *err, size_t errlen)
{
	struct mark m = { xcalloc(s->nr_nodes, 1), s->nr_nodes, 0 };
	uint8_t *node_exists = xcalloc(s->nr_nodes, 1), *frame_live = xcalloc(s->nr_names + 1, 1);
	uint8_t *frame_exists = xcalloc(s->nr_names + 1, 1);
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT data FROM samples", -1, &st, NULL)) {
		ret = sq__error(s, 0, "scan samples", err, errlen);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (rows__each(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
			       mark_one, &m))
			m.bad = 1;
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ret = sq__error(s, rc, "scan samples", err, errlen);
		goto out;
	}
	if (m.bad) {
		/* Never delete what a row we cannot read might reference. */
		log_warn("not collecting stacks in '%s': a sample row is corrupt", s->path);
		goto out;
	}
	for (size_t id = 1; id < s->nr_nodes; id++)
		node_exists[id] = idmap__get(s->node_ids, (uint64_t)s->parent[id] << 32 |
					     s->frame[id]) == id;
	for (size_t id = s->nr_nodes; id-- > 1;) {
		if (!m.live[id] || !node_exists[id])
			continue;
		m.live[s->parent[id]] = 1;
		if (s->frame[id] <= s->nr_names)
			frame_live[s->frame[id]] = 1;
	}
	for (size_t id = 1; id < s->nr_names; id++)
		frame_exists[id] = s->names[id] != NULL;
	ret = delete_ids(s, "DELETE FROM stacks WHERE id = ?", m.live, s->nr_nodes, node_exists,
			 err, errlen);
	if (!ret)
		ret = delete_ids(s, "DELETE FROM frames WHERE id = ?", frame_live, s->nr_names,
				 frame_exists, err, errlen);
out:
	free(m.live);
	free(node_exists);
	free(frame_live);
	free(frame_exists);
	return ret;
}

int sq__retain(struct store *st, int64_t before, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	int64_t now = time(NULL), age = now - before > 0 ? now - before : 0;
	int64_t cut[NR_LEVELS] = { before, now - 4 * age, now - 16 * age };
	sqlite3_stmt *del;
	int rc, ret = 0, deleted = 0;

	/* Rollups move done_until and deletions reuse ids: reads wait until it is done. */
	sq__mirror_wrlock(s);
	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc) {
		sq__mirror_unlock(s);
		return sq__error(s, rc, "begin transaction", err, errlen);
	}
	/* Close the periods the wall clock has closed, before deciding what may go. */
	ret = sq__rollup(s, now, err, errlen);
	if (ret)
		goto rollback;
	for (int level = 0; level + 1 < NR_LEVELS; level++)
		if (cut[level] > s->done_until[level + 1])
			cut[level] = s->done_until[level + 1];
	if (sqlite3_prepare_v2(s->db, "DELETE FROM samples WHERE level = ? AND bucket < ?", -1,
			       &del, NULL)) {
		ret = sq__error(s, 0, "prepare delete", err, errlen);
		goto rollback;
	}
	for (int level = 0; level < NR_LEVELS; level++) {
		sqlite3_bind_int(del, 1, level);
		sqlite3_bind_int64(del, 2, cut[level]);
		rc = sqlite3_step(del);
		sqlite3_reset(del);
		if (rc != SQLITE_DONE) {
			ret = sq__error(s, rc, "delete old samples", err, errlen);
			break;
		}
		deleted += sqlite3_changes(s->db);
	}
	sqlite3_finalize(del);
	if (!ret && deleted) {
		rc = sqlite3_exec(s->db, "DELETE FROM series WHERE id NOT IN"
				  " (SELECT DISTINCT series FROM samples)", NULL, NULL, NULL);
		if (rc)
			ret = sq__error(s, rc, "delete old series", err, errlen);
	}
	if (!ret && deleted)
		ret = collect_garbage(s, err, errlen);
	if (ret)
		goto rollback;
	rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc) {
		ret = sq__error(s, rc, "commit", err, errlen);
		goto rollback;
	}
	if (deleted) {
		__atomic_add_fetch(&s->retains, 1, __ATOMIC_SEQ_CST);
		ret = sq__load(s, err, errlen);
	}
	sq__mirror_unlock(s);
	/* Truncating the WAL waits for every read in progress (up to the busy timeout): only
	 * when there is none, else the pages are reused as they are. */
	if (deleted)
		sqlite3_exec(s->db, sq__readers_busy(s) ? "PRAGMA incremental_vacuum;"
			     " PRAGMA wal_checkpoint(PASSIVE);" : "PRAGMA incremental_vacuum;"
			     " PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL);
	return ret ? ret : deleted;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	sq__mirror_unlock(s);
	return ret;
}

static int64_t file_size(const char *path, const char *suffix)
{
	struct strbuf p = STRBUF_INIT;
	struct stat sb;
	int64_t size;

	strbuf_addf(&p, "%s%s", path, suffix);
	size = stat(p.buf, &sb) ? 0 : (int64_t)sb.st_size;
	strbuf_release(&p);
	return size;
}

int sq__stats(struct store *st, struct store_stats *out, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	sqlite3_stmt *q;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(s->db, "SELECT coalesce(sum(nrows), 0), coalesce(sum(total), 0)"
			       " FROM samples WHERE level = 0", -1, &q, NULL))
		return sq__error(s, 0, "count samples", err, errlen);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		out->rows = (uint64_t)sqlite3_column_int64(q, 0);
		out->samples = (uint64_t)sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW)
		return sq__error(s, rc, "count samples", err, errlen);
	out->stacks = idmap__count(s->node_ids);
	out->frames = hashmap__count(s->name_ids);
	out->bytes = (uint64_t)(file_size(s->path, "") + file_size(s->path, "-wal"));
	return 0;
}
