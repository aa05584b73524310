/* The Connect querier's selections (see query_connect.c): SelectMergeStacktraces,
 * SelectMergeProfile and SelectSeries. */
#include "server/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/dot.h"
#include "format/pprof.h"
#include "profile.pb-c.h"	/* perftools.profiles.Profile is google.v1.Profile */
#include "profile/ptype.h"
#include "querier.pb-c.h"
#include "server/connect.h"
#include "server/flamebearer.h"
#include "server/pyrotree.h"
#include "server/selector.h"
#include "server/targets.h"

#define DEFAULT_MAX_NODES 8192
#define MAX_MAX_NODES 1048576
/* A SelectSeries group_by makes at most this many series. */
#define MAX_GROUPS 1000

/* What every select starts with: a profile type (required), the range in seconds and the
 * targets of the selector. Returns 0, or a negative errno with a Connect error set. */
int query__select_typed(struct request *r, struct response *resp, const char *type_id,
			const char *selector, int64_t start, int64_t end, struct store_query *q,
			struct targets *t, int64_t *from, int64_t *until)
{
	if (!*type_id) {
		connect__error(resp, "invalid_argument", "missing profile_typeID");
		return -EINVAL;
	}
	if (connect__range_ms(resp, start, end, false, from, until))
		return -EINVAL;
	return targets__select(r, resp, selector, type_id, *from, q, t);
}

/* Adds the merged stacks of every target to out. Returns 0, or a negative errno with a
 * Connect error set. */
static int merged_profile(struct request *r, struct response *resp, const struct store_query *q,
			  const struct targets *t, int64_t from, int64_t until, struct profile *out)
{
	char err[256];
	int ret = 0;

	for (size_t i = 0; i < t->n && !ret; i++) {
		struct store_query tq = target__query(q, &t->v[i]);
		server__read_lock(r->srv);
		ret = store__select(r->srv->store, &tq, from, until, out, err, sizeof(err));
		server__read_unlock(r->srv);
	}
	if (ret)
		connect__error(resp, "internal", "%s", err);
	return ret;
}

int query__merged_tree(struct request *r, struct response *resp, const struct store_query *q,
		       const struct targets *t, int64_t from, int64_t until,
		       struct store_tree *tree, struct profile *scratch)
{
	char err[256];
	int ret;

	if (t->n != 1) {
		ret = merged_profile(r, resp, q, t, from, until, scratch);
		if (!ret)
			pyrotree__from_profile(scratch, tree);
		return ret;
	}
	struct store_query tq = target__query(q, &t->v[0]);
	server__read_lock(r->srv);
	ret = store__select_tree(r->srv->store, &tq, from, until, tree, err, sizeof(err));
	server__read_unlock(r->srv);
	if (ret)
		connect__error(resp, "internal", "%s", err);
	return ret;
}

Querier__V1__FlameGraph *query__flamegraph(json_t *fb)
{
	Querier__V1__FlameGraph *g = xmalloc(sizeof(*g));
	json_t *names = json_object_get(fb, "names"), *levels = json_object_get(fb, "levels");

	querier__v1__flame_graph__init(g);
	g->n_names = json_array_size(names);
	g->names = xcalloc(g->n_names + 1, sizeof(*g->names));
	for (size_t i = 0; i < g->n_names; i++)
		g->names[i] = (char *)json_string_value(json_array_get(names, i));
	g->n_levels = json_array_size(levels);
	g->levels = xcalloc(g->n_levels + 1, sizeof(*g->levels));
	for (size_t i = 0; i < g->n_levels; i++) {
		json_t *row = json_array_get(levels, i);
		Querier__V1__Level *l = xmalloc(sizeof(*l));
		querier__v1__level__init(l);
		l->n_values = json_array_size(row);
		l->values = xcalloc(l->n_values + 1, sizeof(*l->values));
		for (size_t k = 0; k < l->n_values; k++)
			l->values[k] = json_integer_value(json_array_get(row, k));
		g->levels[i] = l;
	}
	g->total = json_integer_value(json_object_get(fb, "numTicks"));
	g->max_self = json_integer_value(json_object_get(fb, "maxSelf"));
	return g;
}

