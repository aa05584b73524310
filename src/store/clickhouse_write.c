/* The ClickHouse backend's writes. A put hashes its frames and stacks without the store's
 * lock, then adds its rows to the open batch (clickhouse_batch.c), which goes out as at
 * most four INSERTs in RowBinary, in an order that keeps every reader consistent: new
 * frames, new stacks, series rows, then the sample rows (a reader that sees a sample can
 * always resolve its stack). Nothing enters the caches until ClickHouse acknowledged it,
 * so a failed put is simply repeated. */
#include "store/clickhouse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <xxhash.h>

#include "profile/ptype.h"
#include "util/log.h"

struct ch_row {
	uint32_t series;	/* index into the put's series */
	uint64_t stack;
	uint64_t count;
};

static int row_cmp(const void *a, const void *b)
{
	const struct ch_row *x = a, *y = b;

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

/* What one put uses of the dictionaries, found before it takes the store's lock: its
 * distinct stacks (id -> 1 + the index of a profile stack that has it) and the ids of
 * the profile's frame names (memo[f], valid where known[f]). */
struct uses {
	struct hashmap *stacks;
	uint64_t *memo;
	uint8_t *known;
};

static uint64_t frame_id(const struct profile *p, uint32_t f, struct uses *u)
{
	if (u->known[f])
		return u->memo[f];
	const char *name = profile__name(p, f);
	uint64_t id = ch__frame_id(name, strlen(name));

	u->memo[f] = id;
	u->known[f] = 1;
	return id;
}

/* The frame ids of profile stack i as stored (its first `skip` frames dropped, cut at
 * store_put__max_depth) into path; returns the depth. */
static uint32_t stack_path(const struct store_put *put, size_t i, struct uses *u, uint64_t *path)
{
	struct profile_stack ps = profile__stack(put->profile, i);
	uint32_t depth = 0, max = store_put__max_depth(put);

	for (uint32_t j = put->skip; j < ps.depth && depth < max; j++)
		path[depth++] = frame_id(put->profile, ps.frames[j], u);
	return depth;
}

/* Adds to batch b the stacks of u, and their frames, that are neither stored nor in b
 * (s->mu held). A stack known is never looked into: its frames went in before it. */
static void add_dictionary(struct ch_store *s, struct ch_batch *b, const struct store_put *put,
			   struct uses *u)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	uint64_t *path = NULL;
	const void *key;
	void **slot;
	void *v;
	bool created;

	while (hashmap__next(u->stacks, &it, &key, NULL, &v)) {
		uint64_t id;
		memcpy(&id, key, sizeof(id));
		if (ch__stack_known(s, b, id))
			continue;
		if (!path)
			path = xmalloc(STORE_MAX_DEPTH * sizeof(*path));
		size_t i = (size_t)(uintptr_t)v - 1;
		struct profile_stack ps = profile__stack(put->profile, i);
		uint32_t depth = stack_path(put, i, u, path);
		for (uint32_t k = 0; k < depth; k++) {
			if (ch__frame_known(s, b, path[k]))
				continue;
			const char *name = profile__name(put->profile, ps.frames[put->skip + k]);
			slot = hashmap__insert(b->frames_new, &path[k], sizeof(path[k]), &created);
			*slot = xstrdup(name);
			rb_u64(&b->frames, path[k]);
			rb_str(&b->frames, name, strlen(name));
		}
		struct ch_stack *st = xmalloc(sizeof(*st) + depth * sizeof(st->frames[0]));
		st->depth = depth;
		memcpy(st->frames, path, depth * sizeof(st->frames[0]));
		slot = hashmap__insert(b->stacks_new, &id, sizeof(id), &created);
		*slot = st;
		rb_u64(&b->stacks, id);
		rb_varint(&b->stacks, depth);
		for (uint32_t k = 0; k < depth; k++)
			rb_u64(&b->stacks, path[k]);
	}
	free(path);
}

static void free_uses(struct uses *u)
{
	hashmap__free(u->stacks);
	free(u->memo);
	free(u->known);
}

/* The default type of service as this server knows it: stored, or about to be (in the
 * open batch b, NULL: none, or the one being sent). NULL when unknown. */
static const char *known_type(struct ch_store *s, const struct ch_batch *b, const char *service)
{
	const char *type = ch__default_type(s, service);
	void **slot;

	if (!type && b && (slot = hashmap__find(b->types_new, service, strlen(service))))
		type = *slot;
	if (!type && s->sending &&
	    (slot = hashmap__find(s->sending->types_new, service, strlen(service))))
		type = *slot;
	return type;
}

/* The profile type a put stores: its own, else the service's first (asking ClickHouse
 * when this server has not seen the service), else CPU samples. */
