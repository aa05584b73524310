/* The JFR reader (format/jfr.h) on a real recording made here at test time: a small Java
 * program (CPU in two functions, allocations in and outside TLABs, a contended monitor)
 * run with -XX:StartFlightRecording. The truth is the JDK's own reader, `jfr print
 * --json`: every event kind's samples, bytes and full stacks must be the same. Then the
 * recording cut short and corrupted must give -EINVAL with a message, never a crash, and
 * the labels snapshot reader its errors. The same comparison on what the Pyroscope Java
 * agent uploaded here (tests/unit/data/jfr-async-*: async-profiler's itimer, allocation,
 * wall and lock recordings and a labels snapshot, captured from io.pyroscope:agent 2.9.2 by a
 * loopback HTTP listener), labels joined by context id. Skipped when there is no JDK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "format/jfr.h"
#include "format/jfr_labels_priv.h"
#include "jfr_labels.pb-c.h"
#include "scratch.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

static char dir[64];
static struct strbuf rec = STRBUF_INIT;	/* the recording */
static json_t *truth;			/* jfr print --json of the recording at hand */
static json_t *recorded;		/* ... of rec */
/* context id -> "k=v,..." of the agent's labels snapshot, read with protobuf-c alone */
static struct hashmap *snapshot;

static const char java_src[] =
	"public class Work {\n"
	"  static volatile double sink; static volatile Object keep;\n"
	"  static final Object lock = new Object();\n"
	"  static void kilnAlpha(long n) { double x = 0; for (long i = 0; i < n; i++)\n"
	"    x += Math.sqrt(x + i); sink = x; }\n"
	"  static void kilnAlloc(int n) { for (int i = 0; i < n; i++) {\n"
	"    keep = new byte[4096 + (i & 1023)]; if ((i & 255) == 0) keep = new byte[2 << 20]; } }\n"
	"  static void kilnLock() { synchronized (lock) { kilnAlpha(200000); } }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    long stop = System.currentTimeMillis() + 1500;\n"
	"    Thread t = new Thread(() -> { while (System.currentTimeMillis() < stop) kilnLock(); });\n"
	"    t.start();\n"
	"    while (System.currentTimeMillis() < stop) { kilnAlpha(100000); kilnAlloc(200); kilnLock(); }\n"
	"    t.join(); } }\n";

static int run(const char *cmd)
{
	int ret = system(cmd);
	return ret == -1 ? -1 : WEXITSTATUS(ret);
}

static int setup(void **state)
{
	struct strbuf cmd = STRBUF_INIT, js = STRBUF_INIT;
	FILE *f;

	if (run("command -v java >/dev/null && command -v javac >/dev/null && "
		"command -v jfr >/dev/null"))
		return 0;	/* each test skips */
	assert_int_equal(scratch__make(dir, sizeof(dir), "jfr"), 0);
	strbuf_addf(&cmd, "%s/Work.java", dir);
	f = fopen(cmd.buf, "w");
	assert_non_null(f);
	fputs(java_src, f);
	fclose(f);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "cd %s && javac Work.java && java -XX:StartFlightRecording=filename=w.jfr,"
		    "settings=profile,jdk.ObjectAllocationInNewTLAB#enabled=true,"
		    "jdk.ObjectAllocationOutsideTLAB#enabled=true,jdk.JavaMonitorEnter#threshold=0ms,"
		    "jdk.ThreadPark#threshold=0ms -cp . Work >java.log 2>&1 && "
		    "jfr print --json --stack-depth 64 --events jdk.ExecutionSample,"
		    "jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB,"
		    "jdk.JavaMonitorEnter,jdk.ThreadPark w.jfr >w.json", dir);
	assert_int_equal(run(cmd.buf), 0);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "%s/w.jfr", dir);
	assert_true(strbuf_read_file(&rec, cmd.buf) >= 0);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "%s/w.json", dir);
	assert_true(strbuf_read_file(&js, cmd.buf) >= 0);
	truth = recorded = json_loadb(js.buf, js.len, 0, NULL);
	assert_non_null(truth);
	strbuf_release(&js);
	assert_int_equal(scratch__remove(dir), 0);
	strbuf_release(&cmd);
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	json_decref(recorded);
	strbuf_release(&rec);
	(void)state;
	return 0;
}

/* What one event kind holds: folded stack -> value, as sorted text. */
struct tally {
	struct hashmap *stacks;	/* folded stack -> uint64 value (boxed) */
	uint64_t samples, total;
};

static void tally_add(struct tally *t, const char *stack, size_t len, uint64_t v)
{
	bool created;
	void **slot = hashmap__insert(t->stacks, stack, len, &created);
	if (created)
		*slot = xcalloc(1, sizeof(uint64_t));
	*(uint64_t *)*slot += v;
	t->total += v;
}

