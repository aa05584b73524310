/* DOT call graphs (format/dot.h). */
#include "format/dot.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

struct edge {
	uint32_t from, to;
	uint64_t weight;
	size_t stamp;		/* the last stack (index + 1) that counted it */
};

struct dotgraph {
	size_t n;		/* frame names */
	uint64_t *flat, *cum;
	size_t *stamp;		/* per name: the last stack that counted its cum */
	struct hashmap *edges;	/* (from, to) -> struct edge */
	uint64_t total;
};

/* s as the inside of a DOT quoted string: '"' and '\' escaped, controls as spaces. */
static void quoted(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf_addch(out, '\\');
		strbuf_addch(out, (unsigned char)*s < 0x20 ? ' ' : *s);
	}
}

static void count(struct dotgraph *g, const struct profile *p)
{
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		if (!s.count || !s.depth)
			continue;
		g->total += s.count;
		g->flat[s.frames[s.depth - 1]] += s.count;
		for (uint32_t j = 0; j < s.depth; j++) {
			uint32_t f = s.frames[j];
			if (g->stamp[f] != i + 1) {
				g->stamp[f] = i + 1;
				g->cum[f] += s.count;
			}
			if (!j)
				continue;
			uint32_t key[2] = { s.frames[j - 1], f };
			bool created;
			void **slot = hashmap__insert(g->edges, key, sizeof(key), &created);
			struct edge *e = *slot;
			if (created) {
				e = *slot = xcalloc(1, sizeof(*e));
				e->from = key[0];
				e->to = key[1];
			}
			if (e->stamp != i + 1) {
				e->stamp = i + 1;
				e->weight += s.count;
			}
		}
	}
}

static const struct dotgraph *sort_graph;

static int by_cum(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = sort_graph->cum[x], cy = sort_graph->cum[y];

	return cx != cy ? (cx < cy ? 1 : -1) : (x > y) - (x < y);
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0;
}

void dot__write(struct strbuf *out, const struct profile *p, const char *title,
		const char *unit, size_t max_nodes)
{
	struct dotgraph g = { .n = profile__nr_names(p), .edges = hashmap__new() };
	size_t shown = 0, used = 0;
	uint64_t max_flat = 1;

	g.flat = xcalloc(g.n + 1, sizeof(*g.flat));
	g.cum = xcalloc(g.n + 1, sizeof(*g.cum));
	g.stamp = xcalloc(g.n + 1, sizeof(*g.stamp));
	count(&g, p);
	uint32_t *order = xmalloc((g.n + 1) * sizeof(*order));
	int32_t *node = xmalloc((g.n + 1) * sizeof(*node));	/* name -> node number, -1 */
	for (size_t i = 0; i < g.n; i++) {
		node[i] = -1;
		if (g.cum[i])
			order[used++] = (uint32_t)i;
	}
	sort_graph = &g;
	qsort(order, used, sizeof(*order), by_cum);
	shown = used < (max_nodes ? max_nodes : DOT_DEFAULT_NODES) ? used
			: (max_nodes ? max_nodes : DOT_DEFAULT_NODES);
	for (size_t i = 0; i < shown; i++) {
		node[order[i]] = (int32_t)i + 1;
		if (g.flat[order[i]] > max_flat)
			max_flat = g.flat[order[i]];
	}

	strbuf_addstr(out, "digraph \"");
	quoted(out, title);
	strbuf_addstr(out, "\" {\nnode [style=filled fillcolor=\"#f8f8f8\"]\n");
	strbuf_addstr(out, "subgraph cluster_L { \"L\" [shape=box fontsize=16 label=\"");
	quoted(out, title);
	strbuf_addf(out, "\\lTotal: %llu %s\\lShowing %zu of %zu nodes\\l\"] }\n",
		    (unsigned long long)g.total, unit, shown, used);
	for (size_t i = 0; i < shown; i++) {
		uint32_t f = order[i];
		double share = pct(g.cum[f], g.total);
		/* pprof's scale: 8 points, up to 58 for the largest flat value */
		int fontsize = 8 + (int)(50 * sqrt((double)g.flat[f] / (double)max_flat));
		/* red for a large share, grey for a small one */
		int shade = 255 - (int)(share * 1.5 > 100 ? 150 : share * 1.5);
		strbuf_addf(out, "N%zu [label=\"", i + 1);
		quoted(out, profile__name(p, f));
		strbuf_addf(out, "\\n%llu (%.2f%%)\\nof %llu (%.2f%%)\" id=\"node%zu\" fontsize=%d "
			    "shape=box tooltip=\"", (unsigned long long)g.flat[f],
			    pct(g.flat[f], g.total), (unsigned long long)g.cum[f], share, i + 1,
			    fontsize);
		quoted(out, profile__name(p, f));
		strbuf_addf(out, " (%llu %s)\" color=\"#b2%02x%02x\" fillcolor=\"#ed%02x%02x\"]\n",
			    (unsigned long long)g.cum[f], unit, shade / 2, shade / 2, shade, shade);
	}
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t klen;
	void *v;
	while (hashmap__next(g.edges, &it, &key, &klen, &v)) {
		struct edge *e = v;
		if (node[e->from] > 0 && node[e->to] > 0 && e->from != e->to)
			strbuf_addf(out, "N%d -> N%d [label=\" %llu\" weight=%d penwidth=%.2f]\n",
				    node[e->from], node[e->to], (unsigned long long)e->weight,
				    1 + (int)(100 * pct(e->weight, g.total) / 100),
				    1 + 5 * pct(e->weight, g.total) / 100);
	}
	strbuf_addstr(out, "}\n");
	it = (struct hashmap_iter)HASHMAP_ITER_INIT;
	while (hashmap__next(g.edges, &it, &key, &klen, &v))
		free(v);
	hashmap__free(g.edges);
	free(g.flat);
	free(g.cum);
	free(g.stamp);
	free(order);
	free(node);
}
