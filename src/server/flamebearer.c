#include "server/flamebearer.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/idmap.h"
#include "util/strbuf.h"

/* Deeper frames are cut (emit() recurses once per level). */
#define FLAMEBEARER_MAX_DEPTH 4096

struct node {
	uint32_t name;			/* index into tree.names */
	uint32_t parent;		/* node index, smaller than this node's */
	uint32_t first_child, next;	/* node indexes, 0 = none (0 is the root) */
	uint64_t total[2], self[2];
};

struct tree {
	struct node *v;
	size_t n, alloc;
	struct idmap *children;		/* parent << 32 | name -> node index */
	const char **names;		/* borrowed from the profiles, names[0] = "total" */
	size_t nr_names, alloc_names;
	struct hashmap *name_ids;	/* name -> index, NULL until two sources merge */
	struct strbuf *rows;		/* JSON text of each level, "n,n,n,n," per node */
	size_t nr_rows;
	struct strbuf out_names;	/* names of the emitted nodes only, JSON strings */
	uint32_t nr_out;		/* ... in order of emission: how many */
	uint32_t *out_id;		/* name index -> index in out_names, UINT32_MAX: not yet */
	uint8_t *keep;			/* per node: emitted (NULL: every node) */
	uint32_t *depth;		/* per node, for ranking ties */
	uint64_t max_self;
};

/* Adds name without looking for it: for names known to be new. */
static uint32_t append_name(struct tree *t, const char *name)
{
	if (t->nr_names == t->alloc_names) {
		t->alloc_names = t->alloc_names ? t->alloc_names * 2 : 256;
		t->names = xrealloc(t->names, t->alloc_names * sizeof(*t->names));
	}
	t->names[t->nr_names] = name;
	return (uint32_t)t->nr_names++;
}

static uint32_t tree_name(struct tree *t, const char *name)
{
	bool created;
	void **slot;

	if (!t->name_ids) {
		t->name_ids = hashmap__new();
		for (size_t i = 0; i < t->nr_names; i++)
			*hashmap__insert(t->name_ids, t->names[i], strlen(t->names[i]), NULL) =
				(void *)(uintptr_t)i;
	}
	slot = hashmap__insert(t->name_ids, name, strlen(name), &created);
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
	t->v[t->n].parent = parent;
	if (t->n) {
		t->v[t->n].next = t->v[parent].first_child;
		t->v[parent].first_child = (uint32_t)t->n;
		if (t->children)
			idmap__set(t->children, (uint64_t)parent << 32 | name, (uint32_t)t->n);
	}
	return (uint32_t)t->n++;
}

/* The child of parent named name, created when missing. */
static uint32_t child_of(struct tree *t, uint32_t parent, uint32_t name)
{
	uint32_t child;

	if (!t->children) {
		t->children = idmap__new();
		idmap__reserve(t->children, t->alloc);
		for (size_t i = 1; i < t->n; i++)
			idmap__set(t->children, (uint64_t)t->v[i].parent << 32 | t->v[i].name,
				   (uint32_t)i);
	}
	child = idmap__get(t->children, (uint64_t)parent << 32 | name);
	return child ? child : new_node(t, parent, name);
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
			uint32_t f = s.frames[d];
			if (!map[f])
				map[f] = tree_name(t, profile__name(p, f)) + 1;
			node = child_of(t, node, map[f] - 1);
			t->v[node].total[side] += s.count;
		}
		t->v[node].self[side] += s.count;
	}
	free(map);
}

/* Adds a store's call tree as side. Into an empty tree its nodes are copied one to one,
 * without hashing names or (parent, name) pairs: the store's siblings are distinct. */
