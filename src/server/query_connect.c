/* Grafana's Pyroscope datasource: the Connect querier API (POST
 * /querier.v1.QuerierService/<Method>, messages in src/format/querier.proto, encodings in
 * server/connect.h) over the store, with Pyroscope's series names (server/targets.h).
 * Times are milliseconds; the store answers at its resolution, ranges rounded outwards. */
#include "server/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/ptype.h"
#include "querier.pb-c.h"
#include "server/connect.h"
#include "server/selector.h"
#include "server/targets.h"
#include "util/log.h"


static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts v and drops repeats; returns the new count. */
static size_t sort_unique(char **v, size_t n)
{
	size_t w = 0;

	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (w && !strcmp(v[w - 1], v[i]))
			free(v[i]);
		else
			v[w++] = v[i];
	}
	return w;
}

struct strings {
	char **v;
	size_t n, alloc;
};

static void strings_add(struct strings *s, const char *str)
{
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 16;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	s->v[s->n++] = xstrdup(str);
}

static void strings_release(struct strings *s)
{
	store__free_strings(s->v, s->n);
	s->v = NULL;
	s->n = s->alloc = 0;
}

/* Adds label names (name NULL) or the values of name over every target to out. */
static int gather_labels(struct server *srv, const struct store_query *q,
			 const struct targets *t, const char *name, int64_t from, int64_t until,
			 struct strings *out, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; i < t->n && !ret; i++) {
		struct store_query tq = target__query(q, &t->v[i]);
		char **v = NULL;
		size_t n = 0;
		if (name && targets__is_label(name)) {
			struct labels l;
			target__labels(&t->v[i], &l);
			strings_add(out, labels__get(&l, name));
			labels_release(&l);
			continue;
		}
		server__read_lock(srv);
		ret = name ? store__label_values(srv->store, &tq, name, from, until, &v, &n, err, errlen)
			   : store__label_names(srv->store, &tq, from, until, &v, &n, err, errlen);
		server__read_unlock(srv);
		for (size_t k = 0; k < n; k++)
			strings_add(out, v[k]);
		store__free_strings(v, n);
	}
	if (!name && t->n) {
		strings_add(out, "service_name");
		strings_add(out, "__profile_type__");
		strings_add(out, "__name__");
	}
	return ret;
}

/* LabelNames and LabelValues: the union over every selector given (none: all), sorted,
 * in out. Returns 0, or a negative errno with a Connect error set. */
static int label_query(struct request *r, struct response *resp, const char *name,
		       char **matchers, size_t nmatchers, int64_t start, int64_t end,
		       struct strings *out)
{
	int64_t from, until;
	char err[256];
	int ret = connect__range_ms(resp, start, end, true, &from, &until);

	for (size_t i = 0; i < (nmatchers ? nmatchers : 1) && !ret; i++) {
		struct store_query q;
		struct targets t = { 0 };
		store_query_init(&q);
		ret = targets__select(r, resp, nmatchers ? matchers[i] : "", NULL, 0, &q, &t);
		if (!ret && (ret = gather_labels(r->srv, &q, &t, name, from, until, out, err,
						 sizeof(err))))
			connect__error(resp, "internal", "%s", err);
		targets__release(&t);
		store_query_release(&q);
	}
	out->n = sort_unique(out->v, out->n);
	return ret;
}

void query__connect_label_names(struct request *r, struct response *resp)
{
	Querier__V1__LabelNamesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__label_names_request__descriptor);
	Querier__V1__LabelNamesResponse ans = QUERIER__V1__LABEL_NAMES_RESPONSE__INIT;
	struct strings names = { 0 };

	if (!req)
		return;
	if (!label_query(r, resp, NULL, req->matchers, req->n_matchers, req->start, req->end,
			 &names)) {
		ans.names = names.v;
		ans.n_names = names.n;
		connect__reply(r, resp, &ans.base);
	}
	strings_release(&names);
	protobuf_c_message_free_unpacked(&req->base, NULL);
}

void query__connect_label_values(struct request *r, struct response *resp)
{
	Querier__V1__LabelValuesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__label_values_request__descriptor);
	Querier__V1__LabelValuesResponse ans = QUERIER__V1__LABEL_VALUES_RESPONSE__INIT;
	struct strings values = { 0 };

	if (!req)
		return;
	if (!selector__valid_label_name(req->name)) {
		connect__error(resp, "invalid_argument", "invalid label name '%.64s'", req->name);
	} else if (!label_query(r, resp, req->name, req->matchers, req->n_matchers, req->start,
				req->end, &values)) {
		ans.names = values.v;
		ans.n_names = values.n;
		connect__reply(r, resp, &ans.base);
	}
	strings_release(&values);
	protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Splits a valid profile type id into its five parts, each malloc'd. */
static void split_type(const char *id, char *part[5])
{
	const char *p = id;

	for (int i = 0; i < 5; i++) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		part[i] = xstrndup(p, n);
		p = e ? e + 1 : p + n;
	}
}

