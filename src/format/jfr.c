/* JFR events into the profile model (format/jfr.h); the chunk, its metadata and constant
 * pools are read by format/jfr_chunk.c. */
#include "format/jfr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/jfr_chunk.h"
#include "format/jfr_labels_priv.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Pyroscope's profile types for a JFR (its jfr-parser's pprof builders), with the legacy
 * suffixes kiln's services are named by (profile/ptype.c: those of the sample types;
 * monitor contention is Pyroscope's "mutex", parking its "block", as for Go). The lock and
 * park pairs share sample type names in Pyroscope (contentions, delay); the profile model
 * needs distinct ones. */
static const struct {
	struct jfr_type_info info;
	const char *type, *unit;
} types[JFR_NR_TYPES] = {
	[JFR_CPU] = { { "process_cpu:cpu:nanoseconds:cpu:nanoseconds", "cpu", "samples" },
		      "cpu", "nanoseconds" },
	[JFR_WALL] = { { "wall:wall:nanoseconds:wall:nanoseconds", "wall", "samples" },
		       "wall", "nanoseconds" },
	[JFR_TLAB_OBJECTS] = { { "memory:alloc_in_new_tlab_objects:count:space:bytes",
				 "alloc_in_new_tlab_objects", "objects" },
			       "alloc_in_new_tlab_objects", "count" },
	[JFR_TLAB_BYTES] = { { "memory:alloc_in_new_tlab_bytes:bytes:space:bytes",
			       "alloc_in_new_tlab_bytes", "bytes" },
			     "alloc_in_new_tlab_bytes", "bytes" },
	[JFR_OUTSIDE_OBJECTS] = { { "memory:alloc_outside_tlab_objects:count:space:bytes",
				    "alloc_outside_tlab_objects", "objects" },
				  "alloc_outside_tlab_objects", "count" },
	[JFR_OUTSIDE_BYTES] = { { "memory:alloc_outside_tlab_bytes:bytes:space:bytes",
				  "alloc_outside_tlab_bytes", "bytes" },
				"alloc_outside_tlab_bytes", "bytes" },
	[JFR_LOCK_COUNT] = { { "mutex:contentions:count:mutex:count", "mutex_count",
			       "lock_samples" },
			     "contentions", "count" },
	[JFR_LOCK_DURATION] = { { "mutex:delay:nanoseconds:mutex:count", "mutex_duration",
				  "lock_nanoseconds" },
				"delay", "nanoseconds" },
	[JFR_PARK_COUNT] = { { "block:contentions:count:block:count", "block_count",
			       "lock_samples" },
			     "park_contentions", "count" },
	[JFR_PARK_DURATION] = { { "block:delay:nanoseconds:block:count", "block_duration",
				  "lock_nanoseconds" },
				"park_delay", "nanoseconds" },
};

const struct jfr_type_info *jfr__type_info(enum jfr_sample_type t)
{
	return t < JFR_NR_TYPES ? &types[t].info : NULL;
}

enum kind { K_NONE, K_EXEC, K_WALL, K_TLAB, K_OUTSIDE, K_MONITOR, K_PARK, K_SETTING, NR_KINDS };

static const char *const kind_class[NR_KINDS] = {
	[K_EXEC] = "jdk.ExecutionSample", [K_WALL] = "profiler.WallClockSample",
	[K_TLAB] = "jdk.ObjectAllocationInNewTLAB", [K_OUTSIDE] = "jdk.ObjectAllocationOutsideTLAB",
	[K_MONITOR] = "jdk.JavaMonitorEnter", [K_PARK] = "jdk.ThreadPark",
	[K_SETTING] = "jdk.ActiveSetting",
};

/* The fields read from every event (those its class lacks stay unset). */
enum { F_STACK, F_STATE, F_CONTEXT, F_TLAB, F_SIZE, F_DURATION, F_SAMPLES, F_NAME, F_VALUE,
       F_SPAN, F_SPAN_NAME, F_TRACE_HI, F_TRACE_LO, NR_F };