static void tally_free(struct tally *t)
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
static void jdk_tally(struct tally *t, const char *name, const char *field)
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

static void our_tally(struct tally *t, const struct profile *p, enum jfr_sample_type type)
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

static void same(struct tally *ours, struct tally *jdk, const char *what)
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
static void check_waits(const struct profile *p, const char *name, enum jfr_sample_type type)
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

static void test_matches_jdk(void **state)
{
	struct profile *p;
	struct jfr_stats st;
	char err[256];
	static const struct { enum jfr_sample_type type; const char *event, *field; } kinds[] = {
		{ JFR_CPU, "jdk.ExecutionSample", NULL },
		{ JFR_TLAB_OBJECTS, "jdk.ObjectAllocationInNewTLAB", NULL },
		{ JFR_TLAB_BYTES, "jdk.ObjectAllocationInNewTLAB", "tlabSize" },
		{ JFR_OUTSIDE_OBJECTS, "jdk.ObjectAllocationOutsideTLAB", NULL },
		{ JFR_OUTSIDE_BYTES, "jdk.ObjectAllocationOutsideTLAB", "allocationSize" },
		{ JFR_LOCK_COUNT, "jdk.JavaMonitorEnter", NULL },
		{ JFR_PARK_COUNT, "jdk.ThreadPark", NULL },
	};

	if (!rec.len)
		skip();
	p = profile__new();
	assert_int_equal(jfr__parse(p, rec.buf, rec.len, NULL, 10000000, &st, err, sizeof(err)), 0);
	assert_int_equal(st.chunks, 1);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct tally ours, jdk;
		jdk_tally(&jdk, kinds[k].event, kinds[k].field);
		our_tally(&ours, p, kinds[k].type);
		if (kinds[k].type == JFR_CPU) {	/* 10 ms a sample */
			assert_true(jdk.total > 0);
			jdk.total *= 10000000;
			struct hashmap_iter it = HASHMAP_ITER_INIT;
			void *v;
			while (hashmap__next(jdk.stacks, &it, NULL, NULL, &v))
				*(uint64_t *)v *= 10000000;
		}
		print_message("%s: %llu samples, %llu\n", kinds[k].event,
			      (unsigned long long)jdk.samples, (unsigned long long)jdk.total);
		assert_int_equal(st.samples[kinds[k].type], jdk.samples);
		same(&ours, &jdk, kinds[k].event);
		tally_free(&ours);
		tally_free(&jdk);
	}
	check_waits(p, "jdk.JavaMonitorEnter", JFR_LOCK_DURATION);
	/* the workload's own functions are there, in both allocation kinds */
	assert_true(profile__type_total(p, JFR_TLAB_OBJECTS) > 0);
	assert_true(profile__type_total(p, JFR_OUTSIDE_BYTES) >= (2 << 20));
	assert_true(profile__type_total(p, JFR_LOCK_COUNT) > 0);
	assert_true(profile__type_total(p, JFR_LOCK_DURATION) > 0);
	profile__free(p);
	(void)state;
}

/* The snapshot's contexts as sorted "k=v," strings, decoded here without format/jfr. */
static struct hashmap *read_snapshot(const struct strbuf *pb)
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

