#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

/* Interned strings: dense ids in order of first appearance. */
struct strtab {
	char **v;
	size_t n, alloc;
	struct hashmap *ids;	/* string -> id + 1 */
};

struct stack_entry {
	size_t off;		/* into frames */
	uint32_t depth;
	uint32_t labels;
};

/* A label set: n (key, value) string ids of the label table, sorted by key string. */
struct labelset {
	size_t off;		/* into set_pairs, in uint32 pairs */
	size_t n;
};

struct profile {
	struct strtab names;

	uint32_t *frames;
	size_t nr_frames, alloc_frames;
	struct stack_entry *stacks;
	size_t nr_stacks, alloc_stacks;
	struct hashmap *stack_ids;	/* (labels, frame ids) bytes -> index + 1 */
	uint32_t *key;			/* scratch for the stack key */
	size_t alloc_key;

	char **types;			/* 2 * nr_types: type, unit */
	size_t nr_types;
	bool default_types;		/* still the untouched "samples"/"count" */
	uint64_t *values;		/* alloc_stacks * nr_types */
	uint64_t *totals;		/* nr_types */

	char *period_type, *period_unit;
	int64_t period;

	struct strtab lstr;		/* label keys and values */
	struct labelset *sets;
	size_t nr_sets, alloc_sets;
	uint32_t *set_pairs;		/* key id, value id, ... */
	size_t nr_pairs, alloc_pairs;
	struct profile_label *view;	/* what profile__labels returns */
	size_t alloc_view;
	struct hashmap *set_ids;	/* pair bytes -> id + 1 */

	json_t *meta;
};

static uint32_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	bool created;
	void **slot = hashmap__insert(t->ids, s, len, &created);

	if (!created)
		return (uint32_t)((uintptr_t)*slot - 1);
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	t->v[t->n] = xstrndup(s, len);
	*slot = (void *)(uintptr_t)(t->n + 1);
	return (uint32_t)t->n++;
}

static void strtab__release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	hashmap__free(t->ids);
}

static void set_types(struct profile *p, const struct profile_type *t, size_t n)
{
	for (size_t i = 0; i < 2 * p->nr_types; i++)
		free(p->types[i]);
	p->types = xrealloc(p->types, 2 * n * sizeof(*p->types));
	for (size_t i = 0; i < n; i++) {
		p->types[2 * i] = xstrdup(t[i].type ? t[i].type : "");
		p->types[2 * i + 1] = xstrdup(t[i].unit ? t[i].unit : "");
	}
	p->nr_types = n;
	free(p->values);
	free(p->totals);
	p->values = xcalloc((p->alloc_stacks ? p->alloc_stacks : 1) * n, sizeof(*p->values));
	p->totals = xcalloc(n, sizeof(*p->totals));
}

struct profile *profile__new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	static const struct profile_type samples = { "samples", "count" };

	p->names.ids = hashmap__new();
	p->lstr.ids = hashmap__new();
	p->stack_ids = hashmap__new();
	p->set_ids = hashmap__new();
	set_types(p, &samples, 1);
	p->default_types = true;
	p->sets = xcalloc(1, sizeof(*p->sets));	/* set 0: empty */
	p->nr_sets = p->alloc_sets = 1;
	p->meta = json_object();
	if (!p->meta)
		abort();
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	strtab__release(&p->names);
	strtab__release(&p->lstr);
	free(p->frames);
	free(p->stacks);
	hashmap__free(p->stack_ids);
	free(p->key);
	for (size_t i = 0; i < 2 * p->nr_types; i++)
		free(p->types[i]);
	free(p->types);
	free(p->values);
	free(p->totals);
	free(p->period_type);
	free(p->period_unit);
	free(p->sets);
	free(p->set_pairs);
	free(p->view);
	hashmap__free(p->set_ids);
	json_decref(p->meta);
	free(p);
}

uint32_t profile__intern(struct profile *p, const char *name, size_t len)
{
	return strtab__intern(&p->names, name, len);
}

uint32_t profile__intern_str(struct profile *p, const char *name)
{
	return profile__intern(p, name, strlen(name));
}

const char *profile__name(const struct profile *p, uint32_t id)
{
	return id < p->names.n ? p->names.v[id] : "";
}

