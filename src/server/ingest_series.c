/* Series of a pushed profile: its stacks' labels beside the push's own. */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>

#include "server/selector.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* Labels that name one request, one span, one trace or one process run (the Go SDK's
 * __session_id__): kept off series, which would otherwise grow by one per span or per
 * restart (span profiles are their own matter). */
static bool per_request(const char *key)
{
	return !strcmp(key, "span_id") || !strcmp(key, "span_name") || !strcmp(key, "profile_id") ||
	       !strcmp(key, "__session_id__") ||
	       !strcmp(key, "trace_id") || !strcmp(key, "pyroscope.profile.id");
}

/* A sorted label set as one string, to find equal sets by hashing (comparing each new
 * set with every earlier one was quadratic in the label sets of a push). */
static void labels_key(struct strbuf *k, const struct labels *l)
{
	strbuf_reset(k);
	for (size_t i = 0; i < l->n; i++) {
		strbuf_addstr(k, l->v[i].name);
		strbuf_addch(k, '\0');
		strbuf_addstr(k, l->v[i].value);
		strbuf_addch(k, '\0');
	}
}

int ingest__series(const struct profile *p, const struct labels *base, struct labels **out,
		   size_t *n, uint32_t **stack_series)
{
	size_t nsets = profile__nr_labelsets(p), ns = profile__nr_stacks(p), nseries = 0;
	uint32_t *of_set = xmalloc((nsets + 1) * sizeof(*of_set));
	struct labels *series = xcalloc(nsets + 1, sizeof(*series));
	struct hashmap *seen = hashmap__new();	/* labels_key -> series index + 1 */
	struct strbuf key = STRBUF_INIT;

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
			/* the push's own labels win; past the limit of a series' labels
			 * (which ingest__store then refuses) no more are gathered: labels__set
			 * is linear, so gathering them all would be quadratic */
			for (size_t k = 0; k < nl && s->n <= INGEST_MAX_LABELS; k++)
				if (*l[k].value && !per_request(l[k].key) &&
				    selector__valid_label_name(l[k].key) && !labels__get(s, l[k].key))
					labels__set(s, l[k].key, l[k].value);
			labels__sort(s);
			/* two label sets may differ only in labels left out: one series */
			bool created;
			labels_key(&key, s);
			void **slot = hashmap__insert(seen, key.buf, key.len, &created);
			size_t same = created ? nseries : (size_t)(uintptr_t)*slot - 1;
			if (created) {
				*slot = (void *)(uintptr_t)(nseries + 1);
				nseries++;
			} else {
				labels_release(s);
			}
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
	hashmap__free(seen);
	strbuf_release(&key);
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
