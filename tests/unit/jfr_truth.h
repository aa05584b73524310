/* Shared by the JFR reader's tests (test_jfr.c, test_jfr_agent.c): what the JDK's own
 * reader (`jfr print --json`, parsed into truth) and format/jfr.h make of a recording,
 * event kind by event kind, as folded stacks with their labels and values. */
#ifndef KILN_TESTS_JFR_TRUTH_H
#define KILN_TESTS_JFR_TRUTH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "format/jfr.h"
#include "jfr_labels.pb-c.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

static json_t *truth;			/* jfr print --json of the recording at hand */
/* context id -> "k=v,..." of the agent's labels snapshot, read with protobuf-c alone */
static struct hashmap *snapshot;

/* What one event kind holds: folded stack -> value, as sorted text. */
struct tally {
	struct hashmap *stacks;	/* folded stack -> uint64 value (boxed) */
	uint64_t samples, total;
};

static inline void tally_add(struct tally *t, const char *stack, size_t len, uint64_t v)
{
	bool created;
	void **slot = hashmap__insert(t->stacks, stack, len, &created);
	if (created)
		*slot = xcalloc(1, sizeof(uint64_t));
	*(uint64_t *)*slot += v;
	t->total += v;
}

static inline void tally_free(struct tally *t)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (hashmap__next(t->stacks, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(t->stacks);
}

/* The JDK's view of event type name: stacks root first, "class.method" (generated names
 * merged); value field
 * (NULL: 1 per event); CPU samples (ExecutionSample) of sleeping threads left out as
 * Pyroscope does. */
static inline void jdk_tally(struct tally *t, const char *name, const char *field)
{
	json_t *events = json_object_get(json_object_get(truth, "recording"), "events");
	size_t i;
	json_t *e;

	t->stacks = hashmap__new();
	t->samples = t->total = 0;
	json_array_foreach(events, i, e) {
		json_t *v = json_object_get(e, "values");
		if (strcmp(json_string_value(json_object_get(e, "type")), name))
			continue;
		json_t *frames = json_object_get(json_object_get(v, "stackTrace"), "frames");
		const char *state = json_string_value(json_object_get(v, "state"));
		if (!json_array_size(frames) || (state && !strcmp(state, "STATE_SLEEPING") &&
						 !strcmp(name, "jdk.ExecutionSample")))
			continue;
		struct strbuf sb = STRBUF_INIT;
		for (size_t k = json_array_size(frames); k-- > 0;) {
			json_t *m = json_object_get(json_array_get(frames, k), "method");
			const char *cls = json_string_value(json_object_get(json_object_get(m, "type"),
									    "name"));
			const char *meth = json_string_value(json_object_get(m, "name"));
			struct strbuf c = STRBUF_INIT, mn = STRBUF_INIT;
			strbuf_addstr(&c, cls ? cls : "");
			strbuf_addstr(&mn, meth ? meth : "");
			jfr__merge_generated(&c);	/* as Pyroscope names them */
			jfr__merge_generated(&mn);
			if (sb.len)
				strbuf_addch(&sb, ';');
			if (c.len)
				strbuf_addf(&sb, "%s.", c.buf);
			strbuf_addstr(&sb, mn.buf);
			strbuf_release(&c);
			strbuf_release(&mn);
		}
		t->samples++;
		json_int_t ctx = json_integer_value(json_object_get(v, "contextId"));
		void **lab = snapshot && ctx ? hashmap__find(snapshot, &ctx, sizeof(ctx)) : NULL;
		strbuf_addf(&sb, "|%s", lab ? (const char *)*lab : "");
		tally_add(t, sb.buf, sb.len,
			  field ? (uint64_t)json_integer_value(json_object_get(v, field)) : 1);
		strbuf_release(&sb);
	}
}

static inline void our_tally(struct tally *t, const struct profile *p, enum jfr_sample_type type)
{
	t->stacks = hashmap__new();
	t->samples = t->total = 0;
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		struct strbuf sb = STRBUF_INIT;
		if (!s.values[type])
			continue;
		for (uint32_t d = 0; d < s.depth; d++)
			strbuf_addf(&sb, "%s%s", d ? ";" : "", profile__name(p, s.frames[d]));
		size_t nl;
		const struct profile_label *l = profile__labels(p, s.labels, &nl);
		strbuf_addch(&sb, '|');
		for (size_t k = 0; k < nl; k++)
			strbuf_addf(&sb, "%s=%s,", l[k].key, l[k].value);
		tally_add(t, sb.buf, sb.len, s.values[type]);
		strbuf_release(&sb);
	}
}