static int put_type(struct ch_store *s, const struct ch_batch *b, const struct store_put *put,
		    const char **type, char *err, size_t errlen)
{
	struct ch_series *v;
	size_t n;
	int ret;

	*type = put->profile_type;
	if (*type)
		return 0;
	*type = known_type(s, b, put->service);
	if (*type)
		return 0;
	ret = ch__load_series(s, &put->service, 1, 0, &v, &n, err, errlen);
	if (ret)
		return ret;
	ch__free_series(v, n);
	*type = known_type(s, b, put->service);
	if (!*type)
		*type = PTYPE_CPU_SAMPLES;
	return 0;
}
static uint64_t meta_hash(const struct store_put *put)
{
	struct strbuf b = STRBUF_INIT;
	uint64_t h;

	strbuf_addf(&b, "%s\n%s\n%u", put->units ? put->units : "", put->spy_name ? put->spy_name : "",
		    put->sample_rate);
	h = XXH64(b.buf, b.len, 0);
	strbuf_release(&b);
	return h;
}

/* Appends to b the series rows this put must write (new series, a range grown by more
 * than the slack, new metadata), noting them in b->seen_new, and sets ids[i]. */
static void series_rows(struct ch_store *s, struct ch_batch *b, const struct store_put *put,
			const char *type, uint64_t *ids)
{
	struct strbuf *rows = &b->series;
	struct ch_seen seen;
	bool created;
	struct strbuf key = STRBUF_INIT;
	uint64_t meta = meta_hash(put);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t inserted = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (size_t i = 0; i < put->nr_series; i++) {
		strbuf_reset(&key);
		ch__labels_key(&key, &put->series[i]);
		ids[i] = ch__series_id(put->service, type, key.buf);
		void **slot = hashmap__find(b->seen_new, &ids[i], sizeof(ids[i]));
		if (!slot)
			slot = hashmap__find(s->seen, &ids[i], sizeof(ids[i]));
		struct ch_seen *old = slot ? *slot : NULL;
		if (old && old->first <= put->from && put->until <= old->last + CH_SERIES_SLACK &&
		    old->meta == meta)
			continue;
		seen = (struct ch_seen){ put->from, put->until, meta };
		if (old) {
			seen.first = old->first < put->from ? old->first : put->from;
			seen.last = old->last > put->until ? old->last : put->until;
		}
		slot = hashmap__insert(b->seen_new, &ids[i], sizeof(ids[i]), &created);
		if (created)
			*slot = xmalloc(sizeof(struct ch_seen));
		*(struct ch_seen *)*slot = seen;
		rb_str(rows, put->service, strlen(put->service));
		rb_u64(rows, ids[i]);
		rb_str(rows, type, strlen(type));
		rb_str(rows, key.buf, key.len);
		rb_u64(rows, (uint64_t)seen.first);
		rb_u64(rows, (uint64_t)seen.last);
		rb_str(rows, put->units ? put->units : "", put->units ? strlen(put->units) : 0);
		rb_str(rows, put->spy_name ? put->spy_name : "",
		       put->spy_name ? strlen(put->spy_name) : 0);
		rb_u32(rows, put->sample_rate);
		rb_u64(rows, inserted + i);	/* the put's series in their order */
	}
	strbuf_release(&key);
}

static int64_t floor_to(int64_t t, int64_t step)
{
	int64_t b = t / step * step;
	return b > t ? b - step : b;
}

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
	if (put->from < 0 || put->from > UINT32_MAX) {
		errmsg(err, errlen, "failed to store profile: time %lld is out of range",
		       (long long)put->from);
		return -EINVAL;
	}
	return 0;
}

/* The put's sample rows as RowBinary in b (series ids ids, time bucket t). */
static void sample_rows(struct ch_batch *b, const struct store_put *put, const char *type,
			const uint64_t *ids, const struct ch_row *rows, size_t nrows, uint32_t t)
{
	for (size_t i = 0; i < nrows; i++) {
		rb_str(&b->samples, put->service, strlen(put->service));
		rb_u64(&b->samples, ids[rows[i].series]);
		rb_u32(&b->samples, t);
		rb_u64(&b->samples, rows[i].stack);
		rb_u64(&b->samples, rows[i].count);
		rb_str(&b->samples, type, strlen(type));
	}
}

/* Hashes the put's frames and stacks into u and rows (merged by series and stack, sorted):
 * the work that needs no lock. Returns the number of rows, or -EINVAL. */
static ssize_t prepare(const struct store_put *put, struct uses *u, struct ch_row *rows,
		       char *err, size_t errlen)
{
	const struct profile *p = put->profile;
	size_t nr_stacks = profile__nr_stacks(p), nrows = 0;
	uint64_t *path = xmalloc(STORE_MAX_DEPTH * sizeof(*path));
	ssize_t ret = 0;
	bool created;

	for (size_t i = 0; i < nr_stacks; i++) {
		struct profile_stack ps = profile__stack(p, i);
		uint32_t si = put->stack_series ? put->stack_series[i] : 0;
		uint64_t value = ps.values[put->type_index];

		if (ps.depth <= put->skip || !value)
			continue;
		if (si >= put->nr_series) {
			errmsg(err, errlen, "failed to store stack %zu: no series %u", i, si);
			ret = -EINVAL;
			break;
		}
		uint64_t id = ch__stack_id(path, stack_path(put, i, u, path));
		void **slot = hashmap__insert(u->stacks, &id, sizeof(id), &created);
		if (created)
			*slot = (void *)(uintptr_t)(i + 1);
		rows[nrows++] = (struct ch_row){ si, id, value };
	}
	free(path);
	if (ret)
		return ret;
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (n && !row_cmp(&rows[n - 1], &rows[i]))
			rows[n - 1].count += rows[i].count;
		else
			rows[n++] = rows[i];
	}
	return (ssize_t)n;
}

