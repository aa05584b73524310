/* SelectMergeSpanProfile: the merged profile of the spans named in span_selector, among
 * the series that label_selector picks. The samples of spans are stored in each
 * service's span companion under a root frame naming the span (ingest_spans.c); this
 * selects the companions of the targets, keeps the stacks whose root names a selected
 * span and drops that root. Answers a flamegraph (the default) or Pyroscope's tree bytes
 * (binary requests only), as SelectMergeStacktraces does. */
#include "server/http.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/ptype.h"
#include "querier.pb-c.h"
#include "server/connect.h"
#include "server/flamebearer.h"
#include "server/pyrotree.h"
#include "server/targets.h"
#include "util/hashmap.h"

/* At most this many span ids in one request (Grafana sends a trace's spans). */
#define MAX_SPANS 10000

/* The span ids of the request, lower case, as hashmap keys. Returns 0, or -EINVAL with a
 * Connect error set. */
static int span_set(struct response *resp, char **ids, size_t n, struct hashmap *set)
{
	char id[80];

	if (!n) {
		connect__error(resp, "invalid_argument", "missing span_selector: name the span ids");
		return -EINVAL;
	}
	if (n > MAX_SPANS) {
		connect__error(resp, "invalid_argument", "span_selector names %zu spans: at most %d",
			       n, MAX_SPANS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(ids[i]);
		if (!len || len >= sizeof(id)) {
			connect__error(resp, "invalid_argument", "span id %zu is empty or too long", i);
			return -EINVAL;
		}
		for (size_t k = 0; k <= len; k++)
			id[k] = (char)tolower((unsigned char)ids[i][k]);
		bool created;
		hashmap__insert(set, id, len, &created);
	}
	return 0;
}

/* Adds to out the stacks of sp whose root frame names a span of set, without that root. */
static void take_spans(struct profile *out, const struct profile *sp, const struct hashmap *set)
{
	size_t ns = profile__nr_stacks(sp), skip = strlen(INGEST_SPAN_FRAME);
	struct profile *pick = profile__new();
	char id[80];

	for (size_t i = 0; i < ns; i++) {
		struct profile_stack st = profile__stack(sp, i);
		if (st.depth < 2)
			continue;
		const char *root = profile__name(sp, st.frames[0]);
		size_t len = strlen(root);
		if (len <= skip || len - skip >= sizeof(id) || strncmp(root, INGEST_SPAN_FRAME, skip))
			continue;
		for (size_t k = skip; k <= len; k++)
			id[k - skip] = (char)tolower((unsigned char)root[k]);
		if (!hashmap__find(set, id, len - skip))
			continue;
		if (!profile__nr_stacks(pick)) {
			size_t nt = profile__nr_types(sp);
			struct profile_type *t = xcalloc(nt + 1, sizeof(*t));
			for (size_t k = 0; k < nt; k++)
				t[k] = profile__type(sp, k);
			if (nt)
				profile__set_types(pick, t, nt);
			free(t);
		}
		uint32_t *f = xmalloc((st.depth - 1) * sizeof(*f));
		for (uint32_t k = 1; k < st.depth; k++)
			f[k - 1] = profile__intern_str(pick, profile__name(sp, st.frames[k]));
		profile__add_values(pick, f, st.depth - 1, 0, st.values);
		free(f);
	}
	if (profile__nr_stacks(pick))
		profile__merge(out, pick);
	profile__free(pick);
}

/* The span stacks of every target (their companions), merged into out. Returns 0, or a
 * negative errno with a Connect error set. */
static int span_profile(struct request *r, struct response *resp, const struct store_query *q,
			const struct targets *t, int64_t from, int64_t until,
			const struct hashmap *set, struct profile *out)
{
	char err[256];
	int ret = 0;

	for (size_t i = 0; i < t->n && !ret; i++) {
		struct store_query tq = target__query(q, &t->v[i]);
		char *companion = ingest__span_service(t->v[i].service);
		struct profile *sp = profile__new();
		tq.service = companion;
		server__read_lock(r->srv);
		ret = store__select(r->srv->store, &tq, from, until, sp, err, sizeof(err));
		server__read_unlock(r->srv);
		if (ret == -ENOENT)	/* a service without spans */
			ret = 0;
		else if (!ret)
			take_spans(out, sp, set);
		profile__free(sp);
		free(companion);
	}
	if (ret)
		connect__error(resp, ret == -ETIMEDOUT ? "deadline_exceeded" : "internal", "%s", err);
	return ret;
}

void query__connect_select_merge_span_profile(struct request *r, struct response *resp)
{
	Querier__V1__SelectMergeSpanProfileRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__select_merge_span_profile_request__descriptor);
	Querier__V1__SelectMergeSpanProfileResponse ans =
		QUERIER__V1__SELECT_MERGE_SPAN_PROFILE_RESPONSE__INIT;
	const char *ctype = req__header(r, "Content-Type");
	struct hashmap *set = hashmap__new();
	struct profile *p = profile__new();
	struct store_query q;
	struct targets t = { 0 };
	struct store_tree tree;
	struct strbuf bytes = STRBUF_INIT;
	json_t *fb = NULL;
	int64_t from, until;

	store_query_init(&q);
	store_tree_init(&tree);
	if (!req)
		goto out;
	int format = req->format;
	bool json = ctype && !strncmp(ctype, "application/json", 16);
	if (format != QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_UNSPECIFIED &&
	    format != QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH &&
	    (format != QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_TREE || json)) {
		connect__error(resp, "unimplemented", "format %d is not served for spans: ask for "
			       "PROFILE_FORMAT_FLAMEGRAPH, or PROFILE_FORMAT_TREE over "
			       "application/proto", format);
		goto out;
	}
	if (span_set(resp, req->span_selector, req->n_span_selector, set) ||
	    query__select_typed(r, resp, req->profile_typeid, req->label_selector, req->start,
				req->end, &q, &t, &from, &until) ||
	    span_profile(r, resp, &q, &t, from, until, set, p))
		goto out;
	if (!profile__nr_stacks(p))
		ptype__apply(p, req->profile_typeid);
	pyrotree__from_profile(p, &tree);
	if (format == QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_TREE) {
		pyrotree__write(&bytes, &tree, query__max_nodes(req->max_nodes));
		ans.tree.data = (uint8_t *)bytes.buf;
		ans.tree.len = bytes.len;
	} else {
		fb = flamebearer__build_trees(&tree, NULL, query__max_nodes(req->max_nodes), NULL,
					      NULL);
		ans.flamegraph = query__flamegraph(fb);
	}
	connect__reply(r, resp, &ans.base);
out:
	if (ans.flamegraph)
		query__free_flamegraph(ans.flamegraph);
	json_decref(fb);
	strbuf_release(&bytes);
	store_tree_release(&tree);
	targets__release(&t);
	store_query_release(&q);
	profile__free(p);
	hashmap__free(set);
	if (req)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}
