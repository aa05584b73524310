/* pprof writer and reader: round trip, plain and gzipped input, sample type choice,
 * inlined lines and unsymbolized locations, and bad input giving -EINVAL with a message.
 * `go tool pprof` reading our output and Go's output read by us: tests/e2e/pprof_go.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/col.h"
#include "format/pprof.h"
#include "profile.pb-c.h"

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile as sorted folded text, to compare profiles whatever their ids. */
static char *folded(const struct profile *p)
{
	char *buf = NULL, *lines[256], *save = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&buf, &len);
	struct strbuf out = STRBUF_INIT;

	col__write(f, p, false);
	fclose(f);
	for (char *l = strtok_r(buf, "\n", &save); l && n < 256; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&out, "%s\n", lines[i]);
	free(buf);
	return strbuf_detach(&out, NULL);
}

static struct profile *sample_profile(void)
{
	struct profile *p = profile__new();
	const char *a[] = { "0", "", "py", "main", "work (app.py:3)_[p]" };
	const char *b[] = { "0", "c1", "java", "Foo.bar_[j]", "do_syscall_64_[k]" };
	const char *c[] = { "main", "main" };	/* recursion: the same frame twice */

	profile__add_names(p, a, 5, 7);
	profile__add_names(p, b, 5, 3);
	profile__add_names(p, c, 2, 1);
	json_object_set_new(profile__meta(p), "frequency", json_integer(99));
	return p;
}

static void test_round_trip(void **state)
{
	struct profile *p = sample_profile(), *q = profile__new(), *r = profile__new();
	struct strbuf pb = STRBUF_INIT;
	char err[256] = "", *x, *y;

	assert_int_equal(pprof__write(&pb, p), 0);
	assert_true(pb.len > 20 && (uint8_t)pb.buf[0] == 0x1f && (uint8_t)pb.buf[1] == 0x8b);
	assert_int_equal(pprof__parse(q, pb.buf, pb.len, NULL, err, sizeof(err)), 0);
	x = folded(p), y = folded(q);
	assert_string_equal(x, y);
	free(y);
	/* the frequency survives, so the cpu values scale back to the same counts */
	assert_true(json_real_value(json_object_get(profile__meta(q), "frequency")) > 98.99);
	strbuf_reset(&pb);
	assert_int_equal(pprof__write(&pb, q), 0);
	assert_int_equal(pprof__parse(r, pb.buf, pb.len, "samples", err, sizeof(err)), 0);
	y = folded(r);
	assert_string_equal(x, y);
	free(x), free(y);
	strbuf_release(&pb);
	profile__free(p), profile__free(q), profile__free(r);
}

static void test_plain_and_sample_type(void **state)
{
	struct profile *p = sample_profile(), *q = profile__new();
	struct strbuf pb = STRBUF_INIT;
	char err[256] = "";
	uint8_t *raw = xmalloc(1 << 16);
	z_stream zs = { 0 };

	assert_int_equal(pprof__write(&pb, p), 0);
	/* the same profile without gzip */
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)pb.buf, zs.avail_in = (uInt)pb.len;
	zs.next_out = raw, zs.avail_out = 1 << 16;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	inflateEnd(&zs);
	assert_int_equal(pprof__parse(q, raw, zs.total_out, NULL, err, sizeof(err)), 0);
	assert_int_equal(profile__total(q), 11);
	profile__free(q);
	q = profile__new();
	assert_int_equal(pprof__parse(q, pb.buf, pb.len, "cpu", err, sizeof(err)), 0);
	/* cpu/nanoseconds at 99 Hz: 7 samples are 7 * 10101010 ns */
	assert_int_equal(profile__total(q), 11 * (uint64_t)10101010);
	assert_int_equal(pprof__parse(q, pb.buf, pb.len, "alloc_space", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "profile has no sample type 'alloc_space'");
	free(raw);
	strbuf_release(&pb);
	profile__free(p), profile__free(q);
}

/* A profile built by hand as another producer would: an inlined call in one location, a
 * location with no lines inside a mapping, and no gzip. */