void query__connect_profile_types(struct request *r, struct response *resp)
{
	Querier__V1__ProfileTypesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__profile_types_request__descriptor);
	Querier__V1__ProfileTypesResponse ans = QUERIER__V1__PROFILE_TYPES_RESPONSE__INIT;
	struct strings ids = { 0 };
	struct store_query q, pick;
	struct targets t = { 0 };
	int64_t from, until;
	char err[256];

	if (!req)
		return;
	store_query_init(&q);
	store_query_init(&pick);
	if (connect__range_ms(resp, req->start, req->end, true, &from, &until))
		goto out;
	if (targets__find(r, &pick, NULL, from, &t, err, sizeof(err))) {
		connect__error(resp, "internal", "%s", err);
		goto out;
	}
	for (size_t i = 0; i < t.n; i++)
		strings_add(&ids, t.v[i].type);
	ids.n = sort_unique(ids.v, ids.n);
	Querier__V1__ProfileType *types = xcalloc(ids.n + 1, sizeof(*types));
	Querier__V1__ProfileType **typep = xcalloc(ids.n + 1, sizeof(*typep));
	char *(*parts)[5] = xcalloc(ids.n + 1, sizeof(*parts));
	for (size_t i = 0; i < ids.n; i++) {
		querier__v1__profile_type__init(&types[i]);
		split_type(ids.v[i], parts[i]);
		types[i].id = ids.v[i];
		types[i].name = parts[i][0];
		types[i].sample_type = parts[i][1];
		types[i].sample_unit = parts[i][2];
		types[i].period_type = parts[i][3];
		types[i].period_unit = parts[i][4];
		typep[i] = &types[i];
	}
	ans.profile_types = typep;
	ans.n_profile_types = ids.n;
	connect__reply(r, resp, &ans.base);
	for (size_t i = 0; i < ids.n; i++)
		for (int k = 0; k < 5; k++)
			free(parts[i][k]);
	free(parts);
	free(types);
	free(typep);
out:
	strings_release(&ids);
	targets__release(&t);
	store_query_release(&q);
	store_query_release(&pick);
	protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Series: one label set per target (service_name, __profile_type__, __name__), narrowed to
 * label_names when given. The store lists label names and values, not their combinations,
 * so series are told apart by target only. */
void query__connect_series(struct request *r, struct response *resp)
{
	Querier__V1__SeriesRequest *req = (void *)connect__decode(
		r, resp, &querier__v1__series_request__descriptor);
	Querier__V1__SeriesResponse ans = QUERIER__V1__SERIES_RESPONSE__INIT;
	struct targets all = { 0 };
	int64_t from, until;
	int ret = 0;

	if (!req)
		return;
	if (connect__range_ms(resp, req->start, req->end, true, &from, &until))
		goto out;
	for (size_t i = 0; i < (req->n_matchers ? req->n_matchers : 1) && !ret; i++) {
		struct store_query q;
		struct targets t = { 0 };
		store_query_init(&q);
		ret = targets__select(r, resp, req->n_matchers ? req->matchers[i] : "", NULL, from,
				     &q, &t);
		for (size_t k = 0; k < t.n; k++) {
			bool seen = false;
			for (size_t j = 0; j < all.n && !seen; j++)
				seen = !strcmp(all.v[j].service, t.v[k].service);
			if (seen)
				continue;
			all.v = xrealloc(all.v, (all.n + 1) * sizeof(*all.v));
			all.v[all.n++] = t.v[k];
			t.v[k] = (struct target){ xstrdup(""), xstrdup(""), xstrdup("") };
		}
		targets__release(&t);
		store_query_release(&q);
	}
	if (ret)
		goto out;
	Querier__V1__Labels *sets = xcalloc(all.n + 1, sizeof(*sets));
	Querier__V1__Labels **setp = xcalloc(all.n + 1, sizeof(*setp));
	Querier__V1__LabelPair *pairs = xcalloc(3 * all.n + 1, sizeof(*pairs));
	Querier__V1__LabelPair **pairp = xcalloc(3 * all.n + 1, sizeof(*pairp));
	struct labels *ls = xcalloc(all.n + 1, sizeof(*ls));
	size_t np = 0;
	for (size_t i = 0; i < all.n; i++) {
		querier__v1__labels__init(&sets[i]);
		target__labels(&all.v[i], &ls[i]);
		sets[i].labels = &pairp[np];
		for (size_t k = 0; k < ls[i].n; k++) {
			bool wanted = !req->n_label_names;
			for (size_t j = 0; j < req->n_label_names && !wanted; j++)
				wanted = !strcmp(req->label_names[j], ls[i].v[k].name);
			if (!wanted)
				continue;
			querier__v1__label_pair__init(&pairs[np]);
			pairs[np].name = ls[i].v[k].name;
			pairs[np].value = ls[i].v[k].value;
			pairp[np] = &pairs[np];
			np++;
			sets[i].n_labels++;
		}
		setp[i] = &sets[i];
	}
	ans.labels_set = setp;
	ans.n_labels_set = all.n;
	connect__reply(r, resp, &ans.base);
	for (size_t i = 0; i < all.n; i++)
		labels_release(&ls[i]);
	free(ls), free(sets), free(setp), free(pairs), free(pairp);
out:
	targets__release(&all);
	protobuf_c_message_free_unpacked(&req->base, NULL);
}