static void add_store_tree(struct tree *t, const struct store_tree *st, int side)
{
	uint32_t *map, *nmap, *depth;
	uint64_t *tot;
	bool fresh = t->n == 1 && !t->name_ids;

	if (!st->n)
		return;
	map = xmalloc(st->n * sizeof(*map));
	depth = xmalloc(st->n * sizeof(*depth));
	nmap = xcalloc(st->nr_names + 1, sizeof(*nmap));
	tot = xmalloc(st->n * sizeof(*tot));
	memcpy(tot, st->self, st->n * sizeof(*tot));
	for (size_t i = st->n - 1; i > 0; i--)
		tot[st->parent[i] < i ? st->parent[i] : 0] += tot[i];
	map[0] = 0;
	depth[0] = 0;
	t->v[0].total[side] += tot[0];
	t->v[0].self[side] += st->self[0];
	for (size_t i = 1; i < st->n; i++) {
		uint32_t p = st->parent[i] < i ? st->parent[i] : 0, nm = st->name[i], node;
		if (nm >= st->nr_names || depth[p] >= FLAMEBEARER_MAX_DEPTH) {
			/* cut here: the samples stay in the ancestor, as its own */
			map[i] = map[p];
			depth[i] = depth[p];
			t->v[map[i]].self[side] += st->self[i];
			continue;
		}
		if (!nmap[nm])
			nmap[nm] = (fresh ? append_name(t, st->names[nm])
				    : tree_name(t, st->names[nm])) + 1;
		node = fresh ? new_node(t, map[p], nmap[nm] - 1) : child_of(t, map[p], nmap[nm] - 1);
		map[i] = node;
		depth[i] = depth[p] + 1;
		t->v[node].total[side] += tot[i];
		t->v[node].self[side] += st->self[i];
	}
	free(tot);
	free(nmap);
	free(depth);
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

static uint64_t sum(const struct node *v)
{
	return v->total[0] + v->total[1];
}

/* Rank for truncation: larger total first, then shallower, then by name, then by index.
 * A parent never ranks after its child (its total is at least the child's, its depth
 * smaller), so every prefix of the ranking is a tree. */
static int rank_cmp(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = sum(&t->v[i]), y = sum(&t->v[j]);
	int c;

	if (x != y)
		return x > y ? -1 : 1;
	if (t->depth[i] != t->depth[j])
		return t->depth[i] < t->depth[j] ? -1 : 1;
	c = strcmp(t->names[t->v[i].name], t->names[t->v[j].name]);
	return c ? c : (i < j ? -1 : 1);
}

/* Chooses the nodes to emit so that they, the root and the "other" nodes (one under each
 * emitted node with a child that is not) are at most max_nodes: the longest prefix of the
 * ranking (rank_cmp) that fits. */
static void truncate_tree(struct tree *t, size_t max_nodes)
{
	uint32_t *nkids, *kept_kids, *cand;
	uint64_t *totals, cut;
	size_t nc = 0, used;

	if (max_nodes < 2)
		max_nodes = 2;
	if (t->n <= max_nodes)
		return;
	t->keep = xcalloc(t->n, sizeof(*t->keep));
	t->depth = xmalloc(t->n * sizeof(*t->depth));
	nkids = xcalloc(t->n, sizeof(*nkids));
	kept_kids = xcalloc(t->n, sizeof(*kept_kids));
	totals = xmalloc((t->n - 1) * sizeof(*totals));
	t->keep[0] = 1;
	t->depth[0] = 0;
	for (size_t i = 1; i < t->n; i++) {
		t->depth[i] = t->depth[t->v[i].parent] + 1;
		nkids[t->v[i].parent]++;
		totals[i - 1] = sum(&t->v[i]);
	}
	/* no more than max_nodes - 1 nodes besides the root can be kept: rank only those
	 * whose total reaches the (max_nodes - 1)-th largest */
	cut = kth_largest(totals, t->n - 1, max_nodes - 1);
	cand = xmalloc((t->n - 1) * sizeof(*cand));
	for (size_t i = 1; i < t->n; i++)
		if (sum(&t->v[i]) >= cut)
			cand[nc++] = (uint32_t)i;
	qsort_r(cand, nc, sizeof(*cand), rank_cmp, t);
	used = 1 + (nkids[0] > 0);
	for (size_t k = 0; k < nc; k++) {
		uint32_t x = cand[k], p = t->v[x].parent;
		size_t add = 1 + (nkids[x] > 0), drop = kept_kids[p] + 1 == nkids[p];
		if (!t->keep[p] || used + add - drop > max_nodes)
			break;
		t->keep[x] = 1;
		kept_kids[p]++;
		used = used + add - drop;
	}
	free(cand);
	free(totals);
	free(kept_kids);
	free(nkids);
}

/* True when s is valid UTF-8 (no overlong forms, surrogates or code points past 10FFFF). */
static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, n;
		uint32_t cp;

		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)	/* also stops at the terminating NUL */
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

