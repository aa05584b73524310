/* The SQLite backend's reads. A range is cut into whole days (read from day rows), whole
 * hours (hour rows) and the edges (raw 10 s rows), so that a week costs about as much as an
 * hour. Sample blobs are decoded into a dense count array indexed by stack id, and each
 * stack is rebuilt once from the in-memory parent-pointer tree. */
#include "store/sqlite_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/ptype.h"
#include "util/log.h"
#include "util/strbuf.h"

struct range {
	int level;
	int64_t from, until;
};

static int64_t ceil_to(int64_t t, int64_t step)
{
	int64_t b = t / step * step;
	return b < t ? b + step : b;
}

static int64_t floor_to(int64_t t, int64_t step)
{
	int64_t b = t / step * step;
	return b > t ? b - step : b;
}

/* Cuts [from, until) into at most 5 ranges at the coarsest level that covers them and is
 * rolled up there (below done_until). */
static size_t cut_range(const int64_t done_until[NR_LEVELS], int64_t from, int64_t until,
			struct range *out)
{
	size_t n = 0;
	int64_t d0 = ceil_to(from, STORE_DAY_STEP), d1 = floor_to(until, STORE_DAY_STEP);
	int64_t edges[2][2];
	size_t nedges = 0;

	if (from >= until)
		return 0;
	if (d1 > done_until[2])
		d1 = done_until[2];
	if (d0 < d1) {
		out[n++] = (struct range){ 2, d0, d1 };
		edges[nedges][0] = from, edges[nedges++][1] = d0;
		edges[nedges][0] = d1, edges[nedges++][1] = until;
	} else {
		edges[nedges][0] = from, edges[nedges++][1] = until;
	}
	for (size_t i = 0; i < nedges; i++) {
		int64_t a = edges[i][0], b = edges[i][1];
		int64_t h0 = ceil_to(a, STORE_HOUR_STEP), h1 = floor_to(b, STORE_HOUR_STEP);
		if (a >= b)
			continue;
		if (h1 > done_until[1])
			h1 = done_until[1];
		if (h0 < h1) {
			out[n++] = (struct range){ 1, h0, h1 };
			if (a < h0)
				out[n++] = (struct range){ 0, a, h0 };
			if (h1 < b)
				out[n++] = (struct range){ 0, h1, b };
		} else {
			out[n++] = (struct range){ 0, a, b };
		}
	}
	return n;
}

/* Marks the matching series of a service: wanted[series id] = 1. Under the mirror's lock. */
static uint8_t *match_series(struct sqlite_store *s, const struct sq_service *svc,
			     const struct store_query *q, int64_t from, int64_t until,
			     int64_t *max_id)
{
	int64_t top = 0;
	uint8_t *wanted;

	for (size_t i = 0; i < s->nr_series; i++)
		if (s->series[i].id > top)
			top = s->series[i].id;
	wanted = xcalloc((size_t)top + 1, 1);
	for (size_t i = 0; i < s->nr_series; i++) {
		const struct sq_series *v = &s->series[i];
		if (v->service == svc->id && v->last_seen >= from && v->first_seen < until &&
		    sq__type_matches(svc, v, q) && store_query__matches(q, &v->labels))
			wanted[v->id] = 1;
	}
	*max_id = top;
	return wanted;
}

struct acc {
	uint64_t *counts;
	uint32_t *touched;
	size_t nr_touched, alloc_touched, nr_nodes;
	int bad;
};

static void acc_one(uint32_t stack, uint64_t count, void *arg)
{
	struct acc *a = arg;

	if (stack >= a->nr_nodes) {
		a->bad = 1;
		return;
	}
	if (!a->counts[stack]) {
		if (a->nr_touched == a->alloc_touched) {
			a->alloc_touched = a->alloc_touched ? a->alloc_touched * 2 : 4096;
			a->touched = xrealloc(a->touched, a->alloc_touched * sizeof(*a->touched));
		}
		a->touched[a->nr_touched++] = stack;
	}
	a->counts[stack] += count;
}

