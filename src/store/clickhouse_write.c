/* The ClickHouse backend's writes. One upload is at most four INSERTs in RowBinary, in an
 * order that keeps every reader consistent: new frames, new stacks, series rows, then the
 * sample rows (a reader that sees a sample can always resolve its stack). Nothing enters
 * the caches until ClickHouse acknowledged it, so a failed put is simply repeated. */
#include "store/clickhouse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

/* New dictionary entries of one put, inserted before its samples, cached after. */
struct pending {
	struct strbuf frames, stacks;	/* RowBinary rows */
	struct hashmap *new_frames;	/* id -> name (borrowed from the profile) */
	struct hashmap *new_stacks;	/* id -> struct ch_stack * (owned until cached) */
};

static uint64_t frame_id(struct ch_store *s, const struct profile *p, uint32_t f,
			 uint64_t *memo, uint8_t *known, struct pending *pd)
{
	if (known[f])
		return memo[f];
	const char *name = profile__name(p, f);
	size_t len = strlen(name);
	uint64_t id = ch__frame_id(name, len);
	bool created;

	memo[f] = id;
	known[f] = 1;
	if (!hashmap__find(s->frames, &id, sizeof(id))) {
		void **slot = hashmap__insert(pd->new_frames, &id, sizeof(id), &created);
		if (created) {
			*slot = (void *)name;
			rb_u64(&pd->frames, id);
			rb_str(&pd->frames, name, len);
		}
	}
	return id;
}

static void want_stack(struct ch_store *s, uint64_t id, const uint64_t *frames, uint32_t depth,
		       struct pending *pd)
{
	bool created;
	void **slot;

	if (hashmap__find(s->stacks, &id, sizeof(id)))
		return;
	slot = hashmap__insert(pd->new_stacks, &id, sizeof(id), &created);
	if (!created)
		return;
	struct ch_stack *st = xmalloc(sizeof(*st) + depth * sizeof(st->frames[0]));
	st->depth = depth;
	memcpy(st->frames, frames, depth * sizeof(st->frames[0]));
	*slot = st;
	rb_u64(&pd->stacks, id);
	rb_varint(&pd->stacks, depth);
	for (uint32_t i = 0; i < depth; i++)
		rb_u64(&pd->stacks, frames[i]);
}

/* Moves every entry of from into the cache to (values change owner; names are copied
 * when copy_names). */
static void adopt(struct hashmap *to, struct hashmap *from, bool copy_names)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;
	bool created;

	while (hashmap__next(from, &it, &key, &len, &v)) {
		void **slot = hashmap__insert(to, key, len, &created);
		if (created)
			*slot = copy_names ? xstrdup(v) : v;
		else if (!copy_names)
			free(v);
	}
	hashmap__clear(from);
}