void query__free_flamegraph(Querier__V1__FlameGraph *g)
{
	for (size_t i = 0; i < g->n_levels; i++) {
		free(g->levels[i]->values);
		free(g->levels[i]);
	}
	free(g->levels);
	free(g->names);
	free(g);
}

size_t query__max_nodes(int64_t v)
{
	return v <= 0 ? DEFAULT_MAX_NODES : v > MAX_MAX_NODES ? MAX_MAX_NODES : (size_t)v;
}

/* What a stacktraces answer holds, in the format asked for, with what it owns. */
struct stacktraces {
	Querier__V1__FlameGraph *flamegraph;
	ProtobufCBinaryData tree;
	Querier__V1__PprofProfile *pprof;
	char *dot;		/* PROFILE_FORMAT_DOT: in bytes */
	json_t *fb;
	struct strbuf bytes;
	struct store_tree st;
	struct profile *p;
};

static void stacktraces_release(struct stacktraces *s)
{
	if (s->flamegraph)
		query__free_flamegraph(s->flamegraph);
	if (s->pprof) {
		if (s->pprof->profile)
			perftools__profiles__profile__free_unpacked(s->pprof->profile, NULL);
		free(s->pprof);
	}
	json_decref(s->fb);
	strbuf_release(&s->bytes);
	store_tree_release(&s->st);
	profile__free(s->p);
}

/* The merged stacks of a selection in format: a flamegraph (the default), Pyroscope's
 * tree bytes (binary requests only: JSON carries no bytes here) or a pprof Profile.
 * Returns 0, or a negative errno with a Connect error set. */
static int stacktraces(struct request *r, struct response *resp, const char *type_id,
		       const char *selector, int64_t start, int64_t end, int64_t max_nodes,
		       int format, struct stacktraces *out)
{
	const char *ctype = req__header(r, "Content-Type");
	struct store_query q;
	struct targets t = { 0 };
	int64_t from, until;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	out->bytes = (struct strbuf)STRBUF_INIT;
	store_tree_init(&out->st);
	out->p = profile__new();
	store_query_init(&q);
	if ((format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_TREE && ctype &&
	     !strncmp(ctype, "application/json", 16)) ||
	    format < 0 || format > QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_PPROF) {
		connect__error(resp, "unimplemented", "format %d is not served%s: ask for "
			       "PROFILE_FORMAT_FLAMEGRAPH, PROFILE_FORMAT_PPROF, PROFILE_FORMAT_DOT, or PROFILE_FORMAT_TREE "
			       "over application/proto", format,
			       format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_TREE ? " in JSON" : "");
		goto out;
	}
	if ((ret = query__select_typed(r, resp, type_id, selector, start, end, &q, &t, &from, &until)))
		goto out;
	if (format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_DOT) {
		struct profile_type pt = { 0 };
		if ((ret = merged_profile(r, resp, &q, &t, from, until, out->p)))
			goto out;
		if (profile__nr_types(out->p))
			pt = profile__type(out->p, 0);
		dot__write(&out->bytes, out->p, type_id, pt.unit ? pt.unit : "samples",
			   max_nodes > 0 ? (size_t)max_nodes : 0);
		out->dot = out->bytes.buf;
		goto out;
	}
	if (format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_PPROF) {
		if ((ret = merged_profile(r, resp, &q, &t, from, until, out->p)))
			goto out;
		if (!profile__nr_stacks(out->p))
			ptype__apply(out->p, type_id);
		out->pprof = xmalloc(sizeof(*out->pprof));
		querier__v1__pprof_profile__init(out->pprof);
		if (pprof__write_raw(&out->bytes, out->p) ||
		    !(out->pprof->profile = perftools__profiles__profile__unpack(
			      NULL, out->bytes.len, (const uint8_t *)out->bytes.buf))) {
			connect__error(resp, "internal", "failed to encode the profile");
			ret = -EIO;
		}
		goto out;
	}
	if ((ret = query__merged_tree(r, resp, &q, &t, from, until, &out->st, out->p)))
		goto out;
	if (format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_TREE) {
		pyrotree__write(&out->bytes, &out->st, query__max_nodes(max_nodes));
		out->tree.data = (uint8_t *)out->bytes.buf;
		out->tree.len = out->bytes.len;
	} else {
		out->fb = flamebearer__build_trees(&out->st, NULL, query__max_nodes(max_nodes), NULL,
						   NULL);
		out->flamegraph = query__flamegraph(out->fb);
	}
out:
	targets__release(&t);
	store_query_release(&q);
	return ret;
}