/* What a put needs before the lock: its hashed frames and stacks, rows and series ids. */
struct prep {
	struct uses u;
	struct ch_row *rows;
	uint64_t *ids;
	ssize_t nrows;
	const char *type;
};

static int prep_init(struct prep *pr, const struct store_put *put, char *err, size_t errlen)
{
	size_t nr_stacks = profile__nr_stacks(put->profile);
	size_t nr_names = profile__nr_names(put->profile);
	int ret = validate(put, err, errlen);

	pr->u = (struct uses){ hashmap__new(), xcalloc(nr_names ? nr_names : 1, sizeof(uint64_t)),
			       xcalloc(nr_names ? nr_names : 1, 1) };
	pr->rows = xcalloc(nr_stacks ? nr_stacks : 1, sizeof(*pr->rows));
	pr->ids = xcalloc(put->nr_series ? put->nr_series : 1, sizeof(*pr->ids));
	if (!ret)
		pr->nrows = prepare(put, &pr->u, pr->rows, err, errlen);
	return ret ? ret : pr->nrows < 0 ? (int)pr->nrows : 0;
}

static void prep_release(struct prep *pr)
{
	if (!pr->rows)
		return;
	free_uses(&pr->u);
	free(pr->rows);
	free(pr->ids);
}

/* Hashes put and its `also` and adds both to the open batch (one batch: sent whole or not
 * at all), waiting for room when it is full and wait is set. Returns 0 with *out the
 * batch joined, or a negative errno with err set (-EBUSY: full, without wait); s->mu is
 * held on return either way. */
static int join(struct ch_store *s, const struct store_put *put, bool wait, struct ch_batch **out,
		char *err, size_t errlen)
{
	const struct store_put *puts[2] = { put, put->also };
	size_t n = put->also ? 2 : 1;
	struct prep pr[2] = { { .rows = NULL }, { .rows = NULL } };
	struct ch_batch *b = NULL;
	int ret = 0;

	/* counted as coming while it hashes, so that a batch about to go out waits for it */
	pthread_mutex_lock(&s->mu);
	ch__batch_coming(s);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < n && !ret; i++)
		ret = prep_init(&pr[i], puts[i], err, errlen);
	pthread_mutex_lock(&s->mu);
	if (!ret)
		ret = ch__ensure(s, err, errlen);
	/* the types first: a batch is opened only for a put that joins it */
	for (size_t i = 0; i < n && !ret; i++)
		ret = put_type(s, s->open, puts[i], &pr[i].type, err, errlen);
	if (!ret && !(b = ch__batch_open(s, wait))) {
		errmsg(err, errlen, "failed to store profile: %zu sample rows (%zu uploads) already "
		       "wait for ClickHouse, as many as a batch holds; retry later",
		       s->open->rows, s->open->puts);
		ret = -EBUSY;
	}
	if (ret) {
		ch__batch_left(s);
		goto out;
	}
	/* everything below only appends to b: a put either joins it whole or not at all */
	for (size_t i = 0; i < n; i++) {
		const struct store_put *p = puts[i];
		pthread_rwlock_rdlock(&s->cache_lock);
		add_dictionary(s, b, p, &pr[i].u);
		series_rows(s, b, p, pr[i].type, pr[i].ids);
		pthread_rwlock_unlock(&s->cache_lock);
		sample_rows(b, p, pr[i].type, pr[i].ids, pr[i].rows, (size_t)pr[i].nrows,
			    (uint32_t)floor_to(p->from, ch_level_step[0]));
		b->rows += (size_t)pr[i].nrows;
		if (!known_type(s, b, p->service)) {
			bool created;
			void **slot = hashmap__insert(b->types_new, p->service,
						      strlen(p->service), &created);
			*slot = xstrdup(pr[i].type);
		}
	}
	ch__batch_left(s);	/* joined */
	*out = b;
out:
	for (size_t i = 0; i < n; i++)
		prep_release(&pr[i]);
	return ret;
}

int ch__put(struct store *st, const struct store_put *put, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct ch_batch *b;
	int ret = join(s, put, true, &b, err, errlen);

	if (!ret)
		ret = ch__batch_wait(s, b, err, errlen);
	pthread_mutex_unlock(&s->mu);
	return ret;
}

int ch__put_async(struct store *st, const struct store_put *put, store_put_done *done,
		  void *arg, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	struct ch_batch *b;
	int ret = join(s, put, false, &b, err, errlen);

	if (!ret)
		ch__batch_notify(s, b, done, arg);
	pthread_mutex_unlock(&s->mu);
	return ret;
}