/* Appends name as a JSON string; when it is not UTF-8, its bytes >= 0x80 become '?'. */
static void put_string(struct strbuf *out, const char *name)
{
	bool ascii_only = !utf8_valid((const unsigned char *)name);

	strbuf_addch(out, '"');
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		const unsigned char *run = p;
		while (*p >= 0x20 && *p != '"' && *p != '\\' && !(ascii_only && *p >= 0x80))
			p++;
		strbuf_add(out, run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			strbuf_addch(out, '\\');
			strbuf_addch(out, (char)*p);
		} else if (*p >= 0x80) {
			strbuf_addch(out, '?');
		} else {
			strbuf_addf(out, "\\u%04x", *p);
		}
	}
	strbuf_addch(out, '"');
}

static void put_u64(struct strbuf *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(out, p, (size_t)(buf + sizeof(buf) - p));
}

/* The index of name in the output names: only names of nodes that are emitted are sent,
 * so a tree truncated to maxNodes does not carry every name of the profile. */
static uint32_t out_name(struct tree *t, uint32_t name)
{
	if (t->out_id[name] == UINT32_MAX) {
		t->out_id[name] = t->nr_out++;
		if (t->out_names.len)
			strbuf_addch(&t->out_names, ',');
		put_string(&t->out_names, t->names[name]);
	}
	return t->out_id[name];
}

static struct strbuf *row(struct tree *t, size_t depth)
{
	if (depth >= t->nr_rows) {
		size_t n = t->nr_rows ? t->nr_rows * 2 : 64;
		while (n <= depth)
			n *= 2;
		t->rows = xrealloc(t->rows, n * sizeof(*t->rows));
		for (size_t i = t->nr_rows; i < n; i++)
			strbuf_init(&t->rows[i], 0);
		t->nr_rows = n;
	}
	return &t->rows[depth];
}

/* Per-row cursor: absolute end of the last node emitted on that row, per side. */
struct cursor {
	uint64_t *end[2];
	size_t alloc;
};

