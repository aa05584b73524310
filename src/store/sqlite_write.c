/* The SQLite backend's writes: one upload in one transaction (frames, stack nodes, series,
 * then the raw, hourly and daily sample rows). */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "profile/ptype.h"
#include "util/log.h"
#include "util/strbuf.h"

struct row_vec {
	struct sample_row *v;
	size_t n, alloc;
};

static int step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what, char *err,
		     size_t errlen)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sq__error(s, rc, what, err, errlen);
}

static int intern_frame(struct sqlite_store *s, const char *name, uint32_t *out, char *err,
			size_t errlen)
{
	void **slot = hashmap__find(s->name_ids, name, strlen(name));
	uint32_t id;
	int ret;

	if (slot) {
		*out = (uint32_t)(uintptr_t)*slot;
		return 0;
	}
	id = s->nr_names ? (uint32_t)s->nr_names : 1;
	sqlite3_bind_int64(s->ins_frame, 1, id);
	sqlite3_bind_text(s->ins_frame, 2, name, -1, SQLITE_STATIC);
	ret = step_done(s, s->ins_frame, "insert frame", err, errlen);
	if (ret)
		return ret;
	sq__add_name(s, id, name);
	*out = id;
	return 0;
}

static int intern_node(struct sqlite_store *s, uint32_t parent, uint32_t frame, uint32_t *out,
		       char *err, size_t errlen)
{
	uint32_t id = idmap__get(s->node_ids, (uint64_t)parent << 32 | frame);
	int ret;

	if (id) {
		*out = id;
		return 0;
	}
	if (s->nr_nodes >= UINT32_MAX) {
		errmsg(err, errlen, "failed to insert stack in '%s': too many stacks", s->path);
		return -ENOSPC;
	}
	id = (uint32_t)s->nr_nodes;
	sqlite3_bind_int64(s->ins_stack, 1, id);
	sqlite3_bind_int64(s->ins_stack, 2, parent);
	sqlite3_bind_int64(s->ins_stack, 3, frame);
	ret = step_done(s, s->ins_stack, "insert stack", err, errlen);
	if (ret)
		return ret;
	sq__add_node(s, id, parent, frame);
	*out = id;
	return 0;
}

/* The service's id; *type is set to the profile type the put stores. */
static int get_service(struct sqlite_store *s, const struct store_put *put, int64_t *id,
		       const char **type, char *err, size_t errlen)
{
	void **slot = hashmap__find(s->service_ids, put->service, strlen(put->service));
	sqlite3_stmt *st = s->upsert_service;
	int ret;

	sqlite3_bind_text(st, 1, put->service, -1, SQLITE_STATIC);
	if (put->units)
		sqlite3_bind_text(st, 2, put->units, -1, SQLITE_STATIC);
	if (put->spy_name)
		sqlite3_bind_text(st, 3, put->spy_name, -1, SQLITE_STATIC);
	if (put->sample_rate)
		sqlite3_bind_int64(st, 4, put->sample_rate);
	sqlite3_bind_int64(st, 5, put->until);
	*type = put->profile_type ? put->profile_type :
		slot && s->services[(uintptr_t)*slot - 1].profile_type ?
		s->services[(uintptr_t)*slot - 1].profile_type : PTYPE_CPU_SAMPLES;
	sqlite3_bind_text(st, 6, *type, -1, SQLITE_STATIC);
	ret = step_done(s, st, "insert service", err, errlen);
	if (ret)
		return ret;
	if (!slot) {
		*id = sqlite3_last_insert_rowid(s->db);
		sq__add_service(s, *id, put->service, put->units, put->spy_name, put->sample_rate,
				put->until, *type);
		*type = s->services[s->nr_services - 1].profile_type;
		return 0;
	}
	struct sq_service *v = &s->services[(uintptr_t)*slot - 1];
	if (!v->profile_type)
		v->profile_type = xstrdup(*type);
	if (put->units) {
		free(v->units);
		v->units = xstrdup(put->units);
	}
	if (put->spy_name) {
		free(v->spy_name);
		v->spy_name = xstrdup(put->spy_name);
	}
	if (put->sample_rate)
		v->sample_rate = put->sample_rate;
	if (put->until > v->last_seen)
		v->last_seen = put->until;
	*id = v->id;
	return 0;
}

