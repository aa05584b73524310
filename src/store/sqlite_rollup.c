/* Hour and day rollups of the SQLite backend, built once per closed period.
 *
 * Merging every upload into its hour and day rows would rewrite a day row holding all of a
 * series' distinct stacks on each upload; instead an hour is rolled up from its raw rows
 * once the newest raw bucket is GRACE seconds past its end, and a day from its hour rows
 * once its last hour is rolled up. rollups.done_until[level] says up to where level rows
 * are complete: reads use a level only below it, and an upload that comes later than that
 * for its period is merged into the rolled-up rows directly (sqlite_write.c). Periods that
 * no upload closes (the last hour of a backfill, a quiet service) are closed by the wall
 * clock when retention runs. */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"

/* Uploads may arrive this late and still be rolled up with their hour. */
#define GRACE 600

struct series_rows {
	int64_t series;
	struct sample_row *v;
	size_t n, alloc;
	uint64_t total;
};

struct collect {
	struct series_rows *cur;
};

static void collect_one(uint32_t stack, uint64_t count, void *arg)
{
	struct series_rows *r = ((struct collect *)arg)->cur;

	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 256;
		r->v = xrealloc(r->v, r->alloc * sizeof(*r->v));
	}
	r->v[r->n].stack = stack;
	r->v[r->n++].count = count;
	r->total += count;
}

static int save_done(struct sqlite_store *s, int level, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO rollups(level, done_until)"
			       " VALUES(?, ?)", -1, &st, NULL))
		return sq__error(s, 0, "prepare rollup", err, errlen);
	sqlite3_bind_int(st, 1, level);
	sqlite3_bind_int64(st, 2, s->done_until[level]);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sq__error(s, rc, "save rollup", err, errlen);
}

int sq__rollup_init(struct sqlite_store *s, int64_t from, char *err, size_t errlen)
{
	int ret;

	s->done_until[1] = sq__floor_to(from, STORE_HOUR_STEP);
	s->done_until[2] = sq__floor_to(from, STORE_DAY_STEP);
	ret = save_done(s, 1, err, errlen);
	return ret ? ret : save_done(s, 2, err, errlen);
}

int sq__rollup_load(struct sqlite_store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	memset(s->done_until, 0, sizeof(s->done_until));
	s->max_bucket = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT level, done_until FROM rollups", -1, &st, NULL))
		return sq__error(s, 0, "read rollups", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int level = sqlite3_column_int(st, 0);
		if (level > 0 && level < NR_LEVELS)
			s->done_until[level] = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sq__error(s, rc, "read rollups", err, errlen);
	if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(bucket), 0) FROM samples WHERE level = 0",
			       -1, &st, NULL))
		return sq__error(s, 0, "read newest bucket", err, errlen);
	if (sqlite3_step(st) == SQLITE_ROW)
		s->max_bucket = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Rolls the finer rows of [t, t + step) of one service into one row per series.
 * slot[series id] is scratch space of the caller, all -1 on entry and on return. */
static int rollup_period(struct sqlite_store *s, sqlite3_stmt *rows, int level, int64_t service,
			 int64_t t, int32_t *slot, int64_t max_series, char *err, size_t errlen)
{
	struct series_rows *sr = NULL;
	size_t nr = 0;
	struct collect c;
	int rc, ret = 0;

	sqlite3_bind_int(rows, 1, level - 1);
	sqlite3_bind_int64(rows, 2, service);
	sqlite3_bind_int64(rows, 3, t);
	sqlite3_bind_int64(rows, 4, t + level_step[level]);
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		int64_t series = sqlite3_column_int64(rows, 0);
		if (series < 0 || series > max_series)
			continue;	/* a series deleted by retention */
		if (slot[series] < 0) {
			sr = xrealloc(sr, (nr + 1) * sizeof(*sr));
			memset(&sr[nr], 0, sizeof(*sr));
			sr[nr].series = series;
			slot[series] = (int32_t)nr++;
		}
		c.cur = &sr[slot[series]];
		if (rows__each(sqlite3_column_blob(rows, 1), (size_t)sqlite3_column_bytes(rows, 1),
			       collect_one, &c))
			log_warn("skipped a corrupt sample row in '%s'", s->path);
	}
	sqlite3_reset(rows);
	if (rc != SQLITE_DONE)
		ret = sq__error(s, rc, "read rows to roll up", err, errlen);
	for (size_t i = 0; i < nr; i++) {
		slot[sr[i].series] = -1;
		if (!ret && sr[i].n) {
			sr[i].n = rows__normalize(sr[i].v, sr[i].n);
			ret = sq__add_rows(s, level, service, t, sr[i].series, sr[i].v, sr[i].n,
					   sr[i].total, err, errlen);
		}
		free(sr[i].v);
	}
	free(sr);
	return ret;
}

static int rollup_level(struct sqlite_store *s, int level, int64_t until, char *err,
			size_t errlen)
{
	sqlite3_stmt *rows;
	int64_t max_series = 0;
	int32_t *slot;
	int ret = 0;

	if (until <= s->done_until[level])
		return 0;
	for (size_t i = 0; i < s->nr_series; i++)
		if (s->series[i].id > max_series)
			max_series = s->series[i].id;
	slot = xmalloc(((size_t)max_series + 1) * sizeof(*slot));
	memset(slot, 0xff, ((size_t)max_series + 1) * sizeof(*slot));
	if (sqlite3_prepare_v2(s->db, "SELECT series, data FROM samples WHERE level = ? AND"
			       " service = ? AND bucket >= ? AND bucket < ?", -1, &rows, NULL)) {
		free(slot);
		return sq__error(s, 0, "prepare rollup", err, errlen);
	}
	for (int64_t t = s->done_until[level]; !ret && t < until; t += level_step[level])
		for (size_t i = 0; !ret && i < s->nr_services; i++)
			ret = rollup_period(s, rows, level, s->services[i].id, t, slot, max_series,
					    err, errlen);
	sqlite3_finalize(rows);
	free(slot);
	if (ret)
		return ret;
	s->done_until[level] = until;
	return save_done(s, level, err, errlen);
}

int sq__rollup(struct sqlite_store *s, int64_t now, char *err, size_t errlen)
{
	int64_t newest = now ? now : s->max_bucket;
	int64_t hours = sq__floor_to(newest - GRACE, STORE_HOUR_STEP), days;
	int ret;

	if (!s->done_until[1])
		return 0;
	ret = rollup_level(s, 1, hours, err, errlen);
	days = sq__floor_to(s->done_until[1], STORE_DAY_STEP);
	return ret ? ret : rollup_level(s, 2, days, err, errlen);
}