static void free_snapshot(struct hashmap *m)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (m && hashmap__next(m, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(m);
}

/* What the Pyroscope Java agent (async-profiler) uploaded here, kept in tests/unit/data:
 * itimer CPU samples and allocations with the labels snapshot of the same upload, and a
 * wall-clock recording. Read as the JDK reads them (jfr print), labels joined by
 * contextId. */
static void test_agent_recordings(void **state)
{
	static const struct {
		const char *file, *labels;
		struct { enum jfr_sample_type type; const char *event, *field; } kinds[3];
	} recs[] = {
		{ "jfr-async-itimer-alloc.jfr", "jfr-async-itimer-alloc.labels",
		  { { JFR_CPU, "jdk.ExecutionSample", NULL },
		    { JFR_TLAB_OBJECTS, "jdk.ObjectAllocationInNewTLAB", NULL },
		    { JFR_TLAB_BYTES, "jdk.ObjectAllocationInNewTLAB", "tlabSize" } } },
		{ "jfr-async-wall.jfr", NULL,
		  { { JFR_WALL, "profiler.WallClockSample", "samples" },
		    { JFR_CPU, "jdk.ExecutionSample", NULL },
		    { JFR_TLAB_OBJECTS, "jdk.ObjectAllocationInNewTLAB", NULL } } },
		{ "jfr-async-lock.jfr", NULL,
		  { { JFR_LOCK_COUNT, "jdk.JavaMonitorEnter", NULL },
		    { JFR_PARK_COUNT, "jdk.ThreadPark", NULL },
		    { JFR_CPU, "jdk.ExecutionSample", NULL } } },
	};

	if (!rec.len)
		skip();
	for (size_t r = 0; r < sizeof(recs) / sizeof(recs[0]); r++) {
		struct strbuf path = STRBUF_INIT, data = STRBUF_INIT, pb = STRBUF_INIT, js = STRBUF_INIT;
		struct jfr_labels *labels = NULL;
		struct jfr_stats st;
		char err[256];
		strbuf_addf(&path, "tests/unit/data/%s", recs[r].file);
		assert_true(strbuf_read_file(&data, path.buf) >= 0);
		if (recs[r].labels) {
			strbuf_reset(&path);
			strbuf_addf(&path, "tests/unit/data/%s", recs[r].labels);
			assert_true(strbuf_read_file(&pb, path.buf) >= 0);
			assert_int_equal(jfr__parse_labels(pb.buf, pb.len, &labels, err, sizeof(err)), 0);
			snapshot = read_snapshot(&pb);
		}
		strbuf_reset(&path);
		strbuf_addf(&path, "jfr print --json --stack-depth 4096 tests/unit/data/%s", recs[r].file);
		FILE *f = popen(path.buf, "r");
		assert_non_null(f);
		assert_true(strbuf_read_fd(&js, fileno(f)) >= 0);
		assert_int_equal(pclose(f), 0);
		truth = json_loadb(js.buf, js.len, 0, NULL);
		assert_non_null(truth);
		struct profile *p = profile__new();
		assert_int_equal(jfr__parse(p, data.buf, data.len, labels, 10000000, &st, err,
					    sizeof(err)), 0);
		size_t labelled = 0;
		for (size_t k = 0; k < 3; k++) {
			struct tally ours, jdk;
			jdk_tally(&jdk, recs[r].kinds[k].event, recs[r].kinds[k].field);
			our_tally(&ours, p, recs[r].kinds[k].type);
			if (recs[r].kinds[k].type == JFR_CPU || recs[r].kinds[k].type == JFR_WALL) {
				jdk.total *= 10000000;
				struct hashmap_iter it = HASHMAP_ITER_INIT;
				void *v;
				while (hashmap__next(jdk.stacks, &it, NULL, NULL, &v))
					*(uint64_t *)v *= 10000000;
			}
			print_message("%s %s: %llu events, %llu\n", recs[r].file, recs[r].kinds[k].event,
				      (unsigned long long)jdk.samples, (unsigned long long)jdk.total);
			assert_int_equal(st.samples[recs[r].kinds[k].type], jdk.samples);
			same(&ours, &jdk, recs[r].kinds[k].event);
			struct hashmap_iter it = HASHMAP_ITER_INIT;
			const void *key;
			size_t len;
			while (hashmap__next(ours.stacks, &it, &key, &len, NULL))
				labelled += ((const char *)key)[len - 1] == ',';
			tally_free(&ours);
			tally_free(&jdk);
		}
		check_waits(p, "jdk.JavaMonitorEnter", JFR_LOCK_DURATION);
		check_waits(p, "jdk.ThreadPark", JFR_PARK_DURATION);
		if (recs[r].labels)	/* the workload labels its phases */
			assert_true(labelled > 0);
		assert_int_equal(st.unlabeled, 0);
		assert_true(profile__type_total(p, recs[r].kinds[0].type) > 0);
		profile__free(p);
		json_decref(truth);
		truth = recorded;
		free_snapshot(snapshot);
		snapshot = NULL;
		jfr__free_labels(labels);
		strbuf_release(&path);
		strbuf_release(&data);
		strbuf_release(&pb);
		strbuf_release(&js);
	}
	(void)state;
}

/* Every cut of the recording is refused with a message; every corruption is survived. */
static void test_hostile(void **state)
{
	char err[256];
	struct strbuf bad = STRBUF_INIT;
	unsigned seed = 1;

	if (!rec.len)
		skip();
	for (size_t cut = 0; cut < rec.len; cut += cut < 4096 ? 97 : 4099) {
		struct profile *p = profile__new();
		err[0] = 0;
		assert_int_equal(jfr__parse(p, rec.buf, cut, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
		profile__free(p);
	}
	for (int round = 0; round < 300; round++) {
		struct profile *p = profile__new();
		strbuf_reset(&bad);
		strbuf_add(&bad, rec.buf, rec.len);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % rec.len;
			if (round % 3 == 0)
				at %= 512;	/* the header and the first events */
			bad.buf[at] = (char)(seed >> 24);
		}
		err[0] = 0;
		int ret = jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err));
		assert_true(ret == 0 || (ret == -EINVAL && err[0]));
		profile__free(p);
	}
	/* what the messages say */
	struct profile *p = profile__new();
	strbuf_reset(&bad);
	strbuf_add(&bad, rec.buf, rec.len);
	bad.buf[0] = 'X';
	assert_int_equal(jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "magic"));
	profile__free(p);
	p = profile__new();
	bad.buf[0] = 'F';
	memset(bad.buf + 24, 0x7f, 8);	/* the metadata offset */
	assert_int_equal(jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "metadata offset"));
	profile__free(p);
	strbuf_release(&bad);
	(void)state;
}