static int get_series(struct sqlite_store *s, int64_t service, const char *type,
		      const struct labels *l, int64_t from, int64_t until, int64_t *id, char *err,
		      size_t errlen)
{
	struct strbuf lk = STRBUF_INIT, k = STRBUF_INIT;
	void **slot;
	int ret;

	sq__labels_key(&lk, l);
	sq__series_key(&k, service, type, lk.buf);
	slot = hashmap__find(s->series_ids, k.buf, k.len);
	if (slot) {
		struct sq_series *v = &s->series[(uintptr_t)*slot - 1];
		*id = v->id;
		sqlite3_bind_int64(s->upd_series, 1, from);
		sqlite3_bind_int64(s->upd_series, 2, until);
		sqlite3_bind_int64(s->upd_series, 3, v->id);
		ret = step_done(s, s->upd_series, "update series", err, errlen);
		if (!ret) {
			v->first_seen = from < v->first_seen ? from : v->first_seen;
			v->last_seen = until > v->last_seen ? until : v->last_seen;
		}
	} else {
		sqlite3_bind_int64(s->ins_series, 1, service);
		sqlite3_bind_text(s->ins_series, 2, lk.buf, (int)lk.len, SQLITE_STATIC);
		sqlite3_bind_int64(s->ins_series, 3, from);
		sqlite3_bind_int64(s->ins_series, 4, until);
		sqlite3_bind_text(s->ins_series, 5, type, -1, SQLITE_STATIC);
		ret = step_done(s, s->ins_series, "insert series", err, errlen);
		if (!ret) {
			*id = sqlite3_last_insert_rowid(s->db);
			sq__add_series(s, *id, service, type, lk.buf, from, until);
		}
	}
	strbuf_release(&lk);
	strbuf_release(&k);
	return ret;
}

int sq__add_rows(struct sqlite_store *s, int level, int64_t service, int64_t bucket,
		    int64_t series, const struct sample_row *rows, size_t n, uint64_t total,
		    char *err, size_t errlen)
{
	struct sample_row *old = NULL, *merged = NULL;
	struct strbuf blob = STRBUF_INIT;
	size_t nold = 0, nm;
	uint64_t old_total = 0;
	int rc, ret = 0;

	sqlite3_bind_int(s->get_row, 1, level);
	sqlite3_bind_int64(s->get_row, 2, service);
	sqlite3_bind_int64(s->get_row, 3, bucket);
	sqlite3_bind_int64(s->get_row, 4, series);
	rc = sqlite3_step(s->get_row);
	if (rc == SQLITE_ROW) {
		old_total = (uint64_t)sqlite3_column_int64(s->get_row, 0);
		if (rows__decode(sqlite3_column_blob(s->get_row, 2),
				 (size_t)sqlite3_column_bytes(s->get_row, 2), &old, &nold)) {
			errmsg(err, errlen, "failed to read samples in '%s': corrupt row", s->path);
			ret = -EIO;
		}
	} else if (rc != SQLITE_DONE) {
		ret = sq__error(s, rc, "read samples", err, errlen);
	}
	sqlite3_reset(s->get_row);
	if (ret)
		goto out;
	if (nold) {
		nm = rows__merge(old, nold, rows, n, &merged);
		rows__encode(&blob, merged, nm);
	} else {
		nm = n;
		rows__encode(&blob, rows, n);
	}
	sqlite3_bind_int(s->put_row, 1, level);
	sqlite3_bind_int64(s->put_row, 2, service);
	sqlite3_bind_int64(s->put_row, 3, bucket);
	sqlite3_bind_int64(s->put_row, 4, series);
	sqlite3_bind_int64(s->put_row, 5, (int64_t)(old_total + total));
	sqlite3_bind_int64(s->put_row, 6, (int64_t)nm);
	sqlite3_bind_blob(s->put_row, 7, blob.buf, (int)blob.len, SQLITE_STATIC);
	ret = step_done(s, s->put_row, "write samples", err, errlen);
out:
	free(old);
	free(merged);
	strbuf_release(&blob);
	return ret;
}

int64_t sq__floor_to(int64_t t, int64_t step)
{
	int64_t b = t / step * step;
	return b > t ? b - step : b;
}

