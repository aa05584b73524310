/* The JFR reader (format/jfr.h) on what the Pyroscope Java agent uploaded here, kept in
 * tests/unit/data/jfr-async-*: async-profiler's itimer, allocation, wall and lock
 * recordings and a labels snapshot, captured from io.pyroscope:agent 2.9.2 by a loopback
 * HTTP listener. Compared with the JDK's reader (`jfr print --json`) stack by stack,
 * labels joined by context id; and a span's labels. Skipped when there is no `jfr`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/jfr.h"
#include "format/jfr_chunk.h"
#include "format/jfr_labels_priv.h"
#include "jfr_truth.h"
#include "scratch.h"

static bool have_jfr;

static int setup(void **state)
{
	int ret = system("command -v jfr >/dev/null");

	have_jfr = ret == 0;
	(void)state;
	return 0;
}

/* Itimer CPU samples and allocations with the labels snapshot of the same upload, a
 * wall-clock recording and a lock one, read as the JDK reads them (jfr print), labels
 * joined by contextId. */
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

	if (!have_jfr)
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
		truth = NULL;
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

/* An event inside a span, as otel-profiling-java marks it: one ExecutionSample of the
 * agent's recording given spanId 0x2a and a spanName (bytes that were 0, so sizes stay),
 * checked to be that by the JDK's reader, gets Pyroscope's profile_id and span_name
 * labels beside its context's. */
static void test_span_labels(void **state)
{
	struct strbuf data = STRBUF_INIT, pb = STRBUF_INIT, path = STRBUF_INIT, js = STRBUF_INIT;
	struct jfr_labels *labels;
	struct jfr_chunk c;
	uint64_t clen;
	char err[256], tmp[64];
	size_t span_at = 0, name_at = 0;

	if (!have_jfr)
		skip();
	assert_true(strbuf_read_file(&data, "tests/unit/data/jfr-async-itimer-alloc.jfr") >= 0);
	assert_true(strbuf_read_file(&pb, "tests/unit/data/jfr-async-itimer-alloc.labels") >= 0);
	assert_int_equal(jfr__parse_labels(pb.buf, pb.len, &labels, err, sizeof(err)), 0);
	/* a string id of the snapshot that is one LEB128 byte */
	int64_t name_id = 0;
	const char *name = NULL;
	for (int64_t id = 1; id < 128 && !name; id++)
		if ((name = jfr__label_string(labels, id)))
			name_id = id;
	assert_non_null(name);
	/* where the first ExecutionSample with a stack keeps its spanId and spanName */
	assert_int_equal(jfr__chunk_open(&c, (const uint8_t *)data.buf, data.len, &clen, err,
					 sizeof(err)), 0);
	const struct jfr_class *exec = jfr__class_named(&c, "jdk.ExecutionSample");
	assert_non_null(exec);
	struct jfr_rd r = { c.base + JFR_HEADER_SIZE, c.base + c.size, &c };
	while (r.p < r.end && !span_at) {
		const uint8_t *at = r.p;
		uint64_t size = jfr__varint(&r);
		struct jfr_rd ev = { r.p, at + size, &c };
		r.p = at + size;
		if (jfr__varint(&ev) != exec->id)
			continue;
		static const char *const want[] = { "spanId", "spanName", "stackTrace" };
		struct jfr_val v[3];
		assert_int_equal(jfr__read_object(&ev, exec, want, 3, v, 0), 0);
		assert_non_null(v[0].f);
		assert_non_null(v[1].f);
		if (!v[2].u || *v[0].at || *v[1].at)
			continue;
		span_at = (size_t)(v[0].at - c.base);
		name_at = (size_t)(v[1].at - c.base);
	}
	jfr__chunk_release(&c);
	assert_true(span_at && name_at);
	data.buf[span_at] = 0x2a;
	data.buf[name_at] = (char)name_id;
	/* the JDK reads the same */
	assert_int_equal(scratch__make(tmp, sizeof(tmp), "jfr-span"), 0);
	strbuf_addf(&path, "%s/span.jfr", tmp);
	FILE *f = fopen(path.buf, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data.buf, 1, data.len, f), data.len);
	fclose(f);
	strbuf_reset(&path);
	strbuf_addf(&path, "jfr print --json --events jdk.ExecutionSample %s/span.jfr", tmp);
	f = popen(path.buf, "r");
	assert_non_null(f);
	assert_true(strbuf_read_fd(&js, fileno(f)) >= 0);
	assert_int_equal(pclose(f), 0);
	assert_int_equal(scratch__remove(tmp), 0);
	json_t *jt = json_loadb(js.buf, js.len, 0, NULL), *e;
	size_t i, spans = 0;
	assert_non_null(jt);
	json_array_foreach(json_object_get(json_object_get(jt, "recording"), "events"), i, e)
		spans += json_integer_value(json_object_get(json_object_get(e, "values"), "spanId")) == 0x2a;
	assert_int_equal(spans, 1);
	json_decref(jt);
	/* ours */
	struct profile *p = profile__new();
	assert_int_equal(jfr__parse(p, data.buf, data.len, labels, 10000000, NULL, err, sizeof(err)), 0);
	uint64_t in_span = 0;
	for (size_t k = 0; k < profile__nr_stacks(p); k++) {
		struct profile_stack st = profile__stack(p, k);
		const char *id = profile__label(p, st.labels, "profile_id");
		if (!id)
			continue;
		assert_string_equal(id, "000000000000002a");
		assert_string_equal(profile__label(p, st.labels, "span_name"), name);
		in_span += st.values[JFR_CPU] + st.values[JFR_WALL];
	}
	assert_int_equal(in_span, 10000000);	/* the one sample */
	profile__free(p);
	jfr__free_labels(labels);
	strbuf_release(&data);
	strbuf_release(&pb);
	strbuf_release(&path);
	strbuf_release(&js);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_recordings),
		cmocka_unit_test(test_span_labels),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
