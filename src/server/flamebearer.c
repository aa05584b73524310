#include "server/flamebearer.h"

#include <stdlib.h>
#include <string.h>

#include "store/rows.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* Deeper frames are cut (emit() recurses once per level). */
#define FLAMEBEARER_MAX_DEPTH 4096

struct node {
	uint32_t name;			/* index into tree.names */
	uint32_t first_child, next;	/* node indexes, 0 = none (0 is the root) */
	uint64_t total[2], self[2];
};

struct tree {
	struct node *v;
	size_t n, alloc;
	struct idmap *children;		/* parent << 32 | name -> node index */
	const char **names;		/* borrowed from the profiles, names[0] = "total" */
	size_t nr_names, alloc_names;
	struct hashmap *name_ids;	/* name -> index */
	json_t *rows;			/* array of arrays, filled by emit() */
	json_t *out_names;		/* names of the emitted nodes only, in order of emission */
	uint32_t *out_id;		/* name index -> index in out_names, UINT32_MAX: not yet */
	uint64_t min_total, max_self;
};

static uint32_t tree_name(struct tree *t, const char *name)
{
	bool created;
	void **slot = hashmap__insert(t->name_ids, name, strlen(name), &created);

	if (!created)
		return (uint32_t)(uintptr_t)*slot;
	if (t->nr_names == t->alloc_names) {
		t->alloc_names = t->alloc_names ? t->alloc_names * 2 : 256;
		t->names = xrealloc(t->names, t->alloc_names * sizeof(*t->names));
	}
	t->names[t->nr_names] = name;
	*slot = (void *)(uintptr_t)t->nr_names;
	return (uint32_t)t->nr_names++;
}

static uint32_t new_node(struct tree *t, uint32_t parent, uint32_t name)
{
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 1024;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].name = name;
	if (t->n) {
		t->v[t->n].next = t->v[parent].first_child;
		t->v[parent].first_child = (uint32_t)t->n;
		idmap__set(t->children, (uint64_t)parent << 32 | name, (uint32_t)t->n);
	}
	return (uint32_t)t->n++;
}

static void add_profile(struct tree *t, const struct profile *p, int side)
{
	uint32_t *map = xcalloc(profile__nr_names(p) + 1, sizeof(*map));

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		uint32_t node = 0;

		if (!s.count)
			continue;
		t->v[0].total[side] += s.count;
		for (uint32_t d = 0; d < s.depth && d < FLAMEBEARER_MAX_DEPTH; d++) {
			uint32_t f = s.frames[d], child;
			if (!map[f])
				map[f] = tree_name(t, profile__name(p, f)) + 1;
			child = idmap__get(t->children, (uint64_t)node << 32 | (map[f] - 1));
			if (!child)
				child = new_node(t, node, map[f] - 1);
			node = child;
			t->v[node].total[side] += s.count;
		}
		t->v[node].self[side] += s.count;
	}
	free(map);
}

/* Returns the k-th largest (k from 1) of v[0..n), reordering v (quickselect). */
static uint64_t kth_largest(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, want = k - 1;

	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] > pivot)
				i++;
			while (v[j] < pivot)
				j--;
			if (i <= j) {
				uint64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;
	}
	return v[want];
}

static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	const struct node *x = &t->v[*(const uint32_t *)a], *y = &t->v[*(const uint32_t *)b];
	return strcmp(t->names[x->name], t->names[y->name]);
}

/* A name as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *name_json(const char *name)
{
	json_t *js = json_string(name);

	if (!js) {
		char *copy = xstrdup(name);
		for (char *ch = copy; *ch; ch++)
			if ((unsigned char)*ch >= 0x80)
				*ch = '?';
		js = json_string(copy);
		free(copy);
	}
	return js;
}

/* The index of name in the output names: only names of nodes that are emitted are sent,
 * so a tree truncated to maxNodes does not carry every name of the profile. */
static uint32_t out_name(struct tree *t, uint32_t name)
{
	if (t->out_id[name] == UINT32_MAX) {
		t->out_id[name] = (uint32_t)json_array_size(t->out_names);
		json_array_append_new(t->out_names, name_json(t->names[name]));
	}
	return t->out_id[name];
}

static json_t *row(struct tree *t, size_t depth)
{
	while (json_array_size(t->rows) <= depth)
		json_array_append_new(t->rows, json_array());
	return json_array_get(t->rows, depth);
}

/* Per-row cursor: absolute end of the last node emitted on that row, per side. */
struct cursor {
	uint64_t *end[2];
	size_t alloc;
};