size_t profile__nr_names(const struct profile *p)
{
	return p->names.n;
}

size_t profile__nr_types(const struct profile *p)
{
	return p->nr_types;
}

struct profile_type profile__type(const struct profile *p, size_t index)
{
	if (index >= p->nr_types)
		return (struct profile_type){ "", "" };
	return (struct profile_type){ p->types[2 * index], p->types[2 * index + 1] };
}

int profile__find_type(const struct profile *p, const char *type, const char *unit)
{
	for (size_t i = 0; i < p->nr_types; i++)
		if (!strcmp(p->types[2 * i], type) && !strcmp(p->types[2 * i + 1], unit))
			return (int)i;
	return -1;
}

int profile__set_types(struct profile *p, const struct profile_type *types, size_t n)
{
	if (p->nr_stacks)
		return -EBUSY;
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(types[i].type, types[j].type) &&
			    !strcmp(types[i].unit, types[j].unit))
				return -EINVAL;
	set_types(p, types, n);
	p->default_types = false;
	return 0;
}

size_t profile__add_type(struct profile *p, const char *type, const char *unit)
{
	int found = profile__find_type(p, type, unit);
	size_t n = p->nr_types, cap = p->alloc_stacks ? p->alloc_stacks : 1;
	uint64_t *values;

	if (found >= 0)
		return (size_t)found;
	p->default_types = false;
	p->types = xrealloc(p->types, 2 * (n + 1) * sizeof(*p->types));
	p->types[2 * n] = xstrdup(type);
	p->types[2 * n + 1] = xstrdup(unit);
	values = xcalloc(cap * (n + 1), sizeof(*values));
	for (size_t i = 0; i < p->nr_stacks; i++)
		memcpy(values + i * (n + 1), p->values + i * n, n * sizeof(*values));
	free(p->values);
	p->values = values;
	p->totals = xrealloc(p->totals, (n + 1) * sizeof(*p->totals));
	p->totals[n] = 0;
	p->nr_types = n + 1;
	return n;
}

void profile__set_period(struct profile *p, const char *type, const char *unit, int64_t value)
{
	free(p->period_type);
	free(p->period_unit);
	p->period_type = xstrdup(type);
	p->period_unit = xstrdup(unit);
	p->period = value;
}

bool profile__period(const struct profile *p, struct profile_type *t, int64_t *value)
{
	if (!p->period_type)
		return false;
	t->type = p->period_type;
	t->unit = p->period_unit;
	*value = p->period;
	return true;
}

/* Orders label ids by key string. */
static int pair_cmp(const void *a, const void *b, void *arg)
{
	const struct strtab *t = arg;
	const uint32_t *x = a, *y = b;

	return strcmp(t->v[x[0]], t->v[y[0]]);
}

uint32_t profile__labelset(struct profile *p, const struct profile_label *labels, size_t n)
{
	uint32_t buf[32], *pairs = n <= 16 ? buf : xmalloc(2 * n * sizeof(*pairs));
	size_t m = 0;
	bool created;
	void **slot;
	uint32_t id;

	for (size_t i = 0; i < n; i++) {
		uint32_t k = strtab__intern(&p->lstr, labels[i].key, strlen(labels[i].key));
		uint32_t v = strtab__intern(&p->lstr, labels[i].value, strlen(labels[i].value));
		size_t j;
		for (j = 0; j < m && pairs[2 * j] != k; j++)
			;
		pairs[2 * j] = k;	/* a repeated key: the last value wins */
		pairs[2 * j + 1] = v;
		m += j == m;
	}
	if (!m) {
		if (pairs != buf)
			free(pairs);
		return 0;
	}
	qsort_r(pairs, m, 2 * sizeof(*pairs), pair_cmp, &p->lstr);
	slot = hashmap__insert(p->set_ids, pairs, 2 * m * sizeof(*pairs), &created);
	if (!created) {
		id = (uint32_t)((uintptr_t)*slot - 1);
	} else {
		if (p->nr_sets == p->alloc_sets) {
			p->alloc_sets *= 2;
			p->sets = xrealloc(p->sets, p->alloc_sets * sizeof(*p->sets));
		}
		if (p->nr_pairs + m > p->alloc_pairs) {
			while (p->nr_pairs + m > p->alloc_pairs)
				p->alloc_pairs = p->alloc_pairs ? p->alloc_pairs * 2 : 64;
			p->set_pairs = xrealloc(p->set_pairs, 2 * p->alloc_pairs * sizeof(*pairs));
		}
		memcpy(p->set_pairs + 2 * p->nr_pairs, pairs, 2 * m * sizeof(*pairs));
		p->sets[p->nr_sets] = (struct labelset){ p->nr_pairs, m };
		p->nr_pairs += m;
		id = (uint32_t)p->nr_sets++;
		*slot = (void *)(uintptr_t)(id + 1);
	}
	if (pairs != buf)
		free(pairs);
	return id;
}