static const char *const fields[NR_F] = {
	"stackTrace", "state", "contextId", "tlabSize", "allocationSize", "duration", "samples",
	"name", "value", "spanId", "spanName", "traceIdHi", "traceIdLo",
};

/* One parse: the profile, its caches for the chunk being read. */
struct parse {
	struct profile *p;
	struct jfr_chunk *c;
	const struct jfr_labels *labels;
	int64_t period;
	struct jfr_stats *st;
	bool wall;			/* the ActiveSetting "event" is "wall" */
	struct hashmap *stacks;		/* stack key -> index + 1 in stack_frames */
	uint32_t **stack_frames;	/* [0]: depth, then frame ids root first */
	size_t nstacks;
	struct hashmap *methods;	/* method key -> frame id + 1 */
	struct hashmap *contexts;	/* context id -> label set id + 1 */
	struct strbuf a, b;
};

static bool all_digits(const char *s, const char *end)
{
	for (; s < end; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* After "$$Lambda": "$?[0-9]*[./](0x)?[0-9a-f]+" or "[0-9]+", to the end. */
static bool lambda_tail(const char *s)
{
	const char *e = s + strlen(s), *p = s;

	if (p < e && all_digits(p, e))
		return true;
	if (*p == '$')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '.' && *p != '/')
		return false;
	p++;
	if (p[0] == '0' && p[1] == 'x')
		p += 2;
	if (!*p)
		return false;
	for (; *p; p++)
		if (!is_hex(*p))
			return false;
	return true;
}

void jfr__merge_generated(struct strbuf *name)
{
	static const char acc[] = "jdk/internal/reflect/GeneratedMethodAccessor";
	const size_t nacc = sizeof(acc) - 1;

	if (name->len > nacc && !memcmp(name->buf, acc, nacc) &&
	    all_digits(name->buf + nacc, name->buf + name->len)) {
		strbuf_setlen(name, nacc);
		strbuf_addch(name, '_');
		return;
	}
	/* the last "$$Lambda" with a tail that matches, after at least one character */
	for (size_t i = name->len >= 9 ? name->len - 8 : 0; i >= 1; i--) {
		if (memcmp(name->buf + i, "$$Lambda", 8) || !lambda_tail(name->buf + i + 8))
			continue;
		strbuf_setlen(name, i + 8);
		strbuf_addch(name, '_');
		return;
	}
}

/* The frame name of method key: "<class>.<method>". */
static uint32_t method_frame(struct parse *ps, const struct jfr_field *mf, uint64_t key)
{
	struct jfr_chunk *c = ps->c;
	void **slot = hashmap__find(ps->methods, &key, sizeof(key));
	static const char *const mwant[] = { "type", "name" };
	static const char *const cwant[] = { "name" };
	struct jfr_val mv[2], cv[1];
	struct jfr_rd r;
	bool null = true;

	if (slot)
		return (uint32_t)(uintptr_t)*slot - 1;
	strbuf_reset(&ps->a);
	strbuf_reset(&ps->b);
	if (!jfr__pool(c, mf->cls, key, &r) && !jfr__read_object(&r, mf->cls, mwant, 2, mv, 1)) {
		if (mv[0].f && mv[0].f->cp && mv[0].f->cls->prim == JFR_STRUCT &&
		    !jfr__pool(c, mv[0].f->cls, mv[0].u, &r) &&
		    !jfr__read_object(&r, mv[0].f->cls, cwant, 1, cv, 1))
			jfr__string(c, &cv[0], &ps->a, &null, 1);
		jfr__string(c, &mv[1], &ps->b, &null, 1);
	}
	jfr__merge_generated(&ps->a);
	jfr__merge_generated(&ps->b);
	if (ps->a.len)
		strbuf_addch(&ps->a, '.');
	strbuf_add(&ps->a, ps->b.buf, ps->b.len);
	if (!ps->a.len)
		strbuf_addstr(&ps->a, "[unknown]");
	uint32_t id = profile__intern(ps->p, ps->a.buf, ps->a.len);
	bool created;
	slot = hashmap__insert(ps->methods, &key, sizeof(key), &created);
	*slot = (void *)(uintptr_t)(id + 1);
	return id;
}

/* The frames of stack trace v (a pool key), root first: [0] is the depth. NULL when the
 * pool has no such trace. */
static const uint32_t *stack_of(struct parse *ps, const struct jfr_val *v)
{
	struct jfr_chunk *c = ps->c;
	static const char *const swant[] = { "frames" };
	static const char *const fwant[] = { "method" };
	struct jfr_val sv[1], fv[1];
	struct jfr_rd r, fr;
	uint64_t n;

	if (!v->f || !v->f->cp || v->f->cls->prim != JFR_STRUCT)
		return NULL;
	void **slot = hashmap__find(ps->stacks, &v->u, sizeof(v->u));
	if (slot)
		return ps->stack_frames[(uintptr_t)*slot - 1];
	if (jfr__pool(c, v->f->cls, v->u, &r) || jfr__read_object(&r, v->f->cls, swant, 1, sv, 1) ||
	    jfr__array(c, &sv[0], &fr, &n) || !sv[0].f || sv[0].f->cls->prim != JFR_STRUCT)
		return NULL;
	uint32_t *frames = xmalloc((n + 1) * sizeof(*frames));
	uint32_t depth = 0;
	for (uint64_t i = 0; i < n && !c->failed; i++) {
		if (jfr__read_object(&fr, sv[0].f->cls, fwant, 1, fv, 2))
			break;
		if (fv[0].f && fv[0].f->cp && fv[0].f->cls->prim == JFR_STRUCT)
			frames[1 + depth++] = method_frame(ps, fv[0].f, fv[0].u);
	}
	if (c->failed) {
		free(frames);
		return NULL;
	}
	for (uint32_t i = 0; i < depth / 2; i++) {	/* JFR has the leaf first */
		uint32_t t = frames[1 + i];
		frames[1 + i] = frames[depth - i];
		frames[depth - i] = t;
	}
	frames[0] = depth;
	ps->stack_frames = xrealloc(ps->stack_frames, (ps->nstacks + 1) * sizeof(*ps->stack_frames));
	ps->stack_frames[ps->nstacks++] = frames;
	bool created;
	slot = hashmap__insert(ps->stacks, &v->u, sizeof(v->u), &created);
	*slot = (void *)(uintptr_t)ps->nstacks;
	return frames;
}

/* The value of an integer field, 0 when the event has none. */
static uint64_t u(const struct jfr_val *v)
{
	return v->f && !v->f->array && v->f->cls->prim != JFR_STRUCT &&
	       v->f->cls->prim != JFR_STRING ? v->u : 0;
}

/* The context's labels with the span the event ran in, as Pyroscope labels them:
 * profile_id (the span id, 16 hex digits), span_name (a snapshot string), trace_id. */
static uint32_t span_labels(struct parse *ps, const struct jfr_context *ctx, uint64_t span,
			    uint64_t name, uint64_t hi, uint64_t lo)
{
	size_t n = ctx ? ctx->n : 0, k = n;
	struct profile_label *l = xmalloc((n + 3) * sizeof(*l));
	char id[17], trace[33];

	if (n)
		memcpy(l, ctx->labels, n * sizeof(*l));
	if (span) {
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)span);
		l[k++] = (struct profile_label){ "profile_id", id };
	}
	const char *sn = name ? jfr__label_string(ps->labels, (int64_t)name) : NULL;
	if (sn && *sn)
		l[k++] = (struct profile_label){ "span_name", sn };
	if (hi || lo) {
		snprintf(trace, sizeof(trace), "%016llx%016llx", (unsigned long long)hi,
			 (unsigned long long)lo);
		l[k++] = (struct profile_label){ "trace_id", trace };
	}
	uint32_t set = profile__labelset(ps->p, l, k);
	free(l);
	return set;
}

