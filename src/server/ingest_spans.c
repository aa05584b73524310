/* Span profiles, Pyroscope's link from traces to profiles: the SDKs' OpenTelemetry
 * integrations (otel-profiling-go, pyroscope-otel, the Java agent) label the samples taken
 * inside a span with its id, `span_id` (older SDKs: `profile_id`). A series per span would
 * grow without bound, so the series of a push leave the id out (ingest_series.c) and the
 * labelled samples are stored once more, in a companion service "<service>#spans" whose
 * stacks carry the id as an extra root frame "span_id=<id>" under the same series labels.
 * No pushed service can be named so ('#' is not a service character), the listings leave
 * companions out (ingest__is_span_service), and SelectMergeSpanProfile
 * (query_connect_span.c) takes the subtrees of the spans it is asked for. The companion
 * lives and is retained like any service of the store, and is written with the profile
 * in one store write (store_put's also). */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* The longest span id kept (OpenTelemetry's are 16 hex digits; profile ids may be UUIDs). */
#define MAX_SPAN_ID 64

bool ingest__is_span_service(const char *stored)
{
	return strchr(stored, INGEST_SPAN_MARK[0]) != NULL;
}

char *ingest__span_service(const char *service)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s%s", service, INGEST_SPAN_MARK);
	return strbuf_detach(&sb, NULL);
}

/* The span id of a label set: span_id, else profile_id; NULL when it has neither or the
 * value is empty or longer than MAX_SPAN_ID. */
static const char *span_of(const struct profile *p, uint32_t set)
{
	const char *id = profile__label(p, set, "span_id");

	if (!id || !*id)
		id = profile__label(p, set, "profile_id");
	return id && *id && strlen(id) <= MAX_SPAN_ID ? id : NULL;
}

/* Copies the sample types and the period of src into dst (which has no stacks). */
static void copy_types(struct profile *dst, const struct profile *src)
{
	size_t nt = profile__nr_types(src);
	struct profile_type *t = xcalloc(nt + 1, sizeof(*t)), pt;
	int64_t period;

	for (size_t i = 0; i < nt; i++)
		t[i] = profile__type(src, i);
	if (nt)
		profile__set_types(dst, t, nt);
	if (profile__period(src, &pt, &period))
		profile__set_period(dst, pt.type, pt.unit, period);
	free(t);
}

void ingest__span_put(const struct store_put *put, struct span_put *out)
{
	const struct profile *p = put->profile;
	size_t ns = profile__nr_stacks(p), nt = profile__nr_types(p);
	struct profile *sp = NULL;
	uint32_t *frames = NULL, *stack_series = NULL;
	size_t room = 0;
	struct strbuf frame = STRBUF_INIT;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ns; i++) {
		struct profile_stack st = profile__stack(p, i);
		const char *id = span_of(p, st.labels);
		if (!id || st.depth <= put->skip)
			continue;
		uint64_t v = put->type_index < nt ? st.values[put->type_index] : st.count;
		if (!v)
			continue;
		if (!sp) {
			sp = profile__new();
			copy_types(sp, p);
			stack_series = xcalloc(ns + 1, sizeof(*stack_series));
		}
		if (st.depth + 1 > room) {
			room = st.depth + 1;
			frames = xrealloc(frames, room * sizeof(*frames));
		}
		strbuf_reset(&frame);
		strbuf_addf(&frame, "%s%s", INGEST_SPAN_FRAME, id);
		frames[0] = profile__intern(sp, frame.buf, frame.len);
		uint32_t depth = 1;
		for (uint32_t k = put->skip; k < st.depth; k++) {
			const char *name = profile__name(p, st.frames[k]);
			frames[depth++] = profile__intern_str(sp, name);
		}
		/* the stack's own labels keep stacks of two series apart */
		size_t nl;
		const struct profile_label *l = profile__labels(p, st.labels, &nl);
		uint32_t set = profile__labelset(sp, l, nl);
		size_t j = profile__add_values(sp, frames, depth, set, st.values);
		stack_series[j] = put->stack_series ? put->stack_series[i] : 0;
	}
	free(frames);
	strbuf_release(&frame);
	if (!sp)
		return;
	out->service = ingest__span_service(put->service);
	out->profile = sp;
	out->stack_series = stack_series;
	out->put = *put;
	out->put.service = out->service;
	out->put.profile = sp;
	out->put.stack_series = stack_series;
	out->put.skip = 0;
	out->put.also = NULL;
	if (out->put.max_depth)
		out->put.max_depth++;	/* the span frame is one more */
}

void ingest__span_put_release(struct span_put *sp)
{
	free(sp->service);
	profile__free(sp->profile);
	free(sp->stack_series);
	memset(sp, 0, sizeof(*sp));
}