void query__connect_select_merge_stacktraces(struct request *r, struct response *resp)
{
	Querier__V1__SelectMergeStacktracesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__select_merge_stacktraces_request__descriptor);
	Querier__V1__SelectMergeStacktracesResponse ans =
		QUERIER__V1__SELECT_MERGE_STACKTRACES_RESPONSE__INIT;
	struct stacktraces st;

	if (!req)
		return;
	if (!stacktraces(r, resp, req->profile_typeid, req->label_selector, req->start, req->end,
			 req->max_nodes, req->format, &st)) {
		ans.flamegraph = st.flamegraph;
		ans.tree = st.tree;
		ans.pprof = st.pprof;
		if (st.dot)
			ans.dot = st.dot;
		connect__reply(r, resp, &ans.base);
	}
	stacktraces_release(&st);
	protobuf_c_message_free_unpacked(&req->base, NULL);
}

void query__connect_select_merge_profile(struct request *r, struct response *resp)
{
	Querier__V1__SelectMergeProfileRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__select_merge_profile_request__descriptor);
	struct store_query q;
	struct targets t = { 0 };
	struct profile *p = profile__new();
	struct strbuf pb = STRBUF_INIT;
	int64_t from, until;

	store_query_init(&q);
	if (!req)
		goto out;
	if (query__select_typed(r, resp, req->profile_typeid, req->label_selector, req->start, req->end,
			 &q, &t, &from, &until) ||
	    merged_profile(r, resp, &q, &t, from, until, p))
		goto out;
	if (!profile__nr_stacks(p))
		ptype__apply(p, req->profile_typeid);	/* an empty profile still says its type */
	if (pprof__write_raw(&pb, p)) {
		connect__error(resp, "internal", "failed to encode the profile");
		goto out;
	}
	connect__reply_packed(r, resp, &perftools__profiles__profile__descriptor, pb.buf, pb.len);
out:
	strbuf_release(&pb);
	profile__free(p);
	targets__release(&t);
	store_query_release(&q);
	if (req)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* One SelectSeries answer line: its group's label values and totals per output step. */
struct group {
	struct labels l;
	uint64_t *v;
	uint64_t total;
};

struct grouping {
	struct group *g;
	size_t n;
	int64_t start, step;	/* of every group's v */
	size_t points;
	bool truncated;
};

static struct group *group_of(struct grouping *gs, const struct labels *key)
{
	struct labels l;

	labels_init(&l);
	for (size_t k = 0; k < key->n; k++)
		labels__set(&l, key->v[k].name, key->v[k].value);
	labels__sort(&l);
	for (size_t i = 0; i < gs->n; i++) {
		bool same = gs->g[i].l.n == l.n;
		for (size_t k = 0; same && k < l.n; k++)
			same = !strcmp(gs->g[i].l.v[k].value, l.v[k].value) &&
			       !strcmp(gs->g[i].l.v[k].name, l.v[k].name);
		if (same) {
			labels_release(&l);
			return &gs->g[i];
		}
	}
	if (gs->n >= MAX_GROUPS) {
		gs->truncated = true;
		labels_release(&l);
		return NULL;
	}
	gs->g = xrealloc(gs->g, (gs->n + 1) * sizeof(*gs->g));
	struct group *g = &gs->g[gs->n++];
	g->l = l;
	g->v = xcalloc(gs->points + 1, sizeof(*g->v));
	g->total = 0;
	return g;
}

/* Adds the store's series of tq (with the group's labels as extra '=' matchers) to its
 * group. */
static int add_series(struct server *srv, const struct store_query *tq, const struct labels *key,
		      const struct labels *extra, int64_t from, int64_t until,
		      struct grouping *gs, char *err, size_t errlen)
{
	struct store_query q = *tq;
	struct store_series ts = { 0 };
	struct group *g;
	int ret;