static uint32_t labels_of(struct parse *ps, const struct jfr_val *ev)
{
	const struct jfr_val *v = &ev[F_CONTEXT];
	uint64_t span = u(&ev[F_SPAN]), name = u(&ev[F_SPAN_NAME]);
	uint64_t hi = u(&ev[F_TRACE_HI]), lo = u(&ev[F_TRACE_LO]);

	if (!ps->labels)
		return 0;
	if (span || name || hi || lo)	/* per span: not cached */
		return span_labels(ps, jfr__context(ps->labels, (int64_t)u(v)), span, name, hi, lo);
	if (!v->f || !v->u)
		return 0;
	void **slot = hashmap__find(ps->contexts, &v->u, sizeof(v->u));
	if (slot)
		return (uint32_t)(uintptr_t)*slot - 1;
	const struct jfr_context *ctx = jfr__context(ps->labels, (int64_t)v->u);
	uint32_t set = ctx ? profile__labelset(ps->p, ctx->labels, ctx->n) : 0;
	bool created;
	slot = hashmap__insert(ps->contexts, &v->u, sizeof(v->u), &created);
	*slot = (void *)(uintptr_t)(set + 1);
	if (!ctx && ps->st)
		ps->st->unlabeled++;
	return set;
}

static uint64_t ticks_to_ns(const struct jfr_chunk *c, uint64_t ticks)
{
	if (!c->ticks_per_sec || c->ticks_per_sec == 1000000000)
		return ticks;
	long double ns = (long double)ticks * 1e9L / (long double)c->ticks_per_sec;
	return ns < 1.8e19L ? (uint64_t)ns : UINT64_MAX;	/* a hostile clock */
}