static void test_merge_generated(void **state)
{
	static const char *const cases[][2] = {
		{ "org/example/OrderService$$Lambda$669.0x0000000800fd7318", "org/example/OrderService$$Lambda_" },
		{ "Fib$$Lambda.0x00007ffa600c4da0", "Fib$$Lambda_" },
		{ "Burn$$Lambda$72/0x00007fa2b0087340", "Burn$$Lambda_" },
		{ "Burn$$Lambda72", "Burn$$Lambda_" },
		{ "Burn$$Lambda$72", "Burn$$Lambda$72" },
		{ "jdk/internal/reflect/GeneratedMethodAccessor31", "jdk/internal/reflect/GeneratedMethodAccessor_" },
		/* left alone */
		{ "jdk/internal/reflect/GeneratedMethodAccessor", "jdk/internal/reflect/GeneratedMethodAccessor" },
		{ "Work$$Lambda$87+0x00007f9d18008a08/2147046752", "Work$$Lambda$87+0x00007f9d18008a08/2147046752" },
		{ "$$Lambda$1", "$$Lambda$1" },
		{ "Burn$$Lambda$72.0x", "Burn$$Lambda$72.0x" },
		{ "java/lang/Thread", "java/lang/Thread" },
		{ "", "" },
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, cases[i][0]);
		jfr__merge_generated(&sb);
		assert_string_equal(sb.buf, cases[i][1]);
	}
	strbuf_release(&sb);
	(void)state;
}

static void test_labels(void **state)
{
	Jfr__LabelEntry le[2] = { JFR__LABEL_ENTRY__INIT, JFR__LABEL_ENTRY__INIT };
	Jfr__LabelEntry *lep[2] = { &le[0], &le[1] };
	Jfr__Context ctx = JFR__CONTEXT__INIT;
	Jfr__ContextEntry ce = JFR__CONTEXT_ENTRY__INIT, *cep = &ce;
	Jfr__StringEntry se[4] = { JFR__STRING_ENTRY__INIT, JFR__STRING_ENTRY__INIT,
				   JFR__STRING_ENTRY__INIT, JFR__STRING_ENTRY__INIT };
	Jfr__StringEntry *sep[4] = { &se[0], &se[1], &se[2], &se[3] };
	Jfr__LabelsSnapshot s = JFR__LABELS_SNAPSHOT__INIT;
	const char *str[4] = { "phase", "alpha", "route", "/api" };
	struct jfr_labels *l;
	char err[256];

	for (int i = 0; i < 4; i++) {
		se[i].key = 10 + i;
		se[i].value.data = (uint8_t *)str[i];
		se[i].value.len = strlen(str[i]);
	}
	le[0].key = 10, le[0].value = 11, le[1].key = 12, le[1].value = 13;
	ctx.n_labels = 2, ctx.labels = lep;
	ce.key = 7, ce.value = &ctx;
	s.n_contexts = 1, s.contexts = &cep, s.n_strings = 4, s.strings = sep;
	uint8_t buf[256];
	size_t n = jfr__labels_snapshot__pack(&s, buf);
	assert_int_equal(jfr__parse_labels(buf, n, &l, err, sizeof(err)), 0);
	const struct jfr_context *c = jfr__context(l, 7);
	assert_non_null(c);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->labels[0].key, "phase");
	assert_string_equal(c->labels[0].value, "alpha");
	assert_string_equal(c->labels[1].value, "/api");
	assert_null(jfr__context(l, 8));
	jfr__free_labels(l);
	/* a label naming a string the snapshot lacks */
	le[1].value = 99;
	n = jfr__labels_snapshot__pack(&s, buf);
	assert_int_equal(jfr__parse_labels(buf, n, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "string id 99"));
	assert_null(l);
	/* not a protobuf */
	assert_int_equal(jfr__parse_labels("\xff\xff\xff", 3, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "LabelsSnapshot"));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_jdk),
		cmocka_unit_test(test_agent_recordings),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_merge_generated),
		cmocka_unit_test(test_labels),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