	q.m = xcalloc(tq->n + extra->n + 1, sizeof(*q.m));
	if (tq->n)	/* tq->m is NULL without matchers (found by fuzz_ingest) */
		memcpy(q.m, tq->m, tq->n * sizeof(*q.m));
	for (size_t i = 0; i < extra->n; i++)
		q.m[q.n++] = (struct matcher){ .name = extra->v[i].name, .value = extra->v[i].value,
					       .op = MATCH_EQ };
	server__read_lock(srv);
	ret = store__series(srv->store, &q, from, until, &ts, err, errlen);
	server__read_unlock(srv);
	free(q.m);
	uint64_t sum = 0;
	for (size_t i = 0; i < ts.n; i++)
		sum += ts.samples[i];
	if (ret || !sum || !(g = group_of(gs, key))) {	/* groups with no samples: none */
		free(ts.samples);
		return ret;
	}
	for (size_t i = 0; i < ts.n; i++) {
		int64_t t = ts.start + (int64_t)i * ts.step;
		if (!ts.samples[i] || t < gs->start)
			continue;
		size_t at = (size_t)((t - gs->start) / gs->step);
		if (at < gs->points) {
			g->v[at] += ts.samples[i];
			g->total += ts.samples[i];
		}
	}
	free(ts.samples);
	return 0;
}

/* Walks the combinations of group_by's values for one target, depth-first: labels named
 * by the target are fixed, others take each value the store has for them. */