static void add(struct parse *ps, const struct jfr_val *v, enum jfr_sample_type t1, uint64_t x1,
		enum jfr_sample_type t2, uint64_t x2)
{
	const uint32_t *frames = stack_of(ps, &v[F_STACK]);
	uint64_t vals[JFR_NR_TYPES] = { 0 };

	if (!frames || !frames[0])
		return;
	vals[t1] = x1;
	if (t2 != t1)
		vals[t2] = x2;
	profile__add_values(ps->p, frames + 1, frames[0], labels_of(ps, v), vals);
	if (ps->st) {
		ps->st->samples[t1]++;
		if (t2 != t1)
			ps->st->samples[t2]++;
	}
}

static void event(struct parse *ps, enum kind k, const struct jfr_val *v)
{
	struct jfr_chunk *c = ps->c;
	bool null;

	switch (k) {
	case K_EXEC:
		jfr__string(c, &v[F_STATE], &ps->a, &null, 1);
		if (null || strcmp(ps->a.buf, "STATE_SLEEPING"))
			add(ps, v, JFR_CPU, (uint64_t)ps->period, JFR_CPU, 0);
		if (ps->wall)
			add(ps, v, JFR_WALL, (uint64_t)ps->period, JFR_WALL, 0);
		break;
	case K_WALL:
		add(ps, v, JFR_WALL, (v[F_SAMPLES].f ? v[F_SAMPLES].u : 1) * (uint64_t)ps->period,
		    JFR_WALL, 0);
		break;
	case K_TLAB:
		add(ps, v, JFR_TLAB_OBJECTS, 1, JFR_TLAB_BYTES, v[F_TLAB].u);
		break;
	case K_OUTSIDE:
		add(ps, v, JFR_OUTSIDE_OBJECTS, 1, JFR_OUTSIDE_BYTES, v[F_SIZE].u);
		break;
	case K_MONITOR:
		add(ps, v, JFR_LOCK_COUNT, 1, JFR_LOCK_DURATION, ticks_to_ns(c, v[F_DURATION].u));
		break;
	case K_PARK:
		add(ps, v, JFR_PARK_COUNT, 1, JFR_PARK_DURATION, ticks_to_ns(c, v[F_DURATION].u));
		break;
	case K_SETTING:
		jfr__string(c, &v[F_NAME], &ps->a, &null, 1);
		if (!null && !strcmp(ps->a.buf, "event")) {
			jfr__string(c, &v[F_VALUE], &ps->b, &null, 1);
			ps->wall = !null && !strcmp(ps->b.buf, "wall");
		}
		break;
	default:
		break;
	}
}