static int build_profile(struct sqlite_store *s, struct acc *a, struct profile *out)
{
	uint32_t *pmap = xcalloc(s->nr_names ? s->nr_names : 1, sizeof(*pmap));
	uint32_t *frames = NULL;
	size_t alloc = 0;

	for (size_t i = 0; i < a->nr_touched; i++) {
		uint32_t id = a->touched[i], depth = 0;
		uint64_t count = a->counts[id];

		if (!count)
			continue;
		for (uint32_t n = id; n && n < s->nr_nodes; n = s->parent[n]) {
			if (depth == alloc) {
				alloc = alloc ? alloc * 2 : 128;
				frames = xrealloc(frames, alloc * sizeof(*frames));
			}
			uint32_t f = s->frame[n];
			if (f >= s->nr_names || !s->names[f])
				continue;
			if (!pmap[f])
				pmap[f] = profile__intern_str(out, s->names[f]) + 1;
			frames[depth++] = pmap[f] - 1;
			if (depth > 65536)
				break;
		}
		for (uint32_t l = 0, r = depth ? depth - 1 : 0; l < r; l++, r--) {
			uint32_t t = frames[l];
			frames[l] = frames[r];
			frames[r] = t;
		}
		if (depth)
			profile__add(out, frames, depth, count);
	}
	free(frames);
	free(pmap);
	return 0;
}

/* Retries of a read that a retain overlapped (ids it read may have been reused). */
#define READ_RETRIES 3

/* Adds up the sample rows of q's matching series in [from, until) into a (counts per
 * stack node, and the nodes touched), from one snapshot read off the writer. *type is
 * set to the profile type selected (malloc'd; NULL when the service is unknown).
 * Returns 0 holding the mirror's read lock, for the caller to rebuild the stacks with
 * (then sq__mirror_unlock), or a negative errno (not holding it). */
static int gather(struct sqlite_store *s, const struct store_query *q, int64_t from,
		  int64_t until, struct acc *a, char **type, char *err, size_t errlen)
{
	for (int attempt = 0;; attempt++) {
		struct sq_reader *rd = sq__read_begin(s, err, errlen);
		const struct sq_service *svc;
		int64_t done_until[NR_LEVELS], max_id, svc_id;
		uint64_t retains;
		struct range r[5];
		sqlite3_stmt *rows;
		uint8_t *wanted;
		size_t nr;
		int rc = SQLITE_DONE, ret = 0;

		if (!rd)
			return -EIO;
		/* under the mirror's read lock: what the snapshot's rows need of it */
		svc = sq__find_service(s, q->service);
		memcpy(done_until, rd->done_until, sizeof(done_until));
		nr = cut_range(done_until, from, until, r);
		if (!svc || !nr) {
			*type = svc ? xstrdup(q->profile_type ? q->profile_type : svc->profile_type ?
					      svc->profile_type : ptype__of_service(svc->name)) : NULL;
			sq__read_end(rd);
			return 0;	/* still holding the lock */
		}
		svc_id = svc->id;
		*type = xstrdup(q->profile_type ? q->profile_type : svc->profile_type ?
				svc->profile_type : ptype__of_service(svc->name));
		wanted = match_series(s, svc, q, from, until, &max_id);
		a->nr_nodes = s->nr_nodes;
		a->counts = xcalloc(s->nr_nodes ? s->nr_nodes : 1, sizeof(*a->counts));
		retains = rd->retains;
		sq__mirror_unlock(s);

		/* off the lock: the rows, from the reader's snapshot */
		if (sqlite3_prepare_v2(rd->db, "SELECT series, data FROM samples WHERE level = ? AND"
				       " service = ? AND bucket >= ? AND bucket < ?", -1, &rows, NULL))
			rc = sqlite3_errcode(rd->db);
		for (size_t i = 0; i < nr && rc == SQLITE_DONE; i++) {
			sqlite3_bind_int(rows, 1, r[i].level);
			sqlite3_bind_int64(rows, 2, svc_id);
			sqlite3_bind_int64(rows, 3, r[i].from);
			sqlite3_bind_int64(rows, 4, r[i].until);
			while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
				int64_t series = sqlite3_column_int64(rows, 0);
				if (series < 0 || series > max_id || !wanted[series])
					continue;
				if (rows__each(sqlite3_column_blob(rows, 1),
					       (size_t)sqlite3_column_bytes(rows, 1), acc_one, a))
					a->bad = 1;
				if (sq__read_expired(rd)) {	/* decoding rows is most of the work */
					rc = SQLITE_INTERRUPT;
					break;
				}
			}
			sqlite3_reset(rows);
		}
		if (rc != SQLITE_DONE)
			ret = sq__read_error(rd, rc, "read samples", err, errlen);
		sqlite3_finalize(rows);
		sq__read_end(rd);
		free(wanted);
		if (!ret)
			sq__mirror_rdlock(s);
		if (!ret && __atomic_load_n(&s->retains, __ATOMIC_SEQ_CST) == retains) {
			if (a->bad)
				log_warn("skipped corrupt sample rows in '%s'", s->path);
			return 0;
		}
		if (!ret)
			sq__mirror_unlock(s);
		free(a->counts);
		free(a->touched);
		memset(a, 0, sizeof(*a));
		free(*type);
		*type = NULL;
		if (ret)
			return ret;
		if (attempt + 1 == READ_RETRIES) {
			errmsg(err, errlen, "failed to read '%s': retention ran during the query, "
			       "%d times", s->path, READ_RETRIES);
			return -EAGAIN;
		}
	}
}