static int walk_groups(struct server *srv, const struct store_query *tq, const struct target *t,
		       char **by, size_t nby, size_t depth, struct labels *key,
		       struct labels *extra, int64_t from, int64_t until, struct grouping *gs,
		       char *err, size_t errlen)
{
	char **v = NULL;
	size_t n = 0;
	int ret = 0;

	if (depth == nby)
		return add_series(srv, tq, key, extra, from, until, gs, err, errlen);
	if (targets__is_label(by[depth])) {
		struct labels tl;
		target__labels(t, &tl);
		labels__set(key, by[depth], labels__get(&tl, by[depth]));
		labels_release(&tl);
		return walk_groups(srv, tq, t, by, nby, depth + 1, key, extra, from, until, gs,
				   err, errlen);
	}
	server__read_lock(srv);
	ret = store__label_values(srv->store, tq, by[depth], from, until, &v, &n, err, errlen);
	server__read_unlock(srv);
	if (!ret) {	/* and the series without the label: Pyroscope groups them too */
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xstrdup("");
	}
	for (size_t i = 0; i < n && !ret && !gs->truncated; i++) {
		struct labels k2, e2;
		labels_init(&k2);
		labels_init(&e2);
		for (size_t j = 0; j < key->n; j++)
			labels__set(&k2, key->v[j].name, key->v[j].value);
		for (size_t j = 0; j < extra->n; j++)
			labels__set(&e2, extra->v[j].name, extra->v[j].value);
		if (*v[i])	/* an empty value is no label, as Pyroscope answers it */
			labels__set(&k2, by[depth], v[i]);
		labels__set(&e2, by[depth], v[i]);
		ret = walk_groups(srv, tq, t, by, nby, depth + 1, &k2, &e2, from, until, gs, err,
				  errlen);
		labels_release(&k2);
		labels_release(&e2);
	}
	store__free_strings(v, n);
	return ret;
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/* SelectSeries: totals per step (at least the store's, the request's step rounded up to
 * a multiple of it), one series per group_by combination, sums (an average aggregation
 * is answered as sums too), the `limit` largest first when set. */
void query__connect_select_series(struct request *r, struct response *resp)
{
	Querier__V1__SelectSeriesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__select_series_request__descriptor);
	Querier__V1__SelectSeriesResponse ans = QUERIER__V1__SELECT_SERIES_RESPONSE__INIT;
	struct grouping gs = { 0 };
	struct store_query q;
	struct targets t = { 0 };
	int64_t from, until;
	char err[256];
	int ret = 0;

	store_query_init(&q);
	if (!req)
		goto out;
	if (query__select_typed(r, resp, req->profile_typeid, req->label_selector, req->start, req->end,
			 &q, &t, &from, &until))
		goto out;
	for (size_t i = 0; i < req->n_group_by; i++) {
		if (!selector__valid_label_name(req->group_by[i])) {
			connect__error(resp, "invalid_argument", "invalid group_by label '%.64s'",
				       req->group_by[i]);
			goto out;
		}
	}
	/* the output step: the store's for this range, or the request's rounded up to it */
	{
		struct store_series probe = { 0 };
		if (t.n) {
			struct store_query pq = target__query(&q, &t.v[0]);
			server__read_lock(r->srv);
			ret = store__series(r->srv->store, &pq, from, until, &probe, err,
					    sizeof(err));
			server__read_unlock(r->srv);
		}
		free(probe.samples);
		int64_t step = probe.step > 0 ? probe.step : store__resolution(r->srv->store);
		if (req->step > step && req->step < 366.0 * 86400)
			step *= (int64_t)((req->step + (double)step - 1) / (double)step);
		gs.step = step;
		gs.start = from - from % step;
		gs.points = (size_t)((until - gs.start + step - 1) / step);
	}
	for (size_t i = 0; i < t.n && !ret && !gs.truncated; i++) {
		struct store_query tq = target__query(&q, &t.v[i]);
		struct labels key, extra;
		labels_init(&key);
		labels_init(&extra);
		ret = walk_groups(r->srv, &tq, &t.v[i], req->group_by, req->n_group_by, 0, &key,
				  &extra, from, until, &gs, err, sizeof(err));
		labels_release(&key);
		labels_release(&extra);
	}
	if (ret) {
		connect__error(resp, "internal", "%s", err);
		goto out;
	}
	if (gs.truncated) {
		connect__error(resp, "resource_exhausted", "group_by makes more than %d series: "
			       "narrow the selector or group by fewer labels", MAX_GROUPS);
		goto out;
	}
	if (gs.n)	/* qsort(NULL, 0) is undefined (found by fuzz_ingest) */
		qsort(gs.g, gs.n, sizeof(*gs.g), group_cmp);
	size_t nout = req->limit > 0 && (size_t)req->limit < gs.n ? (size_t)req->limit : gs.n;
	Querier__V1__Series *series = xcalloc(nout + 1, sizeof(*series));
	Querier__V1__Series **seriesp = xcalloc(nout + 1, sizeof(*seriesp));
	for (size_t i = 0; i < nout; i++) {
		struct group *g = &gs.g[i];
		Querier__V1__Series *s = &series[i];
		querier__v1__series__init(s);
		s->labels = xcalloc(g->l.n + 1, sizeof(*s->labels));
		for (size_t k = 0; k < g->l.n; k++) {
			Querier__V1__LabelPair *lp = xmalloc(sizeof(*lp));
			querier__v1__label_pair__init(lp);
			lp->name = g->l.v[k].name;
			lp->value = g->l.v[k].value;
			s->labels[s->n_labels++] = lp;
		}
		s->points = xcalloc(gs.points + 1, sizeof(*s->points));
		for (size_t k = 0; k < gs.points; k++) {
			if (!g->v[k])
				continue;
			Querier__V1__Point *pt = xmalloc(sizeof(*pt));
			querier__v1__point__init(pt);
			pt->value = (double)g->v[k];
			pt->timestamp = (gs.start + (int64_t)k * gs.step) * 1000;
			s->points[s->n_points++] = pt;
		}
		seriesp[i] = s;
	}
	ans.series = seriesp;
	ans.n_series = nout;
	connect__reply(r, resp, &ans.base);
	for (size_t i = 0; i < nout; i++) {
		for (size_t k = 0; k < series[i].n_labels; k++)
			free(series[i].labels[k]);
		for (size_t k = 0; k < series[i].n_points; k++)
			free(series[i].points[k]);
		free(series[i].labels);
		free(series[i].points);
	}
	free(series);
	free(seriesp);
out:
	for (size_t i = 0; i < gs.n; i++) {
		labels_release(&gs.g[i].l);
		free(gs.g[i].v);
	}
	free(gs.g);
	targets__release(&t);
	store_query_release(&q);
	if (req)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}