const struct profile_label *profile__labels(const struct profile *p, uint32_t id, size_t *n)
{
	struct profile *w = (struct profile *)p;	/* the view is a cache */
	const struct labelset *s;

	*n = 0;
	if (!id || id >= p->nr_sets)
		return NULL;
	s = &p->sets[id];
	if (s->n > w->alloc_view) {
		w->alloc_view = s->n;
		w->view = xrealloc(w->view, s->n * sizeof(*w->view));
	}
	for (size_t i = 0; i < s->n; i++) {
		const uint32_t *pr = p->set_pairs + 2 * (s->off + i);
		w->view[i] = (struct profile_label){ p->lstr.v[pr[0]], p->lstr.v[pr[1]] };
	}
	*n = s->n;
	return w->view;
}

const char *profile__label(const struct profile *p, uint32_t id, const char *key)
{
	if (!id || id >= p->nr_sets)
		return NULL;
	for (size_t i = 0; i < p->sets[id].n; i++) {
		const uint32_t *pr = p->set_pairs + 2 * (p->sets[id].off + i);
		if (!strcmp(p->lstr.v[pr[0]], key))
			return p->lstr.v[pr[1]];
	}
	return NULL;
}

size_t profile__nr_labelsets(const struct profile *p)
{
	return p->nr_sets;
}

/* The stack's index, created (all values 0) when new. */
static size_t stack_index(struct profile *p, const uint32_t *frames, uint32_t depth,
			  uint32_t labels)
{
	bool created;
	void **slot;
	struct stack_entry *s;

	if (labels >= p->nr_sets)
		labels = 0;
	if (depth + 1 > p->alloc_key) {
		p->alloc_key = depth + 64;
		p->key = xrealloc(p->key, p->alloc_key * sizeof(*p->key));
	}
	p->key[0] = labels;
	if (depth)
		memcpy(p->key + 1, frames, depth * sizeof(*frames));
	slot = hashmap__insert(p->stack_ids, p->key, (depth + 1) * sizeof(*p->key), &created);
	if (!created)
		return (uintptr_t)*slot - 1;
	if (p->nr_frames + depth > p->alloc_frames) {
		while (p->nr_frames + depth > p->alloc_frames)
			p->alloc_frames = p->alloc_frames ? p->alloc_frames * 2 : 1024;
		p->frames = xrealloc(p->frames, p->alloc_frames * sizeof(*p->frames));
	}
	if (p->nr_stacks == p->alloc_stacks) {
		p->alloc_stacks = p->alloc_stacks ? p->alloc_stacks * 2 : 256;
		p->stacks = xrealloc(p->stacks, p->alloc_stacks * sizeof(*p->stacks));
		p->values = xrealloc(p->values, p->alloc_stacks * p->nr_types * sizeof(*p->values));
	}
	if (depth)
		memcpy(p->frames + p->nr_frames, frames, depth * sizeof(*frames));
	s = &p->stacks[p->nr_stacks];
	s->off = p->nr_frames;
	s->depth = depth;
	s->labels = labels;
	memset(p->values + p->nr_stacks * p->nr_types, 0, p->nr_types * sizeof(*p->values));
	p->nr_frames += depth;
	*slot = (void *)(uintptr_t)(p->nr_stacks + 1);
	return p->nr_stacks++;
}

size_t profile__add_labeled(struct profile *p, const uint32_t *frames, uint32_t depth,
			    uint32_t labels, uint64_t count)
{
	size_t i = stack_index(p, frames, depth, labels);

	p->values[i * p->nr_types] += count;
	p->totals[0] += count;
	return i;
}