int sq__select(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct profile *out, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	struct acc a = { 0 };
	char *type = NULL;
	int ret = gather(s, q, from, until, &a, &type, err, errlen);

	if (ret)
		return ret;
	if (type && !profile__nr_stacks(out))	/* say what the values are */
		ptype__apply(out, type);
	if (a.counts)
		build_profile(s, &a, out);
	sq__mirror_unlock(s);
	free(type);
	free(a.counts);
	free(a.touched);
	return 0;
}

/* Walks deeper than any stored stack: a damaged parent chain (a cycle) stops here. */
#define TREE_MAX_WALK 65536

struct tree_build {
	struct store_tree *t;
	size_t alloc;
	uint32_t *tidx;		/* store node -> tree node + 1, 0: not yet */
	uint32_t *tname;	/* store frame -> tree name + 1, 0: not yet */
	struct strbuf strings;
	uint32_t *name_off;	/* tree name -> offset into strings */
	size_t alloc_names;
};

static uint32_t tree_add(struct tree_build *b, uint32_t parent, uint32_t name)
{
	struct store_tree *t = b->t;

	if (t->n == b->alloc) {
		b->alloc = b->alloc ? b->alloc * 2 : 4096;
		t->parent = xrealloc(t->parent, b->alloc * sizeof(*t->parent));
		t->name = xrealloc(t->name, b->alloc * sizeof(*t->name));
		t->self = xrealloc(t->self, b->alloc * sizeof(*t->self));
	}
	t->parent[t->n] = parent;
	t->name[t->n] = name;
	t->self[t->n] = 0;
	return (uint32_t)t->n++;
}

static uint32_t tree_name(struct tree_build *b, struct sqlite_store *s, uint32_t f)
{
	struct store_tree *t = b->t;

	if (!b->tname[f]) {
		if (t->nr_names == b->alloc_names) {
			b->alloc_names = b->alloc_names ? b->alloc_names * 2 : 1024;
			b->name_off = xrealloc(b->name_off, b->alloc_names * sizeof(*b->name_off));
		}
		b->name_off[t->nr_names] = (uint32_t)b->strings.len;
		strbuf_add(&b->strings, s->names[f], strlen(s->names[f]) + 1);
		b->tname[f] = (uint32_t)++t->nr_names;
	}
	return b->tname[f] - 1;
}

