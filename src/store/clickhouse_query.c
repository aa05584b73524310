/* The ClickHouse backend's reads. The series table is read first (a few rows per label
 * set) and matched here, with the same matcher code as every backend; ClickHouse then
 * sums the sample rows of the matching series per stack, reading whole days from day
 * rows, whole hours from hour rows and the edges from 10 s rows, in one query. The stacks
 * of the answer are rebuilt from the cache, which asks ClickHouse only for the ids it has
 * not seen yet. */
#include "store/clickhouse_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/ptype.h"
#include "util/idmap.h"
#include "util/log.h"

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

/* Cuts [from, until) into at most 5 ranges: whole days, whole hours, raw edges. */
static size_t cut_range(int64_t from, int64_t until, struct range *out)
{
	int64_t d0 = ceil_to(from, 86400), d1 = floor_to(until, 86400), edges[2][2];
	size_t n = 0, ne = 0;

	if (from >= until)
		return 0;
	if (d0 < d1) {
		out[n++] = (struct range){ 2, d0, d1 };
		edges[ne][0] = from, edges[ne++][1] = d0;
		edges[ne][0] = d1, edges[ne++][1] = until;
	} else {
		edges[ne][0] = from, edges[ne++][1] = until;
	}
	for (size_t i = 0; i < ne; i++) {
		int64_t a = edges[i][0], b = edges[i][1];
		int64_t h0 = ceil_to(a, 3600), h1 = floor_to(b, 3600);
		if (a >= b)
			continue;
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

/* The series of q's service that match q in [from, until). */
struct matched {
	const char *service;	/* the name the service is stored under, NULL: none */
	const char *type;	/* the profile type asked for */
	struct ch_series *all;
	size_t nr_all;
	uint64_t *ids;
	size_t n;
	bool whole;		/* every series of the type matches: the fleet rollups will do */
};

static void matched_release(struct matched *m)
{
	ch__free_series(m->all, m->nr_all);
	free(m->ids);
}

/* A query for "app.cpu" also finds "app" and the other way round, as SQLite's does. */
static int match(struct ch_store *s, const struct store_query *q, int64_t from, int64_t until,
		 struct matched *m, char *err, size_t errlen)
{
	struct strbuf alt = STRBUF_INIT;
	size_t len = q->service ? strlen(q->service) : 0;
	const char *names[2] = { NULL, NULL };
	size_t nn = 0;
	int ret;

	memset(m, 0, sizeof(*m));
	if (q->service) {
		names[nn++] = q->service;
		if (len > 4 && !strcmp(q->service + len - 4, ".cpu"))
			strbuf_add(&alt, q->service, len - 4);
		else
			strbuf_addf(&alt, "%s.cpu", q->service);
		names[nn++] = alt.buf;
	}
	ret = ch__load_series(s, names, nn, from, &m->all, &m->nr_all, err, errlen);
	for (size_t k = 0; !ret && q->service && k < nn && !m->service; k++)
		for (size_t i = 0; i < m->nr_all && !m->service; i++)
			if (!strcmp(m->all[i].service, names[k]))
				m->service = m->all[i].service;
	if (m->service)
		m->type = q->profile_type ? q->profile_type : ch__default_type(s, m->service);
	else
		m->type = q->profile_type;
	m->ids = xcalloc(m->nr_all + 1, sizeof(*m->ids));
	m->whole = m->service && m->type;
	for (size_t i = 0; !ret && i < m->nr_all; i++) {
		const struct ch_series *v = &m->all[i];
		if ((q->service && v->service != m->service &&
		     (!m->service || strcmp(v->service, m->service))) ||
		    (m->type && strcmp(v->ptype, m->type)))
			continue;
		if (!store_query__matches(q, &v->labels)) {
			m->whole = false;	/* a series of the type the labels leave out */
			continue;
		}
		if (v->last_seen + CH_SERIES_SLACK < from || v->first_seen >= until)
			continue;
		m->ids[m->n++] = v->id;
	}
	strbuf_release(&alt);
	return ret;
}

/* Appends " AND series IN (...)" unless every series of the service matched. */
static void add_filter(struct strbuf *sql, const struct matched *m)
{
	size_t of_service = 0;

	strbuf_addstr(sql, " WHERE service = ");
	ch__quote(sql, m->service);
	for (size_t i = 0; i < m->nr_all; i++)
		of_service += !strcmp(m->all[i].service, m->service);
	if (m->n == of_service)
		return;
	for (size_t i = 0; i < m->n; i++)
		strbuf_addf(sql, "%s%" PRIu64, i ? "," : " AND series IN (", m->ids[i]);
	strbuf_addch(sql, ')');
}

/* Appends " WHERE service = ... AND ptype = ...": a fleet rollup's rows of the type. */
static void add_type(struct strbuf *sql, const struct matched *m)
{
	strbuf_addstr(sql, " WHERE service = ");
	ch__quote(sql, m->service);
	strbuf_addstr(sql, " AND ptype = ");
	ch__quote(sql, m->type);
}

struct counts {
	uint64_t *stack, *count;
	size_t n;
};

/* Sums the matching sample rows of [from, until) per stack. */
static int gather(struct ch_store *s, const struct matched *m, int64_t from, int64_t until,
		  struct counts *c, char *err, size_t errlen)
{
	struct strbuf sql = STRBUF_INIT, ans = STRBUF_INIT;
	struct range r[5];
	size_t nr = cut_range(from, until, r), alloc = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!m->service || !m->n || !nr)
		return 0;
	strbuf_addstr(&sql, "SELECT stack, sum(c) FROM (");
	for (size_t i = 0; i < nr; i++) {
		bool fleet = m->whole && r[i].level;
		strbuf_addf(&sql, "%sSELECT stack, sum(count) AS c FROM %s", i ? " UNION ALL " : "",
			    (fleet ? ch_fleet_table : ch_level_table)[r[i].level]);
		if (fleet)
			add_type(&sql, m);
		else
			add_filter(&sql, m);
		strbuf_addf(&sql, " AND t >= %" PRId64 " AND t < %" PRId64 " GROUP BY stack",
			    r[i].from < 0 ? 0 : r[i].from, r[i].until < 0 ? 0 : r[i].until);
	}
	strbuf_addstr(&sql, ") GROUP BY stack FORMAT RowBinary");
	ret = ch__request(s, SIZE_MAX, sql.buf, NULL, &ans, "read samples", err, errlen);
	struct rb_reader rd = rbr_of(&ans);
	while (!ret && rbr_more(&rd)) {
		uint64_t id = rbr_u64(&rd), n = rbr_u64(&rd);
		if (rd.bad)
			break;
		if (c->n == alloc) {
			alloc = alloc ? alloc * 2 : 1024;
			c->stack = xrealloc(c->stack, alloc * sizeof(*c->stack));
			c->count = xrealloc(c->count, alloc * sizeof(*c->count));
		}
		c->stack[c->n] = id;
		c->count[c->n++] = n;
	}
	if (!ret && rd.bad) {
		errmsg(err, errlen, "failed to read samples from clickhouse '%s': malformed answer",
		       s->name);
		ret = -EIO;
	}
	strbuf_release(&sql);
	strbuf_release(&ans);
	return ret;
}

/* Asks ClickHouse for the dictionary entries (stacks or frames) of ids not cached. */
static int fetch(struct ch_store *s, bool stacks, const uint64_t *ids, size_t n, char *err,
		 size_t errlen)
{
	struct strbuf sql = STRBUF_INIT, ans = STRBUF_INIT;
	struct hashmap *cache = stacks ? s->stacks : s->frames;
	int ret = 0;

	for (size_t start = 0; !ret && start < n; start += 10000) {
		size_t end = start + 10000 < n ? start + 10000 : n;
		strbuf_reset(&sql);
		strbuf_reset(&ans);
		strbuf_addf(&sql, "SELECT id, any(%s) FROM %s WHERE id IN (", stacks ? "frames" : "name",
			    stacks ? "stacks" : "frames");
		for (size_t i = start; i < end; i++)
			strbuf_addf(&sql, "%s%" PRIu64, i > start ? "," : "", ids[i]);
		strbuf_addstr(&sql, ") GROUP BY id FORMAT RowBinary");
		ret = ch__request(s, SIZE_MAX, sql.buf, NULL, &ans, stacks ? "read stacks" :
				  "read frames", err, errlen);
		struct rb_reader r = rbr_of(&ans);
		pthread_rwlock_wrlock(&s->cache_lock);
		while (!ret && rbr_more(&r)) {
			uint64_t id = rbr_u64(&r);
			void *v;
			if (stacks) {
				uint64_t depth = rbr_varint(&r);
				if (r.bad || depth > STORE_MAX_DEPTH ||
				    depth * 8 > (uint64_t)(r.end - r.p)) {
					r.bad = true;
					break;
				}
				struct ch_stack *st = xmalloc(sizeof(*st) + depth * 8);
				st->depth = (uint32_t)depth;
				for (uint64_t i = 0; i < depth; i++)
					st->frames[i] = rbr_u64(&r);
				v = st;
			} else {
				size_t len;
				const char *name = rbr_str(&r, &len);
				if (r.bad)
					break;
				v = xstrndup(name, len);
			}
			bool created;
			void **slot = hashmap__insert(cache, &id, sizeof(id), &created);
			if (created)
				*slot = v;
			else
				free(v);
		}
		pthread_rwlock_unlock(&s->cache_lock);
		if (!ret && r.bad) {
			errmsg(err, errlen, "failed to read the dictionary from clickhouse '%s':"
			       " malformed answer", s->name);
			ret = -EIO;
		}
	}
	strbuf_release(&sql);
	strbuf_release(&ans);
	return ret;
}

/* Makes sure every stack of c and every frame of those stacks is cached. */
static int resolve(struct ch_store *s, const struct counts *c, char *err, size_t errlen)
{
	uint64_t *missing = NULL;
	size_t n = 0, alloc = 0;
	int ret;

	for (int pass = 0; pass < 2; pass++) {
		struct hashmap *dedup = hashmap__new();
		n = 0;
		pthread_rwlock_rdlock(&s->cache_lock);
		for (size_t i = 0; i < c->n; i++) {
			void **st = hashmap__find(s->stacks, &c->stack[i], sizeof(uint64_t));
			const uint64_t *ids = pass ? NULL : &c->stack[i];
			size_t nids = pass ? 0 : 1;
			if (pass && st) {
				ids = ((struct ch_stack *)*st)->frames;
				nids = ((struct ch_stack *)*st)->depth;
			} else if (pass || st) {
				continue;
			}
			for (size_t k = 0; k < nids; k++) {
				bool created;
				if (pass && hashmap__find(s->frames, &ids[k], 8))
					continue;
				hashmap__insert(dedup, &ids[k], 8, &created);
				if (!created)
					continue;
				if (n == alloc) {
					alloc = alloc ? alloc * 2 : 1024;
					missing = xrealloc(missing, alloc * sizeof(*missing));
				}
				missing[n++] = ids[k];
			}
		}
		pthread_rwlock_unlock(&s->cache_lock);
		hashmap__free(dedup);
		ret = fetch(s, pass == 0, missing, n, err, errlen);
		if (ret)
			break;
	}
	free(missing);
	return ret;
}

static const char *frame_name(struct ch_store *s, uint64_t id)
{
	void **slot = hashmap__find(s->frames, &id, sizeof(id));
	return slot ? *slot : NULL;
}

static int collect(struct ch_store *s, const struct store_query *q, int64_t from, int64_t until,
		   struct matched *m, struct counts *c, char *err, size_t errlen)
{
	int ret = match(s, q, from, until, m, err, errlen);

	if (!ret)
		ret = gather(s, m, from, until, c, err, errlen);
	if (!ret)
		ret = resolve(s, c, err, errlen);
	return ret;
}

int ch__select(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct profile *out, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct matched m;
	struct counts c = { NULL, NULL, 0 };
	uint32_t *frames = xmalloc(STORE_MAX_DEPTH * sizeof(*frames));
	struct idmap *pmap = idmap__new();
	int ret = collect(s, q, from, until, &m, &c, err, errlen);

	if (!ret && m.service && !profile__nr_stacks(out))	/* say what the values are */
		ptype__apply(out, m.type ? m.type : ptype__of_service(m.service));
	pthread_rwlock_rdlock(&s->cache_lock);	/* the lookups: the stacks and names stay */
	for (size_t i = 0; !ret && i < c.n; i++) {
		void **slot = hashmap__find(s->stacks, &c.stack[i], sizeof(uint64_t));
		uint32_t depth = 0;
		if (!slot)
			continue;
		const struct ch_stack *sk = *slot;
		for (uint32_t k = 0; k < sk->depth; k++) {
			/* frame hashes fold to 64-bit idmap keys as they are */
			uint32_t id = idmap__get(pmap, sk->frames[k]);
			if (!id) {
				const char *name = frame_name(s, sk->frames[k]);
				if (!name)
					continue;
				id = profile__intern_str(out, name) + 1;
				idmap__set(pmap, sk->frames[k], id);
			}
			frames[depth++] = id - 1;
		}
		if (depth)
			profile__add(out, frames, depth, c.count[i]);
	}
	pthread_rwlock_unlock(&s->cache_lock);
	idmap__free(pmap);
	free(frames);
	free(c.stack);
	free(c.count);
	matched_release(&m);
	return ret;
}

int ch__select_tree(struct store *st, const struct store_query *q, int64_t from,
		    int64_t until, struct store_tree *t, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct idmap *names = idmap__new(), *kids = idmap__new();
	struct strbuf strings = STRBUF_INIT;
	uint32_t *name_off = NULL;
	size_t alloc = 0, alloc_names = 0;
	struct matched m;
	struct counts c = { NULL, NULL, 0 };
	int ret = collect(s, q, from, until, &m, &c, err, errlen);

	pthread_rwlock_rdlock(&s->cache_lock);
	for (size_t i = 0; !ret && i <= c.n; i++) {
		void **slot = i ? hashmap__find(s->stacks, &c.stack[i - 1], sizeof(uint64_t)) : NULL;
		const struct ch_stack *sk = slot ? *slot : NULL;
		uint32_t cur = 0;

		if (t->n + (sk ? sk->depth : 1) >= alloc) {
			alloc = (alloc ? alloc * 2 : 4096) + (sk ? sk->depth : 0);
			t->parent = xrealloc(t->parent, alloc * sizeof(*t->parent));
			t->name = xrealloc(t->name, alloc * sizeof(*t->name));
			t->self = xrealloc(t->self, alloc * sizeof(*t->self));
		}
		if (!i) {	/* the root */
			t->parent[0] = t->name[0] = 0;
			t->self[0] = 0;
			t->n = 1;
			continue;
		}
		for (uint32_t k = 0; sk && k < sk->depth; k++) {
			uint32_t nm = idmap__get(names, sk->frames[k]);
			if (!nm) {
				const char *name = frame_name(s, sk->frames[k]);
				if (!name)
					continue;
				if (t->nr_names == alloc_names) {
					alloc_names = alloc_names ? alloc_names * 2 : 1024;
					name_off = xrealloc(name_off, alloc_names * sizeof(*name_off));
				}
				name_off[t->nr_names] = (uint32_t)strings.len;
				strbuf_add(&strings, name, strlen(name) + 1);
				nm = (uint32_t)++t->nr_names;
				idmap__set(names, sk->frames[k], nm);
			}
			uint64_t key = (uint64_t)cur << 32 | (nm - 1);
			uint32_t child = idmap__get(kids, key);
			if (!child) {
				child = (uint32_t)t->n++;
				t->parent[child] = cur;
				t->name[child] = nm - 1;
				t->self[child] = 0;
				idmap__set(kids, key, child);
			}
			cur = child;
		}
		if (sk)
			t->self[cur] += c.count[i - 1];
	}
	pthread_rwlock_unlock(&s->cache_lock);
	if (!ret) {
		t->strings = strbuf_detach(&strings, NULL);
		t->names = xmalloc((t->nr_names ? t->nr_names : 1) * sizeof(*t->names));
		for (size_t i = 0; i < t->nr_names; i++)
			t->names[i] = t->strings + name_off[i];
	} else {
		strbuf_release(&strings);
		store_tree_release(t);
	}
	free(name_off);
	idmap__free(names);
	idmap__free(kids);
	free(c.stack);
	free(c.count);
	matched_release(&m);
	return ret;
}

static const int64_t steps[] = { 10, 60, 300, 900, 3600, 21600, 86400, 604800 };

int ch__series(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct store_series *out, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	int64_t step = steps[sizeof(steps) / sizeof(steps[0]) - 1];
	struct strbuf sql = STRBUF_INIT, ans = STRBUF_INIT;
	struct matched m;
	int level = 0, ret;

	memset(out, 0, sizeof(*out));
	if (until <= from) {
		errmsg(err, errlen, "failed to compute series: empty time range");
		return -EINVAL;
	}
	/* the steps SQLite picks (store/sqlite.h), so both answer alike */
	int64_t min_step = until - from > 62 * 86400 ? 86400 : until - from > 6 * 3600 ? 3600 : 10;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if ((until - from) / steps[i] <= 1500 && steps[i] >= min_step) {
			step = steps[i];
			break;
		}
	}
	for (int l = CH_NR_LEVELS - 1; l >= 0; l--) {
		if (step % ch_level_step[l] == 0) {
			level = l;
			break;
		}
	}
	out->step = step;
	out->start = floor_to(from, step);
	out->n = (size_t)((until - out->start + step - 1) / step);
	ret = match(s, q, out->start, until, &m, err, errlen);
	if (!ret && m.service && m.n) {
		/* a whole service: its totals (10 s) or fleet rollups, never its stacks */
		bool fleet = m.whole;
		strbuf_addf(&sql, "SELECT intDiv(toInt64(t) - %" PRId64 ", %" PRId64 ") AS i,"
			    " sum(count) FROM %s", out->start, step, !fleet ? ch_level_table[level] :
			    level ? ch_fleet_table[level] : "fleet_10s");
		if (fleet)
			add_type(&sql, &m);
		else
			add_filter(&sql, &m);
		strbuf_addf(&sql, " AND t >= %" PRId64 " AND t < %" PRId64 " GROUP BY i FORMAT"
			    " RowBinary", out->start < 0 ? 0 : out->start, until < 0 ? 0 : until);
		ret = ch__request(s, SIZE_MAX, sql.buf, NULL, &ans, "read series", err, errlen);
	}
	if (!ret) {
		out->samples = xcalloc(out->n, sizeof(*out->samples));
		struct rb_reader r = rbr_of(&ans);
		while (rbr_more(&r)) {
			int64_t i = (int64_t)rbr_u64(&r);
			uint64_t v = rbr_u64(&r);
			if (!r.bad && i >= 0 && (size_t)i < out->n)
				out->samples[i] += v;
		}
	} else {
		memset(out, 0, sizeof(*out));
	}
	matched_release(&m);
	strbuf_release(&sql);
	strbuf_release(&ans);
	return ret;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* names: label names; name set: its values; pairs: "name\x1fvalue" of every label (what
 * store__label_pairs asks for with a NULL name). */
static int labels_common(struct ch_store *s, const struct store_query *q, const char *name,
			 bool pairs, int64_t from, int64_t until, char ***out, size_t *n,
			 char *err, size_t errlen)
{
	struct strbuf pair = STRBUF_INIT;
	struct hashmap *set = hashmap__new();
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	struct matched m;
	int ret = match(s, q, from, until, &m, err, errlen);

	for (size_t i = 0, k = 0; !ret && i < m.nr_all && k < m.n; i++) {
		const struct ch_series *v = &m.all[i];
		if (v->id != m.ids[k])
			continue;
		k++;
		for (size_t j = 0; j < v->labels.n; j++) {
			const char *x = name ? (strcmp(v->labels.v[j].name, name) ? NULL
						: v->labels.v[j].value) : v->labels.v[j].name;
			if (pairs) {
				strbuf_reset(&pair);
				strbuf_addf(&pair, "%s\x1f%s", v->labels.v[j].name,
					    v->labels.v[j].value);
				x = pair.buf;
			}
			if (x)
				hashmap__insert(set, x, strlen(x), NULL);
		}
	}
	*n = 0;
	*out = xmalloc((hashmap__count(set) + 1) * sizeof(**out));
	while (hashmap__next(set, &it, &key, &len, NULL))
		(*out)[(*n)++] = xstrndup(key, len);
	qsort(*out, *n, sizeof(**out), str_cmp);
	hashmap__free(set);
	strbuf_release(&pair);
	matched_release(&m);
	return ret;
}

int ch__label_names(struct store *st, const struct store_query *q, int64_t from, int64_t until,
		    char ***out, size_t *n, char *err, size_t errlen)
{
	return labels_common((struct ch_store *)st, q, NULL, false, from, until, out, n, err,
			     errlen);
}

int ch__label_values(struct store *st, const struct store_query *q, const char *name,
		     int64_t from, int64_t until, char ***out, size_t *n, char *err,
		     size_t errlen)
{
	return labels_common((struct ch_store *)st, q, name, !name, from, until, out, n, err,
			     errlen);
}

/* Each service's profile types: its default (the type of its first series) first, then
 * the others in the order they were first stored. */
static int add_types(struct ch_store *s, struct store_service *v, size_t n, char *err,
		     size_t errlen)
{
	struct ch_series *all;
	size_t nr_all;
	int ret = ch__load_series(s, NULL, 0, 0, &all, &nr_all, err, errlen);

	for (size_t i = 0, k = 0; !ret && i < n; i++) {
		while (k < nr_all && strcmp(all[k].service, v[i].name) < 0)
			k++;
		for (; k < nr_all && !strcmp(all[k].service, v[i].name); k++) {
			size_t t = 0;
			while (t < v[i].nr_types && strcmp(v[i].types[t], all[k].ptype))
				t++;
			if (t < v[i].nr_types)
				continue;
			v[i].types = xrealloc(v[i].types, (v[i].nr_types + 1) * sizeof(*v[i].types));
			v[i].types[v[i].nr_types++] = xstrdup(all[k].ptype);
		}
		if (v[i].nr_types)
			v[i].profile_type = xstrdup(v[i].types[0]);
	}
	if (!ret)
		ch__free_series(all, nr_all);
	return ret;
}

int ch__services(struct store *st, struct store_service **out, size_t *n, char *err,
		 size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct strbuf ans = STRBUF_INIT;
	size_t alloc = 0;
	int ret = ch__ensure(s, err, errlen);

	*out = NULL;
	*n = 0;
	if (!ret)
		ret = ch__request(s, SIZE_MAX, "SELECT service, argMaxMerge(units), argMaxMerge(spy),"
				  " argMaxMerge(rate), maxMerge(last_seen) FROM series GROUP BY service"
				  " ORDER BY service FORMAT RowBinary", NULL, &ans, "list services", err,
				  errlen);
	struct rb_reader r = rbr_of(&ans);
	while (!ret && rbr_more(&r)) {
		size_t l1, l2, l3;
		const char *name = rbr_str(&r, &l1), *units = rbr_str(&r, &l2), *spy = rbr_str(&r, &l3);
		uint32_t rate = rbr_u32(&r);
		int64_t last = (int64_t)rbr_u64(&r);
		if (r.bad)
			break;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		struct store_service *v = &(*out)[(*n)++];
		memset(v, 0, sizeof(*v));
		v->name = xstrndup(name, l1);
		v->units = l2 ? xstrndup(units, l2) : xstrdup("samples");
		v->spy_name = l3 ? xstrndup(spy, l3) : xstrdup("unknown");
		v->sample_rate = rate ? rate : 100;
		v->last_seen = last;
	}
	if (!ret && r.bad) {
		errmsg(err, errlen, "failed to list services in clickhouse '%s': malformed answer",
		       s->name);
		ret = -EIO;
	}
	if (!ret)
		ret = add_types(s, *out, *n, err, errlen);
	if (ret) {
		store__free_services(*out, *n);
		*out = NULL;
		*n = 0;
	} else if (!*out) {
		*out = xcalloc(1, sizeof(**out));
	}
	strbuf_release(&ans);
	return ret;
}