static int put_locked(struct sqlite_store *s, const struct store_put *put, char *err,
		      size_t errlen)
{
	const struct profile *p = put->profile;
	size_t nr_names = profile__nr_names(p), nr_stacks = profile__nr_stacks(p);
	uint32_t *fmap = xcalloc(nr_names ? nr_names : 1, sizeof(*fmap));
	const uint32_t max_depth = store_put__max_depth(put);
	int64_t *series_id = xcalloc(put->nr_series, sizeof(*series_id));
	struct row_vec *vec = xcalloc(put->nr_series, sizeof(*vec));
	int64_t service = 0;
	const char *type = NULL;
	char *owned = NULL;
	int ret;

	ret = get_service(s, put, &service, &type, err, errlen);
	if (!ret)
		type = owned = xstrdup(type);	/* the mirror may move */
	for (size_t i = 0; !ret && i < put->nr_series; i++)
		ret = get_series(s, service, type, &put->series[i], put->from, put->until,
				 &series_id[i], err, errlen);
	for (size_t i = 0; !ret && i < nr_stacks; i++) {
		struct profile_stack st = profile__stack(p, i);
		uint32_t si = put->stack_series ? put->stack_series[i] : 0, node = 0;
		struct row_vec *v;

		uint64_t value = st.values[put->type_index];
		if (st.depth <= put->skip || !value)
			continue;
		if (si >= put->nr_series) {
			errmsg(err, errlen, "failed to store stack %zu: no series %u", i, si);
			ret = -EINVAL;
			break;
		}
		for (uint32_t j = put->skip; !ret && j < st.depth && j - put->skip < max_depth;
		     j++) {
			uint32_t pf = st.frames[j];
			if (!fmap[pf])
				ret = intern_frame(s, profile__name(p, pf), &fmap[pf], err, errlen);
			if (!ret)
				ret = intern_node(s, node, fmap[pf], &node, err, errlen);
		}
		v = &vec[si];
		if (v->n == v->alloc) {
			v->alloc = v->alloc ? v->alloc * 2 : 64;
			v->v = xrealloc(v->v, v->alloc * sizeof(*v->v));
		}
		v->v[v->n].stack = node;
		v->v[v->n++].count = value;
	}
	for (size_t i = 0; !ret && i < put->nr_series; i++) {
		struct row_vec *v = &vec[i];
		uint64_t total = 0;

		if (!v->n)
			continue;
		v->n = rows__normalize(v->v, v->n);
		for (size_t j = 0; j < v->n; j++)
			total += v->v[j].count;
		/* The raw row; coarser rows only when their period is already rolled up. */
		for (int level = 0; !ret && level < NR_LEVELS; level++) {
			int64_t bucket = sq__floor_to(put->from, level_step[level]);
			if (level && bucket >= s->done_until[level])
				continue;
			ret = sq__add_rows(s, level, service, bucket, series_id[i], v->v, v->n,
					   total, err, errlen);
		}
	}
	if (!ret) {
		int64_t raw = sq__floor_to(put->from, STORE_RAW_STEP);
		/* A clock ahead of ours must not close hours that are still open. */
		if (raw > s->max_bucket && raw <= (int64_t)time(NULL) + 300)
			s->max_bucket = raw;
		ret = sq__rollup(s, 0, err, errlen);
	}
	for (size_t i = 0; i < put->nr_series; i++)
		free(vec[i].v);
	free(vec);
	free(series_id);
	free(fmap);
	free(owned);
	return ret;
}

/* Checks what put_locked does not: the put's fields and its time. Returns 0 or -EINVAL. */
static int validate(const struct store_put *put, char *err, size_t errlen)
{
	if (!put->service || !*put->service || !put->nr_series || put->until < put->from ||
	    put->type_index >= profile__nr_types(put->profile)) {
		errmsg(err, errlen, "failed to store profile: %s",
		       put->until < put->from ? "time range ends before it starts" :
		       put->type_index >= profile__nr_types(put->profile) ? "no such sample type"
									  : "no service or series");
		return -EINVAL;
	}
	if (put->from > (int64_t)time(NULL) + 86400) {
		errmsg(err, errlen, "failed to store profile: it starts more than a day from now");
		return -EINVAL;
	}
	return 0;
}

int sq__put(struct store *st, const struct store_put *put, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	int rc, ret;

	if (validate(put, err, errlen) || (put->also && validate(put->also, err, errlen)))
		return -EINVAL;
	sq__mirror_wrlock(s);	/* reads see the mirror and the database as committed */
	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc) {
		sq__mirror_unlock(s);
		return sq__error(s, rc, "begin transaction", err, errlen);
	}
	ret = s->done_until[1] ? 0 : sq__rollup_init(s, put->from, err, errlen);
	if (!ret)
		ret = put_locked(s, put, err, errlen);
	if (!ret && put->also)	/* in the same transaction: both or neither */
		ret = put_locked(s, put->also, err, errlen);
	if (!ret) {
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
		if (rc)
			ret = sq__error(s, rc, "commit", err, errlen);
	}
	if (ret) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		/* The in-memory mirror may hold ids that were rolled back. */
		if (sq__load(s, NULL, 0))
			log_error("failed to reload '%s' after a failed write", s->path);
	}
	sq__mirror_unlock(s);
	return ret;
}