/* The tree of the touched stack nodes and their ancestors: each store node becomes one
 * tree node (created parent first), frames without a name are skipped. */
static void build_tree(struct sqlite_store *s, struct acc *a, struct store_tree *t)
{
	struct tree_build b = { .t = t };
	uint32_t *path = NULL;
	size_t alloc_path = 0;

	b.tidx = xcalloc(s->nr_nodes ? s->nr_nodes : 1, sizeof(*b.tidx));
	b.tname = xcalloc(s->nr_names ? s->nr_names : 1, sizeof(*b.tname));
	strbuf_init(&b.strings, 0);
	tree_add(&b, 0, 0);
	for (size_t i = 0; i < a->nr_touched; i++) {
		uint32_t leaf = a->touched[i], n = leaf, cur = 0;
		size_t len = 0;

		if (!a->counts[leaf])
			continue;
		while (n && n < s->nr_nodes && !b.tidx[n] && len < TREE_MAX_WALK) {
			if (len == alloc_path) {
				alloc_path = alloc_path ? alloc_path * 2 : 256;
				path = xrealloc(path, alloc_path * sizeof(*path));
			}
			path[len++] = n;
			n = s->parent[n];
		}
		if (n && n < s->nr_nodes && b.tidx[n])
			cur = b.tidx[n] - 1;
		while (len--) {
			uint32_t node = path[len], f = s->frame[node];
			if (b.tidx[node]) {	/* seen twice on one walk: a cycle */
				cur = b.tidx[node] - 1;
				continue;
			}
			if (f < s->nr_names && s->names[f])
				cur = tree_add(&b, cur, tree_name(&b, s, f));
			b.tidx[node] = cur + 1;
		}
		t->self[cur] += a->counts[leaf];
	}
	t->strings = strbuf_detach(&b.strings, NULL);
	t->names = xmalloc((t->nr_names ? t->nr_names : 1) * sizeof(*t->names));
	for (size_t i = 0; i < t->nr_names; i++)
		t->names[i] = t->strings + b.name_off[i];
	free(b.name_off);
	free(b.tname);
	free(b.tidx);
	free(path);
}

int sq__select_tree(struct store *st, const struct store_query *q, int64_t from,
		    int64_t until, struct store_tree *out, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	struct acc a = { 0 };
	char *type = NULL;
	int ret = gather(s, q, from, until, &a, &type, err, errlen);

	if (!ret) {
		build_tree(s, &a, out);
		sq__mirror_unlock(s);
	}
	free(type);
	free(a.counts);
	free(a.touched);
	return ret;
}

static const int64_t steps[] = { 10, 60, 300, 900, 3600, 21600, 86400, 604800 };