static void free_pending(struct pending *pd)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (hashmap__next(pd->new_stacks, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(pd->new_stacks);
	hashmap__free(pd->new_frames);
	strbuf_release(&pd->frames);
	strbuf_release(&pd->stacks);
}

/* The profile type a put stores: its own, else the service's first (asking ClickHouse
 * when this server has not seen the service), else CPU samples. */
static int put_type(struct ch_store *s, const struct store_put *put, const char **type,
		    char *err, size_t errlen)
{
	struct ch_series *v;
	size_t n;
	int ret;

	*type = put->profile_type;
	if (*type)
		return 0;
	*type = ch__default_type(s, put->service);
	if (*type)
		return 0;
	ret = ch__load_series(s, &put->service, 1, 0, &v, &n, err, errlen);
	if (ret)
		return ret;
	ch__free_series(v, n);
	*type = ch__default_type(s, put->service);
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

/* Appends the series rows this put must write (new series, a range grown by more than
 * the slack, new metadata) and sets ids[i]. */
static void series_rows(struct ch_store *s, const struct store_put *put, const char *type,
			uint64_t *ids, struct strbuf *rows, struct ch_seen *seen)
{
	struct strbuf key = STRBUF_INIT;
	uint64_t meta = meta_hash(put);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t inserted = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (size_t i = 0; i < put->nr_series; i++) {
		strbuf_reset(&key);
		ch__labels_key(&key, &put->series[i]);
		ids[i] = ch__series_id(put->service, type, key.buf);
		void **slot = hashmap__find(s->seen, &ids[i], sizeof(ids[i]));
		struct ch_seen *old = slot ? *slot : NULL;
		seen[i] = (struct ch_seen){ put->from, put->until, meta };
		if (old && old->first <= put->from && put->until <= old->last + CH_SERIES_SLACK &&
		    old->meta == meta) {
			seen[i] = *old;
			continue;
		}
		if (old) {
			seen[i].first = old->first < put->from ? old->first : put->from;
			seen[i].last = old->last > put->until ? old->last : put->until;
		}
		rb_str(rows, put->service, strlen(put->service));
		rb_u64(rows, ids[i]);
		rb_str(rows, type, strlen(type));
		rb_str(rows, key.buf, key.len);
		rb_u64(rows, (uint64_t)seen[i].first);
		rb_u64(rows, (uint64_t)seen[i].last);
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

int ch__put(struct store *st, const struct store_put *put, char *err, size_t errlen)
{
	struct ch_store *s = (struct ch_store *)st;
	const struct profile *p = put->profile;
	size_t nr_names = profile__nr_names(p), nr_stacks = profile__nr_stacks(p), nrows = 0;
	struct pending pd = { STRBUF_INIT, STRBUF_INIT, hashmap__new(), hashmap__new() };
	struct strbuf series = STRBUF_INIT, samples = STRBUF_INIT;
	uint64_t *memo = xcalloc(nr_names ? nr_names : 1, sizeof(*memo));
	uint8_t *known = xcalloc(nr_names ? nr_names : 1, 1);
	uint64_t *ids = xcalloc(put->nr_series, sizeof(*ids));
	struct ch_seen *seen = xcalloc(put->nr_series, sizeof(*seen));
	struct ch_row *rows = xcalloc(nr_stacks ? nr_stacks : 1, sizeof(*rows));
	uint64_t *path = xmalloc(STORE_MAX_DEPTH * sizeof(*path));
	const char *type = NULL;
	char *owned = NULL;
	int ret = validate(put, err, errlen);

	if (!ret)
		ret = ch__ensure(s, err, errlen);
	if (!ret)
		ret = put_type(s, put, &type, err, errlen);
	if (!ret)
		type = owned = xstrdup(type);
	for (size_t i = 0; !ret && i < nr_stacks; i++) {
		struct profile_stack ps = profile__stack(p, i);
		uint32_t si = put->stack_series ? put->stack_series[i] : 0, depth = 0;
		uint64_t value = ps.values[put->type_index];

		if (ps.depth <= put->skip || !value)
			continue;
		if (si >= put->nr_series) {
			errmsg(err, errlen, "failed to store stack %zu: no series %u", i, si);
			ret = -EINVAL;
			break;
		}
		for (uint32_t j = put->skip; j < ps.depth && depth < STORE_MAX_DEPTH; j++)
			path[depth++] = frame_id(s, p, ps.frames[j], memo, known, &pd);
		uint64_t id = ch__stack_id(path, depth);
		want_stack(s, id, path, depth, &pd);
		rows[nrows++] = (struct ch_row){ si, id, value };
	}
	if (ret)
		goto out;
	series_rows(s, put, type, ids, &series, seen);
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	uint32_t t = (uint32_t)floor_to(put->from, ch_level_step[0]);
	for (size_t i = 0; i < nrows;) {
		size_t j = i + 1;
		uint64_t count = rows[i].count;
		for (; j < nrows && !row_cmp(&rows[i], &rows[j]); j++)
			count += rows[j].count;
		rb_str(&samples, put->service, strlen(put->service));
		rb_u64(&samples, ids[rows[i].series]);
		rb_u32(&samples, t);
		rb_u64(&samples, rows[i].stack);
		rb_u64(&samples, count);
		rb_str(&samples, type, strlen(type));
		i = j;
	}
	if (pd.frames.len)
		ret = ch__request(s, SIZE_MAX, "INSERT INTO frames FORMAT RowBinary", &pd.frames, NULL,
				  "insert frames", err, errlen);
	if (!ret && pd.stacks.len)
		ret = ch__request(s, SIZE_MAX, "INSERT INTO stacks FORMAT RowBinary", &pd.stacks, NULL,
				  "insert stacks", err, errlen);
	if (!ret && series.len)
		ret = ch__request(s, SIZE_MAX, "INSERT INTO series_in FORMAT RowBinary", &series, NULL,
				  "insert series", err, errlen);
	if (!ret && samples.len)
		ret = ch__request(s, SIZE_MAX, "INSERT INTO samples FORMAT RowBinary", &samples, NULL,
				  "insert samples", err, errlen);
	if (ret)
		goto out;
	/* acknowledged: now the caches may say so */
	adopt(s->frames, pd.new_frames, true);
	adopt(s->stacks, pd.new_stacks, false);
	for (size_t i = 0; i < put->nr_series; i++) {
		bool created;
		void **slot = hashmap__insert(s->seen, &ids[i], sizeof(ids[i]), &created);
		if (created)
			*slot = xmalloc(sizeof(struct ch_seen));
		*(struct ch_seen *)*slot = seen[i];
	}
	if (!ch__default_type(s, put->service))
		ch__set_default_type(s, put->service, type);
out:
	free_pending(&pd);
	strbuf_release(&series);
	strbuf_release(&samples);
	free(memo);
	free(known);
	free(ids);
	free(seen);
	free(rows);
	free(path);
	free(owned);
	return ret;
}
