/* The Pyroscope Java agent's labels snapshot (format/jfr_labels.proto, format/jfr.h): the
 * label pairs of each async-profiler context id, as string ids resolved here once. */
#include "format/jfr.h"
#include "format/jfr_labels_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_labels.pb-c.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

static const char *find_string(struct hashmap *strings, int64_t id)
{
	void **slot = hashmap__find(strings, &id, sizeof(id));

	return slot ? *slot : NULL;
}

static void free_strings(struct hashmap *strings)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (hashmap__next(strings, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(strings);
}

int jfr__parse_labels(const void *data, size_t len, struct jfr_labels **out, char *err,
		      size_t errlen)
{
	Jfr__LabelsSnapshot *s = jfr__labels_snapshot__unpack(NULL, len, data);
	struct hashmap *strings;
	struct jfr_labels *l;

	*out = NULL;
	if (!s) {
		errmsg(err, errlen, "labels part is not a LabelsSnapshot protobuf");
		return -EINVAL;
	}
	strings = hashmap__new();
	for (size_t i = 0; i < s->n_strings; i++) {
		bool created;
		void **slot = hashmap__insert(strings, &s->strings[i]->key, sizeof(int64_t), &created);
		if (!created) {
			errmsg(err, errlen, "labels snapshot has string id %lld twice",
			       (long long)s->strings[i]->key);
			goto fail;
		}
		*slot = xstrndup((const char *)s->strings[i]->value.data, s->strings[i]->value.len);
	}
	l = xcalloc(1, sizeof(*l));
	l->by_context = hashmap__new();
	*out = l;
	for (size_t i = 0; i < s->n_contexts; i++) {
		const Jfr__ContextEntry *e = s->contexts[i];
		size_t n = e->value ? e->value->n_labels : 0;
		bool created;
		void **slot = hashmap__insert(l->by_context, &e->key, sizeof(int64_t), &created);
		if (!created) {
			errmsg(err, errlen, "labels snapshot has context id %lld twice",
			       (long long)e->key);
			goto fail;
		}
		l->contexts = xrealloc(l->contexts, (l->ncontexts + 1) * sizeof(*l->contexts));
		struct jfr_context *ctx = &l->contexts[l->ncontexts++];
		*slot = (void *)(uintptr_t)l->ncontexts;
		ctx->labels = xcalloc(n ? n : 1, sizeof(*ctx->labels));
		ctx->n = 0;
		for (size_t k = 0; k < n; k++) {
			const Jfr__LabelEntry *le = e->value->labels[k];
			const char *name = find_string(strings, le->key);
			const char *value = find_string(strings, le->value);
			if (!name || !value) {
				errmsg(err, errlen, "context %lld refers to string id %lld, which the "
				       "labels snapshot lacks", (long long)e->key,
				       (long long)(name ? le->value : le->key));
				goto fail;
			}
			ctx->labels[ctx->n++] = (struct profile_label){ xstrdup(name), xstrdup(value) };
		}
	}
	l->strings = strings;	/* span names are looked up by id */
	jfr__labels_snapshot__free_unpacked(s, NULL);
	return 0;
fail:
	if (!*out)
		free_strings(strings);
	else
		(*out)->strings = strings;
	jfr__labels_snapshot__free_unpacked(s, NULL);
	jfr__free_labels(*out);
	*out = NULL;
	return -EINVAL;
}

const struct jfr_context *jfr__context(const struct jfr_labels *l, int64_t id)
{
	void **slot = l ? hashmap__find(l->by_context, &id, sizeof(id)) : NULL;

	return slot ? &l->contexts[(uintptr_t)*slot - 1] : NULL;
}

const char *jfr__label_string(const struct jfr_labels *l, int64_t id)
{
	void **slot = l ? hashmap__find(l->strings, &id, sizeof(id)) : NULL;

	return slot ? *slot : NULL;
}

void jfr__free_labels(struct jfr_labels *l)
{
	if (!l)
		return;
	if (l->strings)
		free_strings(l->strings);
	for (size_t i = 0; i < l->ncontexts; i++) {
		for (size_t k = 0; k < l->contexts[i].n; k++) {
			free((char *)l->contexts[i].labels[k].key);
			free((char *)l->contexts[i].labels[k].value);
		}
		free(l->contexts[i].labels);
	}
	free(l->contexts);
	hashmap__free(l->by_context);
	free(l);
}