int sq__series(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct store_series *out, char *err, size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;
	const struct sq_service *svc;
	int64_t step = steps[sizeof(steps) / sizeof(steps[0]) - 1], max_id, svc_id;
	int64_t done_until[NR_LEVELS];
	struct sq_reader *rd;
	sqlite3_stmt *rows = NULL;
	uint8_t *wanted;
	int level = 0, rc, ret = 0;

	memset(out, 0, sizeof(*out));
	if (until <= from) {
		errmsg(err, errlen, "failed to compute series: empty time range");
		return -EINVAL;
	}
	/* Beyond 6 h read hour rows, beyond 62 days day rows: raw rows of a day of a fleet
	 * are millions, their rollups thousands. */
	int64_t min_step = until - from > 62 * 86400 ? 86400 : until - from > 6 * 3600 ? 3600 : 10;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if ((until - from) / steps[i] <= 1500 && steps[i] >= min_step) {
			step = steps[i];
			break;
		}
	}
	for (int l = NR_LEVELS - 1; l >= 0; l--) {
		if (step % level_step[l] == 0) {
			level = l;
			break;
		}
	}
	out->step = step;
	out->start = floor_to(from, step);
	out->n = (size_t)((until - out->start + step - 1) / step);
	out->samples = xcalloc(out->n, sizeof(*out->samples));
	rd = sq__read_begin(s, err, errlen);
	if (!rd) {
		free(out->samples);
		memset(out, 0, sizeof(*out));
		return -EIO;
	}
	svc = sq__find_service(s, q->service);
	if (!svc) {
		sq__mirror_unlock(s);
		sq__read_end(rd);
		return 0;
	}
	/* a sum per bucket needs nothing more of the mirror: no retry after a retain */
	svc_id = svc->id;
	memcpy(done_until, rd->done_until, sizeof(done_until));
	wanted = match_series(s, svc, q, out->start, until, &max_id);
	sq__mirror_unlock(s);
	rc = sqlite3_prepare_v2(rd->db, "SELECT series, bucket, total FROM samples WHERE"
				" level = ? AND service = ? AND bucket >= ? AND bucket < ?", -1,
				&rows, NULL) ? sqlite3_errcode(rd->db) : SQLITE_DONE;
	/* The chosen level below its watermark, finer levels above it. */
	for (int64_t lo = out->start; level >= 0 && rc == SQLITE_DONE; level--) {
		int64_t hi = level ? done_until[level] : until;
		if (hi > until)
			hi = until;
		if (hi <= lo)
			continue;
		sqlite3_bind_int(rows, 1, level);
		sqlite3_bind_int64(rows, 2, svc_id);
		sqlite3_bind_int64(rows, 3, lo);
		sqlite3_bind_int64(rows, 4, hi);
		while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
			int64_t series = sqlite3_column_int64(rows, 0);
			int64_t i = (sqlite3_column_int64(rows, 1) - out->start) / step;
			if (series < 0 || series > max_id || !wanted[series] || i < 0 ||
			    (size_t)i >= out->n)
				continue;
			out->samples[i] += (uint64_t)sqlite3_column_int64(rows, 2);
		}
		sqlite3_reset(rows);
		lo = hi;
	}
	if (rc != SQLITE_DONE)
		ret = sq__read_error(rd, rc, "read series", err, errlen);
	sqlite3_finalize(rows);
	sq__read_end(rd);
	free(wanted);
	if (ret) {
		free(out->samples);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect(struct hashmap *set, char ***out, size_t *n)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;

	*n = 0;
	*out = xmalloc((hashmap__count(set) + 1) * sizeof(**out));
	while (hashmap__next(set, &it, &key, &len, NULL))
		(*out)[(*n)++] = xstrndup(key, len);
	qsort(*out, *n, sizeof(**out), str_cmp);
	hashmap__free(set);
}

/* Series looked at per hold of the mirror's read lock by a label listing: between two
 * holds an upload's write goes through, so that a store of 100,000 series does not keep
 * ingest waiting for the whole listing. */
#define LABELS_CHUNK 4096

/* names: label names; name set: its values; pairs: "name\x1fvalue" of every label.
 * A retention pass between two chunks (series ids reused) starts the listing over; the
 * third time the listing holds the lock to its end, so that it always finishes. */