static inline void same(struct tally *ours, struct tally *jdk, const char *what)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	if (ours->total != jdk->total)
		fail_msg("%s: total %llu, the JDK says %llu", what,
			 (unsigned long long)ours->total, (unsigned long long)jdk->total);
	while (hashmap__next(jdk->stacks, &it, &key, &len, &v)) {
		void **o = hashmap__find(ours->stacks, key, len);
		if (!o || *(uint64_t *)*o != *(uint64_t *)v)
			fail_msg("%s: stack '%.*s' has %llu, the JDK says %llu", what, (int)len,
				 (const char *)key, o ? (unsigned long long)*(uint64_t *)*o : 0ULL,
				 (unsigned long long)*(uint64_t *)v);
	}
	assert_int_equal(hashmap__count(ours->stacks), hashmap__count(jdk->stacks));
}

/* Waits of event name (JFR ticks) in nanoseconds against the JDK's conversion, each of
 * which is rounded. */
static inline void check_waits(const struct profile *p, const char *name, enum jfr_sample_type type)
{
	json_t *events = json_object_get(json_object_get(truth, "recording"), "events"), *e;
	double waited = 0;
	size_t i, nwaits = 0;

	json_array_foreach(events, i, e) {
		json_t *v = json_object_get(e, "values");
		const char *d = json_string_value(json_object_get(v, "duration"));
		if (strcmp(json_string_value(json_object_get(e, "type")), name) ||
		    !json_array_size(json_object_get(json_object_get(v, "stackTrace"), "frames")))
			continue;
		assert_true(d && !strncmp(d, "PT", 2) && d[strlen(d) - 1] == 'S');
		waited += strtod(d + 2, NULL) * 1e9;
		nwaits++;
	}
	double ours = (double)profile__type_total(p, type);
	print_message("%s: %zu waits, %.0f ns, the JDK says %.0f\n", name, nwaits, ours, waited);
	assert_true(ours - waited <= (double)nwaits + 1 && waited - ours <= (double)nwaits + 1);
}

/* The snapshot's contexts as sorted "k=v," strings, decoded here without format/jfr. */
static inline struct hashmap *read_snapshot(const struct strbuf *pb)
{
	Jfr__LabelsSnapshot *s = jfr__labels_snapshot__unpack(NULL, pb->len, (const uint8_t *)pb->buf);
	struct hashmap *m = hashmap__new();

	assert_non_null(s);
	for (size_t i = 0; i < s->n_contexts; i++) {
		Jfr__Context *c = s->contexts[i]->value;
		struct strbuf sb = STRBUF_INIT;
		char *kv[16];
		size_t n = 0;
		for (size_t k = 0; c && k < c->n_labels && n < 16; k++) {
			const ProtobufCBinaryData *key = NULL, *val = NULL;
			for (size_t j = 0; j < s->n_strings; j++) {
				if (s->strings[j]->key == c->labels[k]->key)
					key = &s->strings[j]->value;
				if (s->strings[j]->key == c->labels[k]->value)
					val = &s->strings[j]->value;
			}
			assert_true(key && val);
			struct strbuf one = STRBUF_INIT;
			strbuf_addf(&one, "%.*s=%.*s,", (int)key->len, (const char *)key->data,
				    (int)val->len, (const char *)val->data);
			kv[n++] = strbuf_detach(&one, NULL);
		}
		for (size_t a = 1; a < n; a++)	/* sorted by key, as profile labels are */
			for (size_t b = a; b > 0 && strcmp(kv[b - 1], kv[b]) > 0; b--) {
				char *t = kv[b]; kv[b] = kv[b - 1]; kv[b - 1] = t;
			}
		for (size_t k = 0; k < n; k++) {
			strbuf_addstr(&sb, kv[k]);
			free(kv[k]);
		}
		bool created;
		int64_t id = s->contexts[i]->key;
		void **slot = hashmap__insert(m, &id, sizeof(id), &created);
		*slot = strbuf_detach(&sb, NULL);
	}
	jfr__labels_snapshot__free_unpacked(s, NULL);
	return m;
}

static inline void free_snapshot(struct hashmap *m)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (m && hashmap__next(m, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(m);
}

#endif