static void put_node(struct tree *t, struct cursor *c, bool dbl, size_t depth, uint64_t x[2],
		     const uint64_t total[2], const uint64_t self[2], uint32_t name)
{
	struct strbuf *r = row(t, depth);

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
		put_u64(r, x[s] - c->end[s][depth]);
		strbuf_addch(r, ',');
		put_u64(r, total[s]);
		strbuf_addch(r, ',');
		put_u64(r, self[s]);
		strbuf_addch(r, ',');
		c->end[s][depth] = x[s] + total[s];
		if (self[s] > t->max_self)
			t->max_self = self[s];
	}
	put_u64(r, out_name(t, name));
	strbuf_addch(r, ',');
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
		if (t->keep && !t->keep[k]) {
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

/* Creates the tree with its root, sized for about nodes nodes. */
static void tree_init(struct tree *t, size_t nodes)
{
	memset(t, 0, sizeof(*t));
	t->alloc = nodes ? nodes : 1;
	t->v = xmalloc(t->alloc * sizeof(*t->v));
	append_name(t, "total");
	new_node(t, 0, 0);
}

/* Truncates to max_nodes and appends the flamebearer object's JSON text to out; frees
 * the tree. */
static void tree_finish(struct tree *t, struct strbuf *out, bool dbl, size_t max_nodes,
			uint64_t *left_ticks, uint64_t *right_ticks)
{
	struct cursor c = { { NULL, NULL }, 0 };
	uint64_t x[2] = { 0, 0 };
	uint32_t other = append_name(t, "other");

	if (max_nodes)
		truncate_tree(t, max_nodes);
	strbuf_init(&t->out_names, 0);
	t->out_id = xmalloc(t->nr_names * sizeof(*t->out_id));
	memset(t->out_id, 0xff, t->nr_names * sizeof(*t->out_id));
	emit(t, &c, dbl, 0, 0, x, other);
	size_t size = t->out_names.len + 128;
	for (size_t d = 0; d < t->nr_rows; d++)
		size += t->rows[d].len + 3;
	strbuf_grow(out, size);
	strbuf_addstr(out, "{\"names\":[");
	strbuf_add(out, t->out_names.buf, t->out_names.len);
	strbuf_addstr(out, "],\"levels\":[");
	for (size_t d = 0; d < t->nr_rows && t->rows[d].len; d++) {
		if (d)
			strbuf_addch(out, ',');
		strbuf_addch(out, '[');
		strbuf_add(out, t->rows[d].buf, t->rows[d].len - 1);	/* without the last ',' */
		strbuf_addch(out, ']');
	}
	strbuf_addstr(out, "],\"numTicks\":");
	put_u64(out, t->v[0].total[0] + t->v[0].total[1]);
	strbuf_addstr(out, ",\"maxSelf\":");
	put_u64(out, t->max_self);
	strbuf_addch(out, '}');
	if (left_ticks)
		*left_ticks = t->v[0].total[0];
	if (right_ticks)
		*right_ticks = t->v[0].total[1];
	free(c.end[0]);
	free(c.end[1]);
	for (size_t d = 0; d < t->nr_rows; d++)
		strbuf_release(&t->rows[d]);
	free(t->rows);
	strbuf_release(&t->out_names);
	free(t->v);
	free(t->names);
	free(t->out_id);
	free(t->keep);
	free(t->depth);
	idmap__free(t->children);
	hashmap__free(t->name_ids);
}

static json_t *parse(struct strbuf *text)
{
	json_t *v = json_loadb(text->buf, text->len, 0, NULL);

	if (!v)
		abort();	/* we wrote it: only out of memory gets here */
	strbuf_release(text);
	return v;
}

json_t *flamebearer__build(const struct profile *left, const struct profile *right,
			   size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks)
{
	struct strbuf text = STRBUF_INIT;
	struct tree t;
	/* At most one node per frame of every stack, but mostly far fewer: start at an
	 * eighth and grow by doubling. */
	size_t frames = 1;
	for (int side = 0; side < 2; side++) {
		const struct profile *p = side ? right : left;
		for (size_t i = 0; p && i < profile__nr_stacks(p); i++) {
			uint32_t d = profile__stack(p, i).depth;
			frames += d < FLAMEBEARER_MAX_DEPTH ? d : FLAMEBEARER_MAX_DEPTH;
		}
	}
	tree_init(&t, frames / 8 + 1024);
	add_profile(&t, left, 0);
	if (right)
		add_profile(&t, right, 1);
	tree_finish(&t, &text, right != NULL, max_nodes, left_ticks, right_ticks);
	return parse(&text);
}

void flamebearer__write_trees(struct strbuf *out, const struct store_tree *left,
			      const struct store_tree *right, size_t max_nodes,
			      uint64_t *left_ticks, uint64_t *right_ticks)
{
	struct tree t;

	tree_init(&t, left->n + (right ? right->n : 0) + 1);
	add_store_tree(&t, left, 0);
	if (right)
		add_store_tree(&t, right, 1);
	tree_finish(&t, out, right != NULL, max_nodes, left_ticks, right_ticks);
}

json_t *flamebearer__build_trees(const struct store_tree *left, const struct store_tree *right,
				 size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks)
{
	struct strbuf text = STRBUF_INIT;

	flamebearer__write_trees(&text, left, right, max_nodes, left_ticks, right_ticks);
	return parse(&text);
}