size_t profile__add(struct profile *p, const uint32_t *frames, uint32_t depth, uint64_t count)
{
	return profile__add_labeled(p, frames, depth, 0, count);
}

size_t profile__add_values(struct profile *p, const uint32_t *frames, uint32_t depth,
			   uint32_t labels, const uint64_t *values)
{
	size_t i = stack_index(p, frames, depth, labels);

	for (size_t t = 0; t < p->nr_types; t++) {
		p->values[i * p->nr_types + t] += values[t];
		p->totals[t] += values[t];
	}
	return i;
}

size_t profile__add_names(struct profile *p, const char *const *names, uint32_t depth,
			  uint64_t count)
{
	uint32_t stackbuf[256] = { 0 }, *ids = depth <= 256 ? stackbuf : xmalloc(depth * sizeof(*ids));
	size_t index;

	for (uint32_t i = 0; i < depth; i++)
		ids[i] = profile__intern_str(p, names[i]);
	index = profile__add(p, ids, depth, count);
	if (ids != stackbuf)
		free(ids);
	return index;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nr_stacks;
}

struct profile_stack profile__stack(const struct profile *p, size_t index)
{
	const struct stack_entry *s = &p->stacks[index];
	const uint64_t *v = p->values + index * p->nr_types;

	/* a profile of only empty stacks has no frames array (NULL + 0 is undefined) */
	return (struct profile_stack){ p->frames ? p->frames + s->off : NULL, s->depth, v[0], v,
				       s->labels };
}

uint64_t profile__total(const struct profile *p)
{
	return p->totals[0];
}

uint64_t profile__type_total(const struct profile *p, size_t index)
{
	return index < p->nr_types ? p->totals[index] : 0;
}

void profile__merge(struct profile *dst, const struct profile *src)
{
	uint32_t *map = xmalloc((src->names.n ? src->names.n : 1) * sizeof(*map));
	uint32_t *lmap = xmalloc(src->nr_sets * sizeof(*lmap));
	size_t *tmap = xmalloc(src->nr_types * sizeof(*tmap));
	uint64_t *vals = NULL;
	uint32_t *ids = NULL;
	size_t alloc = 0;

	if (!dst->nr_stacks && dst->default_types && !src->default_types) {
		struct profile_type *t = xmalloc(src->nr_types * sizeof(*t));
		for (size_t i = 0; i < src->nr_types; i++)
			t[i] = profile__type(src, i);
		set_types(dst, t, src->nr_types);
		dst->default_types = false;
		free(t);
	}
	for (size_t i = 0; i < src->nr_types; i++)
		tmap[i] = profile__add_type(dst, src->types[2 * i], src->types[2 * i + 1]);
	if (!dst->period_type && src->period_type)
		profile__set_period(dst, src->period_type, src->period_unit, src->period);
	for (size_t i = 0; i < src->names.n; i++)
		map[i] = profile__intern_str(dst, src->names.v[i]);
	lmap[0] = 0;
	for (size_t i = 1; i < src->nr_sets; i++) {
		size_t n;
		const struct profile_label *l = profile__labels(src, (uint32_t)i, &n);
		lmap[i] = profile__labelset(dst, l, n);
	}
	vals = xmalloc(dst->nr_types * sizeof(*vals));
	for (size_t i = 0; i < src->nr_stacks; i++) {
		struct profile_stack s = profile__stack(src, i);
		if (s.depth > alloc) {
			alloc = s.depth;
			ids = xrealloc(ids, alloc * sizeof(*ids));
		}
		for (uint32_t j = 0; j < s.depth; j++)
			ids[j] = map[s.frames[j]];
		memset(vals, 0, dst->nr_types * sizeof(*vals));
		for (size_t t = 0; t < src->nr_types; t++)
			vals[tmap[t]] = s.values[t];
		profile__add_values(dst, ids, s.depth, lmap[s.labels], vals);
	}
	free(vals);
	free(ids);
	free(tmap);
	free(lmap);
	free(map);
}

json_t *profile__meta(struct profile *p)
{
	return p->meta;
}

const json_t *profile__meta_const(const struct profile *p)
{
	return p->meta;
}
