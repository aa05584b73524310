/* Pyroscope's tree bytes from a store's call tree: see pyrotree.h. */
#include "server/pyrotree.h"

#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"

void pyrotree__from_profile(const struct profile *p, struct store_tree *out)
{
	size_t alloc = 1024;
	struct idmap *ids = idmap__new();

	out->nr_names = profile__nr_names(p);
	out->names = xcalloc(out->nr_names + 1, sizeof(*out->names));
	for (size_t i = 0; i < out->nr_names; i++)
		out->names[i] = profile__name(p, (uint32_t)i);
	out->parent = xmalloc(alloc * sizeof(*out->parent));
	out->name = xmalloc(alloc * sizeof(*out->name));
	out->self = xmalloc(alloc * sizeof(*out->self));
	out->parent[0] = out->name[0] = 0;
	out->self[0] = 0;
	out->n = 1;
	for (size_t s = 0; s < profile__nr_stacks(p); s++) {
		struct profile_stack st = profile__stack(p, s);
		uint32_t node = 0;
		for (uint32_t d = 0; d < st.depth; d++) {
			uint64_t key = (uint64_t)node << 32 | st.frames[d];
			uint32_t child = idmap__get(ids, key);
			if (!child) {
				if (out->n == alloc) {
					alloc *= 2;
					out->parent = xrealloc(out->parent, alloc * sizeof(*out->parent));
					out->name = xrealloc(out->name, alloc * sizeof(*out->name));
					out->self = xrealloc(out->self, alloc * sizeof(*out->self));
				}
				child = (uint32_t)out->n++;
				out->parent[child] = node;
				out->name[child] = st.frames[d];
				out->self[child] = 0;
				idmap__set(ids, key, child);
			}
			node = child;
		}
		out->self[node] += st.count;
	}
	idmap__free(ids);
}

static void put_varint(struct strbuf *out, uint64_t v)
{
	while (v >= 0x80) {
		strbuf_addch(out, (char)(v | 0x80));
		v >>= 7;
	}
	strbuf_addch(out, (char)v);
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

static void put_node(struct strbuf *out, const char *name, uint64_t self, size_t children)
{
	size_t len = name ? strlen(name) : 0;

	put_varint(out, len);
	strbuf_add(out, name ? name : "", len);
	put_varint(out, self);
	put_varint(out, children);
}

void pyrotree__write(struct strbuf *out, const struct store_tree *t, size_t max_nodes)
{
	size_t n = t->n;
	uint64_t *total, min = 0;
	uint32_t *first, *next, *stack;
	size_t depth = 0;

	if (n <= 1)
		return;	/* an empty tree is no bytes, as Pyroscope writes it */
	total = xcalloc(n, sizeof(*total));
	for (size_t i = n; i-- > 1;) {
		total[i] += t->self[i];
		if (t->parent[i] < i)	/* damaged data: a parent after its child is a root */
			total[t->parent[i]] += total[i];
	}
	if (max_nodes && n - 1 > max_nodes) {
		uint64_t *sorted = xmalloc((n - 1) * sizeof(*sorted));
		memcpy(sorted, total + 1, (n - 1) * sizeof(*sorted));
		qsort(sorted, n - 1, sizeof(*sorted), cmp_desc);
		min = sorted[max_nodes - 1];
		free(sorted);
	}
	/* children lists, in node order */
	first = xmalloc(n * sizeof(*first));
	next = xmalloc(n * sizeof(*next));
	memset(first, 0xff, n * sizeof(*first));
	for (size_t i = n; i-- > 1;) {
		uint32_t p = t->parent[i] < i ? t->parent[i] : 0;
		next[i] = first[p];
		first[p] = (uint32_t)i;
	}
	stack = xmalloc(n * sizeof(*stack));
	stack[depth++] = 0;
	while (depth) {
		uint32_t node = stack[--depth];
		uint64_t other = 0;
		size_t kept = 0;
		for (uint32_t c = first[node]; c != UINT32_MAX; c = next[c]) {
			if (total[c] >= min)
				kept++;
			else
				other += total[c];
		}
		const char *name = node && t->name[node] < t->nr_names ? t->names[t->name[node]] : "";
		put_node(out, name, node ? t->self[node] : 0, kept + (other > 0));
		if (other)
			put_node(out, "other", other, 0);
		/* pushed last first, so that children come out in node order */
		size_t at = depth;
		for (uint32_t c = first[node]; c != UINT32_MAX; c = next[c])
			if (total[c] >= min)
				stack[depth++] = c;
		for (size_t a = at, b = depth; a + 1 < b; a++, b--) {
			uint32_t x = stack[a];
			stack[a] = stack[b - 1];
			stack[b - 1] = x;
		}
	}
	free(stack);
	free(first);
	free(next);
	free(total);
}