static int labels_common(struct sqlite_store *s, const struct store_query *q, const char *name,
			 bool pairs, int64_t from, int64_t until, char ***out, size_t *n)
{
	struct hashmap *set = hashmap__new();
	struct strbuf pair = STRBUF_INIT;
	uint64_t retains = 0;
	size_t i = 0, chunk = LABELS_CHUNK;
	int restarts = 0;
	bool done = false;

	while (!done) {
		sq__mirror_rdlock(s);	/* the series are the mirror's: no snapshot needed */
		uint64_t now = __atomic_load_n(&s->retains, __ATOMIC_SEQ_CST);
		if (i && now != retains) {
			hashmap__free(set);
			set = hashmap__new();
			i = 0;
			if (++restarts == 3)
				chunk = SIZE_MAX;
		}
		retains = now;
		const struct sq_service *svc = q->service ? sq__find_service(s, q->service) : NULL;
		size_t end = s->nr_series - i > chunk ? i + chunk : s->nr_series;
		for (; i < end; i++) {
			const struct sq_series *v = &s->series[i];
			if ((q->service && (!svc || v->service != svc->id)) || v->last_seen < from ||
			    v->first_seen >= until || !sq__type_matches(svc, v, q) ||
			    !store_query__matches(q, &v->labels))
				continue;
			for (size_t j = 0; j < v->labels.n; j++) {
				const char *k = name ? (strcmp(v->labels.v[j].name, name) ? NULL
							: v->labels.v[j].value) : v->labels.v[j].name;
				if (pairs) {
					strbuf_reset(&pair);
					strbuf_addf(&pair, "%s\x1f%s", v->labels.v[j].name,
						    v->labels.v[j].value);
					k = pair.buf;
				}
				if (k)
					hashmap__insert(set, k, strlen(k), NULL);
			}
		}
		done = i >= s->nr_series;
		sq__mirror_unlock(s);
	}
	strbuf_release(&pair);
	collect(set, out, n);
	return 0;
}

int sq__label_names(struct store *st, const struct store_query *q, int64_t from, int64_t until,
		    char ***out, size_t *n, char *err, size_t errlen)
{
	return labels_common((struct sqlite_store *)st, q, NULL, false, from, until, out, n);
}

int sq__label_values(struct store *st, const struct store_query *q, const char *name,
		     int64_t from, int64_t until, char ***out, size_t *n, char *err,
		     size_t errlen)
{
	return labels_common((struct sqlite_store *)st, q, name, !name, from, until, out, n);
}

static int service_cmp(const void *a, const void *b)
{
	return strcmp(((const struct store_service *)a)->name,
		      ((const struct store_service *)b)->name);
}

int sq__services(struct store *st, struct store_service **out, size_t *n, char *err,
		 size_t errlen)
{
	struct sqlite_store *s = (struct sqlite_store *)st;

	sq__mirror_rdlock(s);
	*out = xcalloc(s->nr_services + 1, sizeof(**out));
	for (size_t i = 0; i < s->nr_services; i++) {
		(*out)[i].name = xstrdup(s->services[i].name);
		(*out)[i].units = xstrdup(s->services[i].units);
		(*out)[i].spy_name = xstrdup(s->services[i].spy_name);
		(*out)[i].sample_rate = s->services[i].sample_rate;
		(*out)[i].last_seen = s->services[i].last_seen;
		(*out)[i].profile_type = s->services[i].profile_type ?
					 xstrdup(s->services[i].profile_type) : NULL;
	}
	/* the types of each service's series, the service's default first */
	for (size_t i = 0; i < s->nr_services; i++) {
		struct store_service *o = &(*out)[i];
		if (o->profile_type) {
			o->types = xmalloc(sizeof(*o->types));
			o->types[o->nr_types++] = xstrdup(o->profile_type);
		}
	}
	struct idmap *index = idmap__new();	/* service id -> index + 1 */
	for (size_t i = 0; i < s->nr_services; i++)
		idmap__set(index, (uint64_t)s->services[i].id, (uint32_t)i + 1);
	for (size_t k = 0; k < s->nr_series; k++) {
		const struct sq_series *se = &s->series[k];
		uint32_t at = idmap__get(index, (uint64_t)se->service);
		struct store_service *o = at ? &(*out)[at - 1] : NULL;
		if (!o || !se->profile_type || !*se->profile_type)
			continue;
		size_t t = 0;
		while (t < o->nr_types && strcmp(o->types[t], se->profile_type))
			t++;
		if (t < o->nr_types)
			continue;
		o->types = xrealloc(o->types, (o->nr_types + 1) * sizeof(*o->types));
		o->types[o->nr_types++] = xstrdup(se->profile_type);
	}
	idmap__free(index);
	*n = s->nr_services;
	sq__mirror_unlock(s);
	qsort(*out, *n, sizeof(**out), service_cmp);
	return 0;
}
