/* Series of a pushed profile: its stacks' labels beside the push's own. */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>

#include "server/selector.h"

/* Labels that name one request, one span, one trace or one process run (the Go SDK's
 * __session_id__): kept off series, which would otherwise grow by one per span or per
 * restart (span profiles are their own matter). */
static bool per_request(const char *key)
{
	return !strcmp(key, "span_id") || !strcmp(key, "span_name") || !strcmp(key, "profile_id") ||
	       !strcmp(key, "__session_id__") ||
	       !strcmp(key, "trace_id") || !strcmp(key, "pyroscope.profile.id");
}

static bool labels_equal(const struct labels *a, const struct labels *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].name, b->v[i].name) || strcmp(a->v[i].value, b->v[i].value))
			return false;
	return true;
}

int ingest__series(const struct profile *p, const struct labels *base, struct labels **out,
		   size_t *n, uint32_t **stack_series)
{
	size_t nsets = profile__nr_labelsets(p), ns = profile__nr_stacks(p), nseries = 0;
	uint32_t *of_set = xmalloc((nsets + 1) * sizeof(*of_set));
	struct labels *series = xcalloc(nsets + 1, sizeof(*series));

	*stack_series = xcalloc(ns + 1, sizeof(**stack_series));
	memset(of_set, 0xff, (nsets + 1) * sizeof(*of_set));
	for (size_t i = 0; i < ns; i++) {
		uint32_t set = profile__stack(p, i).labels;
		if (set >= nsets)
			set = 0;
		if (of_set[set] == UINT32_MAX) {
			size_t nl;
			const struct profile_label *l = profile__labels(p, set, &nl);
			struct labels *s = &series[nseries];
			labels_init(s);
			for (size_t k = 0; base && k < base->n; k++)
				if (!per_request(base->v[k].name))
					labels__set(s, base->v[k].name, base->v[k].value);
			for (size_t k = 0; k < nl; k++)	/* the push's own labels win */
				if (*l[k].value && !per_request(l[k].key) &&
				    selector__valid_label_name(l[k].key) && !labels__get(s, l[k].key))
					labels__set(s, l[k].key, l[k].value);
			labels__sort(s);
			/* two label sets may differ only in labels left out: one series */
			size_t same = 0;
			while (same < nseries && !labels_equal(&series[same], s))
				same++;
			if (same < nseries)
				labels_release(s);
			else
				nseries++;
			of_set[set] = (uint32_t)same;
		}
		(*stack_series)[i] = of_set[set];
	}
	if (!nseries) {
		labels_init(&series[0]);
		for (size_t k = 0; base && k < base->n; k++)
			if (!per_request(base->v[k].name))
				labels__set(&series[0], base->v[k].name, base->v[k].value);
		labels__sort(&series[0]);
		nseries = 1;
	}
	free(of_set);
	*out = series;
	*n = nseries;
	return 0;
}

void ingest__free_series_labels(struct labels *v, size_t n, uint32_t *stack_series)
{
	for (size_t i = 0; i < n; i++)
		labels_release(&v[i]);
	free(v);
	free(stack_series);
}