static void put_node(struct tree *t, struct cursor *c, bool dbl, size_t depth, uint64_t x[2],
		     const uint64_t total[2], const uint64_t self[2], uint32_t name)
{
	json_t *r = row(t, depth);

	if (depth >= c->alloc) {
		size_t n = c->alloc ? c->alloc * 2 : 64;
		while (n <= depth)
			n *= 2;
		for (int s = 0; s < 2; s++) {
			c->end[s] = xrealloc(c->end[s], n * sizeof(uint64_t));
			memset(c->end[s] + c->alloc, 0, (n - c->alloc) * sizeof(uint64_t));
		}
		c->alloc = n;
	}
	for (int s = 0; s < (dbl ? 2 : 1); s++) {
		json_array_append_new(r, json_integer((json_int_t)(x[s] - c->end[s][depth])));
		json_array_append_new(r, json_integer((json_int_t)total[s]));
		json_array_append_new(r, json_integer((json_int_t)self[s]));
		c->end[s][depth] = x[s] + total[s];
		if (self[s] > t->max_self)
			t->max_self = self[s];
	}
	json_array_append_new(r, json_integer(out_name(t, name)));
}

static void emit(struct tree *t, struct cursor *c, bool dbl, uint32_t node, size_t depth,
		 uint64_t x[2], uint32_t other_name)
{
	const struct node *v = &t->v[node];
	uint32_t *kids = NULL;
	size_t nk = 0, alloc = 0;
	uint64_t cx[2] = { x[0], x[1] }, ot[2] = { 0, 0 };

	put_node(t, c, dbl, depth, x, v->total, v->self, v->name);
	for (uint32_t k = v->first_child; k; k = t->v[k].next) {
		if (t->v[k].total[0] + t->v[k].total[1] < t->min_total) {
			ot[0] += t->v[k].total[0];
			ot[1] += t->v[k].total[1];
			continue;
		}
		if (nk == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			kids = xrealloc(kids, alloc * sizeof(*kids));
		}
		kids[nk++] = k;
	}
	if (nk > 1)
		qsort_r(kids, nk, sizeof(*kids), child_cmp, t);
	for (size_t i = 0; i < nk; i++) {
		emit(t, c, dbl, kids[i], depth + 1, cx, other_name);
		cx[0] += t->v[kids[i]].total[0];
		cx[1] += t->v[kids[i]].total[1];
	}
	if (ot[0] + ot[1])
		put_node(t, c, dbl, depth + 1, cx, ot, ot, other_name);
	free(kids);
}

json_t *flamebearer__build(const struct profile *left, const struct profile *right,
			   size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks)
{
	struct tree t = { 0 };
	struct cursor c = { { NULL, NULL }, 0 };
	bool dbl = right != NULL;
	uint64_t x[2] = { 0, 0 };
	json_t *names, *fb;
	uint32_t other;

	t.children = idmap__new();
	t.name_ids = hashmap__new();
	t.rows = json_array();
	/* At most one node per frame of every stack: size for that once, not by doubling. */
	size_t frames = 1;
	for (int side = 0; side < 2; side++) {
		const struct profile *p = side ? right : left;
		for (size_t i = 0; p && i < profile__nr_stacks(p); i++) {
			uint32_t d = profile__stack(p, i).depth;
			frames += d < FLAMEBEARER_MAX_DEPTH ? d : FLAMEBEARER_MAX_DEPTH;
		}
	}
	t.alloc = frames;
	t.v = xmalloc(t.alloc * sizeof(*t.v));
	idmap__reserve(t.children, frames);
	tree_name(&t, "total");
	new_node(&t, 0, 0);
	add_profile(&t, left, 0);
	if (right)
		add_profile(&t, right, 1);
	other = tree_name(&t, "other");
	if (max_nodes && t.n > max_nodes + 1) {
		uint64_t *totals = xmalloc((t.n - 1) * sizeof(*totals));
		for (size_t i = 1; i < t.n; i++)
			totals[i - 1] = t.v[i].total[0] + t.v[i].total[1];
		t.min_total = kth_largest(totals, t.n - 1, max_nodes);
		free(totals);
	}
	t.out_names = json_array();
	t.out_id = xmalloc(t.nr_names * sizeof(*t.out_id));
	memset(t.out_id, 0xff, t.nr_names * sizeof(*t.out_id));
	emit(&t, &c, dbl, 0, 0, x, other);
	names = t.out_names;
	fb = json_pack("{s:o,s:o,s:I,s:I}", "names", names, "levels", t.rows, "numTicks",
		       (json_int_t)(t.v[0].total[0] + t.v[0].total[1]), "maxSelf",
		       (json_int_t)t.max_self);
	if (left_ticks)
		*left_ticks = t.v[0].total[0];
	if (right_ticks)
		*right_ticks = t.v[0].total[1];
	free(c.end[0]);
	free(c.end[1]);
	free(t.v);
	free(t.names);
	free(t.out_id);
	idmap__free(t.children);
	hashmap__free(t.name_ids);
	return fb;
}