/* The events of the open chunk ps->c: settings first (a wall recording says so in one),
 * then the samples. */
static int read_events(struct parse *ps)
{
	struct jfr_chunk *c = ps->c;
	uint64_t ids[NR_KINDS];
	bool have[NR_KINDS] = { false };

	for (int k = K_EXEC; k < NR_KINDS; k++) {
		const struct jfr_class *cls = jfr__class_named(c, kind_class[k]);
		if (cls) {
			ids[k] = cls->id;
			have[k] = true;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		struct jfr_rd r = { c->base + JFR_HEADER_SIZE, c->base + c->size, c };
		while (r.p < r.end && !c->failed) {
			const uint8_t *at = r.p;
			uint64_t size = jfr__varint(&r);	/* checked by jfr__chunk_open */
			struct jfr_rd ev = { r.p, at + size, c };
			uint64_t type = jfr__varint(&ev);
			r.p = at + size;
			enum kind k = K_NONE;
			for (int i = K_EXEC; i < NR_KINDS && k == K_NONE; i++)
				if (have[i] && ids[i] == type)
					k = (enum kind)i;
			if (k == K_NONE || (pass == 0) != (k == K_SETTING))
				continue;
			struct jfr_val v[NR_F];
			if (pass == 1 && ps->st)
				ps->st->events++;
			if (jfr__read_object(&ev, jfr__class(c, type), fields, NR_F, v, 0))
				break;
			event(ps, k, v);
		}
	}
	return c->failed ? -EINVAL : 0;
}

static void reset_caches(struct parse *ps)
{
	for (size_t i = 0; i < ps->nstacks; i++)
		free(ps->stack_frames[i]);
	free(ps->stack_frames);
	ps->stack_frames = NULL;
	ps->nstacks = 0;
	hashmap__clear(ps->stacks);
	hashmap__clear(ps->methods);
}

int jfr__parse(struct profile *p, const void *data, size_t len, const struct jfr_labels *labels,
	       int64_t period_ns, struct jfr_stats *stats, char *err, size_t errlen)
{
	struct profile_type t[JFR_NR_TYPES];
	struct parse ps = { .p = p, .labels = labels, .period = period_ns, .st = stats,
			    .a = STRBUF_INIT, .b = STRBUF_INIT };
	size_t off = 0, nchunk = 0;
	int ret = 0;

	if (stats)
		*stats = (struct jfr_stats){ 0 };
	for (int i = 0; i < JFR_NR_TYPES; i++)
		t[i] = (struct profile_type){ types[i].type, types[i].unit };
	if (profile__set_types(p, t, JFR_NR_TYPES))
		return -EBUSY;
	if (!len) {
		errmsg(err, errlen, "the recording is empty");
		return -EINVAL;
	}
	ps.stacks = hashmap__new();
	ps.methods = hashmap__new();
	ps.contexts = hashmap__new();
	while (off < len && !ret) {
		struct jfr_chunk c;
		uint64_t clen;
		ret = jfr__chunk_open(&c, (const uint8_t *)data + off, len - off, &clen, err, errlen);
		if (!ret) {
			ps.c = &c;
			ret = read_events(&ps);
			reset_caches(&ps);
		}
		jfr__chunk_release(&c);
		if (ret) {
			/* name the chunk too: "chunk 2 at offset 4096: ..." */
			char inner[200];
			snprintf(inner, sizeof(inner), "%s", err);
			errmsg(err, errlen, "chunk %zu at offset %zu: %s", nchunk + 1, off, inner);
			break;
		}
		off += clen;
		nchunk++;
	}
	if (stats)
		stats->chunks = nchunk;
	reset_caches(&ps);
	hashmap__free(ps.stacks);
	hashmap__free(ps.methods);
	hashmap__free(ps.contexts);
	strbuf_release(&ps.a);
	strbuf_release(&ps.b);
	return ret ? -EINVAL : 0;
}
