/* Diff: two SelectMergeStacktraces selections (left, right) as one diff flamegraph, the
 * "double" flamebearer the render-diff route answers: per node the left and the right
 * offsets, totals and selves, and the ticks of each side. Grafana's Pyroscope datasource
 * calls it for its comparison view. */
#include "server/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "querier.pb-c.h"
#include "server/connect.h"
#include "server/flamebearer.h"
#include "server/targets.h"

/* One side's merged call tree into tree (initialized; its names may point into scratch).
 * Returns 0, or a negative errno with a Connect error set. */
static int side(struct request *r, struct response *resp, const char *which,
		const Querier__V1__SelectMergeStacktracesRequest *s, struct store_tree *tree,
		struct profile *scratch)
{
	struct store_query q;
	struct targets t = { 0 };
	int64_t from, until;
	int ret;

	if (!s) {
		connect__error(resp, "invalid_argument", "missing %s: a SelectMergeStacktracesRequest",
			       which);
		return -EINVAL;
	}
	store_query_init(&q);
	ret = query__select_typed(r, resp, s->profile_typeid, s->label_selector, s->start, s->end,
				  &q, &t, &from, &until);
	if (!ret)
		ret = query__merged_tree(r, resp, &q, &t, from, until, tree, scratch);
	targets__release(&t);
	store_query_release(&q);
	return ret;
}

void query__connect_diff(struct request *r, struct response *resp)
{
	Querier__V1__DiffRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__diff_request__descriptor);
	Querier__V1__DiffResponse ans = QUERIER__V1__DIFF_RESPONSE__INIT;
	Querier__V1__FlameGraphDiff g = QUERIER__V1__FLAME_GRAPH_DIFF__INIT;
	struct profile *scratch[2] = { profile__new(), profile__new() };
	struct store_tree tree[2];
	Querier__V1__FlameGraph *fg = NULL;
	json_t *fb = NULL;
	uint64_t lt = 0, rt = 0;

	store_tree_init(&tree[0]);
	store_tree_init(&tree[1]);
	if (!req || side(r, resp, "left", req->left, &tree[0], scratch[0]) ||
	    side(r, resp, "right", req->right, &tree[1], scratch[1]))
		goto out;
	int64_t max = req->left->max_nodes ? req->left->max_nodes : req->right->max_nodes;
	fb = flamebearer__build_trees(&tree[0], &tree[1], query__max_nodes(max), &lt, &rt);
	fg = query__flamegraph(fb);	/* names and levels: a diff's are 7 values a node */
	g.n_names = fg->n_names;
	g.names = fg->names;
	g.n_levels = fg->n_levels;
	g.levels = fg->levels;
	g.total = fg->total;
	g.max_self = fg->max_self;
	g.leftticks = (int64_t)lt;
	g.rightticks = (int64_t)rt;
	ans.flamegraph = &g;
	connect__reply(r, resp, &ans.base);
out:
	if (fg)
		query__free_flamegraph(fg);
	json_decref(fb);
	for (int i = 0; i < 2; i++) {
		store_tree_release(&tree[i]);
		profile__free(scratch[i]);
	}
	if (req)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}