static void test_inline_and_unsymbolized(void **state)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vtp = &vt;
	Perftools__Profiles__Function f[2], *fp[2] = { &f[0], &f[1] };
	Perftools__Profiles__Line ln[2], *lnp[2] = { &ln[0], &ln[1] };
	Perftools__Profiles__Location loc[2], *locp[2] = { &loc[0], &loc[1] };
	Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT, *mp = &m;
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT, *sp = &s;
	char *strings[] = { "", "samples", "count", "outer", "inlined", "/usr/lib/libz.so.1" };
	uint64_t ids[] = { 2, 1 };	/* leaf first: the unsymbolized one is the leaf */
	int64_t value = 5;
	struct profile *p = profile__new();
	char err[256] = "", *x;
	uint8_t buf[1024];
	size_t len;

	for (int i = 0; i < 2; i++) {
		perftools__profiles__function__init(&f[i]);
		f[i].id = 10 + i, f[i].name = 3 + i;
		perftools__profiles__line__init(&ln[i]);
		perftools__profiles__location__init(&loc[i]);
	}
	ln[0].function_id = 11, ln[1].function_id = 10;	/* inlined into outer */
	loc[0].id = 1, loc[0].n_line = 2, loc[0].line = lnp;
	loc[1].id = 2, loc[1].mapping_id = 7, loc[1].address = 0x7f0000001234;
	m.id = 7, m.memory_start = 0x7f0000000000, m.file_offset = 0x1000, m.filename = 5;
	vt.type = 1, vt.unit = 2;
	s.n_location_id = 2, s.location_id = ids, s.n_value = 1, s.value = &value;
	pr.n_sample_type = 1, pr.sample_type = &vtp, pr.n_sample = 1, pr.sample = &sp;
	pr.n_mapping = 1, pr.mapping = &mp, pr.n_location = 2, pr.location = locp;
	pr.n_function = 2, pr.function = fp, pr.n_string_table = 6, pr.string_table = strings;
	len = perftools__profiles__profile__pack(&pr, buf);
	assert_int_equal(pprof__parse(p, buf, len, NULL, err, sizeof(err)), 0);
	x = folded(p);
	assert_string_equal(x, "outer;inlined;(libz.so.1+0x2234) 5\n");
	free(x);
	/* a sample pointing at a location that is not there */
	ids[0] = 99;
	len = perftools__profiles__profile__pack(&pr, buf);
	assert_int_equal(pprof__parse(p, buf, len, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sample refers to missing location 99");
	/* a function name outside the string table */
	ids[0] = 2, f[0].name = 600;
	len = perftools__profiles__profile__pack(&pr, buf);
	assert_int_equal(pprof__parse(p, buf, len, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "location 1 has a bad function");
	assert_int_equal(profile__total(p), 5);	/* failed parses changed nothing */
	profile__free(p);
}

/* Every sample type, the period and string labels survive a round trip; a sampled
 * profile gets its period's type derived from its counts; one type can be chosen. */
static void test_types_labels_round_trip(void **state)
{
	static const struct profile_type heap[] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	const struct profile_label l1[] = { { "thread", "worker-1" }, { "process", "app" } };
	const struct profile_label l2[] = { { "process", "app" }, { "container", "" } };
	struct profile *p = profile__new(), *q = profile__new(), *r = profile__new();
	struct strbuf pb = STRBUF_INIT;
	uint32_t f[2] = { profile__intern_str(p, "main"), profile__intern_str(p, "malloc") };
	uint64_t v1[] = { 2, 2048, 1, 1024 }, v2[] = { 3, 96, 0, 0 };
	struct profile_type t;
	int64_t period = 0;
	char err[256] = "";

	assert_int_equal(profile__set_types(p, heap, 4), 0);
	profile__set_period(p, "space", "bytes", 524288);
	profile__add_values(p, f, 2, profile__labelset(p, l1, 2), v1);
	profile__add_values(p, f, 1, profile__labelset(p, l2, 2), v2);
	assert_int_equal(pprof__write(&pb, p), 0);
	assert_int_equal(pprof__parse(q, pb.buf, pb.len, NULL, err, sizeof(err)), 0);
	assert_int_equal(profile__nr_types(q), 4);	/* space/bytes is no sample type: not derived */
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(profile__type(q, i).type, heap[i].type);
		assert_string_equal(profile__type(q, i).unit, heap[i].unit);
		assert_int_equal(profile__type_total(q, i), v1[i] + v2[i]);
	}
	assert_true(profile__period(q, &t, &period));
	assert_string_equal(t.type, "space");
	assert_string_equal(t.unit, "bytes");
	assert_int_equal(period, 524288);
	assert_int_equal(profile__nr_stacks(q), 2);
	struct profile_stack s = profile__stack(q, 0);
	assert_int_equal(s.depth, 2);
	assert_string_equal(profile__name(q, s.frames[1]), "malloc");
	assert_int_equal(s.values[3], 1024);
	assert_string_equal(profile__label(q, s.labels, "thread"), "worker-1");
	assert_string_equal(profile__label(q, s.labels, "process"), "app");
	s = profile__stack(q, 1);
	assert_string_equal(profile__label(q, s.labels, "process"), "app");
	assert_null(profile__label(q, s.labels, "container"));	/* empty: not written */
	assert_int_equal(s.values[1], 96);
	/* one type only */
	assert_int_equal(pprof__parse(r, pb.buf, pb.len, "inuse_space", err, sizeof(err)), 0);
	assert_int_equal(profile__nr_types(r), 1);
	assert_string_equal(profile__type(r, 0).unit, "bytes");
	assert_int_equal(profile__total(r), 1024);
	profile__free(r);

	/* samples/count with a cpu/nanoseconds period: both types, no frequency needed */
	r = profile__new();
	profile__set_period(r, "cpu", "nanoseconds", 1000);
	f[0] = profile__intern_str(r, "idle");
	profile__add(r, f, 1, 0);	/* an empty stack is not written */
	f[0] = profile__intern_str(r, "main");
	profile__add(r, f, 1, 7);
	strbuf_reset(&pb);
	assert_int_equal(pprof__write(&pb, r), 0);
	profile__free(q);
	q = profile__new();
	assert_int_equal(pprof__parse(q, pb.buf, pb.len, NULL, err, sizeof(err)), 0);
	assert_int_equal(profile__nr_types(q), 2);
	assert_int_equal(profile__find_type(q, "cpu", "nanoseconds"), 1);
	assert_int_equal(profile__type_total(q, 1), 7000);
	assert_int_equal(profile__nr_stacks(q), 1);
	strbuf_release(&pb);
	profile__free(p), profile__free(q), profile__free(r);
}

static void test_corrupt(void **state)
{
	struct profile *p = sample_profile(), *q = profile__new();
	struct strbuf pb = STRBUF_INIT;
	char err[256];
	static const char junk[] = "this is not a profile at all";

	assert_int_equal(pprof__write(&pb, p), 0);
	/* every truncation of the gzip stream is an error with a message, never a crash */
	for (size_t cut = 0; cut < pb.len; cut++) {
		err[0] = 0;
		int ret = pprof__parse(q, pb.buf, cut, NULL, err, sizeof(err));
		assert_int_equal(ret, -EINVAL);
		assert_true(err[0] != 0);
		/* too short to be gzip: nothing, or the byte 0x1f read as a protobuf tag (field 3,
		 * wire type 7, which does not exist) */
		if (cut == 0)
			assert_string_equal(err, "not a pprof profile: empty input");
		if (cut == 1)
			assert_string_equal(err, "not a pprof profile: protobuf decoding failed");
	}
	assert_int_equal(pprof__parse(q, junk, sizeof(junk) - 1, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "not a pprof profile: protobuf decoding failed");
	assert_int_equal(profile__total(q), 0);
	strbuf_release(&pb);
	profile__free(p), profile__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_plain_and_sample_type),
		cmocka_unit_test(test_inline_and_unsymbolized),
		cmocka_unit_test(test_types_labels_round_trip),
		cmocka_unit_test(test_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
