/* The profile model and the collapsed-stack format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "profile/profile.h"
#include "profile/ptype.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

static void test_intern_and_add(void **state)
{
	struct profile *p = profile__new();
	const char *a[] = { "main", "alpha" }, *b[] = { "main", "beta" };

	profile__add_names(p, a, 2, 3);
	profile__add_names(p, b, 2, 1);
	profile__add_names(p, a, 2, 4);
	assert_int_equal(profile__nr_stacks(p), 2);
	assert_int_equal(profile__nr_names(p), 3);
	assert_int_equal(profile__total(p), 8);
	struct profile_stack s = profile__stack(p, 0);
	assert_int_equal(s.count, 7);
	assert_string_equal(profile__name(p, s.frames[1]), "alpha");
	profile__free(p);
}

/* A pprof sample without locations is an empty stack; with only those there are no
 * frames at all (profile__stack once computed NULL + 0, UBSan). */
static void test_empty_stack(void **state)
{
	struct profile *p = profile__new(), *q = profile__new();

	profile__add(p, NULL, 0, 5);
	struct profile_stack s = profile__stack(p, 0);
	assert_int_equal(s.depth, 0);
	assert_int_equal(s.count, 5);
	assert_non_null(s.frames);
	profile__merge(q, p);
	assert_int_equal(profile__total(q), 5);
	profile__free(p);
	profile__free(q);
}

static void test_merge_reinterns(void **state)
{
	struct profile *a = profile__new(), *b = profile__new();
	const char *x[] = { "x", "y" }, *y[] = { "y", "x" };

	profile__add_names(a, x, 2, 1);
	profile__add_names(b, y, 2, 2);
	profile__add_names(b, x, 2, 5);
	profile__merge(a, b);
	assert_int_equal(profile__nr_stacks(a), 2);
	assert_int_equal(profile__stack(a, 0).count, 6);
	assert_int_equal(profile__total(a), 8);
	profile__free(a);
	profile__free(b);
}

/* Sample types: a new profile counts samples; set_types replaces them while empty; values
 * add per type; add_type on a profile with stacks gives them 0 of the new type. */
static void test_sample_types(void **state)
{
	struct profile *p = profile__new();
	const struct profile_type heap[] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" } };
	const struct profile_type dup[] = { { "a", "b" }, { "a", "b" } };
	uint32_t f[2] = { profile__intern_str(p, "main"), profile__intern_str(p, "malloc") };
	uint64_t v1[] = { 3, 300 }, v2[] = { 1, 64 };
	struct profile_type t;
	int64_t period = 0;

	assert_int_equal(profile__nr_types(p), 1);
	assert_string_equal(profile__type(p, 0).type, "samples");
	assert_string_equal(profile__type(p, 0).unit, "count");
	assert_false(profile__period(p, &t, &period));
	assert_int_equal(profile__set_types(p, dup, 2), -EINVAL);
	assert_int_equal(profile__set_types(p, heap, 2), 0);
	assert_int_equal(profile__find_type(p, "alloc_space", "bytes"), 1);
	assert_int_equal(profile__find_type(p, "alloc_space", "count"), -1);
	profile__add_values(p, f, 2, 0, v1);
	profile__add_values(p, f, 2, 0, v2);
	profile__add_values(p, f, 1, 0, v2);
	assert_int_equal(profile__set_types(p, heap, 1), -EBUSY);
	assert_int_equal(profile__nr_stacks(p), 2);
	assert_int_equal(profile__stack(p, 0).values[0], 4);
	assert_int_equal(profile__stack(p, 0).values[1], 364);
	assert_int_equal(profile__stack(p, 0).count, 4);
	assert_int_equal(profile__total(p), 5);
	assert_int_equal(profile__type_total(p, 1), 364 + 64);
	assert_int_equal(profile__add_type(p, "inuse_space", "bytes"), 2);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 1);
	assert_int_equal(profile__stack(p, 1).values[1], 64);
	assert_int_equal(profile__stack(p, 1).values[2], 0);
	profile__set_period(p, "space", "bytes", 524288);
	assert_true(profile__period(p, &t, &period));
	assert_string_equal(t.type, "space");
	assert_string_equal(t.unit, "bytes");
	assert_int_equal(period, 524288);
	profile__free(p);
}

/* Label sets are interned whatever the order of their labels; the same frames with other
 * labels are another stack; the last value of a repeated key wins. */
static void test_labels(void **state)
{
	struct profile *p = profile__new();
	const struct profile_label a[] = { { "process", "py" }, { "container", "web" } };
	const struct profile_label b[] = { { "container", "web" }, { "process", "py" } };
	const struct profile_label c[] = { { "process", "py" }, { "process", "java" } };
	uint32_t la = profile__labelset(p, a, 2), lb = profile__labelset(p, b, 2);
	uint32_t lc = profile__labelset(p, c, 2), f = profile__intern_str(p, "main");
	const struct profile_label *l;
	size_t n;

	assert_int_equal(profile__labelset(p, NULL, 0), 0);
	assert_true(la != 0);
	assert_int_equal(la, lb);
	assert_true(lc != la);
	assert_int_equal(profile__nr_labelsets(p), 3);
	l = profile__labels(p, la, &n);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].key, "container");
	assert_string_equal(l[0].value, "web");
	assert_string_equal(l[1].key, "process");
	assert_string_equal(profile__label(p, lc, "process"), "java");
	assert_null(profile__label(p, lc, "container"));
	assert_null(profile__labels(p, 0, &n));
	assert_int_equal(n, 0);
	profile__add_labeled(p, &f, 1, la, 2);
	profile__add_labeled(p, &f, 1, lb, 3);
	profile__add_labeled(p, &f, 1, lc, 1);
	profile__add(p, &f, 1, 7);
	assert_int_equal(profile__nr_stacks(p), 3);
	assert_int_equal(profile__stack(p, 0).count, 5);
	assert_int_equal(profile__stack(p, 0).labels, la);
	assert_int_equal(profile__stack(p, 2).labels, 0);
	assert_int_equal(profile__nr_names(p), 1);	/* label strings are no frames */
	profile__free(p);
}

/* Merging matches sample types by (type, unit), adds what dst lacks, keeps labels; an
 * empty default dst takes src's types and period. */
static void test_merge_types_and_labels(void **state)
{
	struct profile *heap = profile__new(), *cpu = profile__new(), *dst = profile__new();
	const struct profile_type ht[] = { { "inuse_space", "bytes" }, { "alloc_space", "bytes" } };
	const struct profile_type ct[] = { { "samples", "count" }, { "alloc_space", "bytes" } };
	const struct profile_label lab = { "thread", "worker-1" };
	uint32_t f = profile__intern_str(heap, "malloc"), g = profile__intern_str(cpu, "malloc");
	uint32_t l = profile__labelset(heap, &lab, 1);
	uint64_t hv[] = { 10, 20 }, cv[] = { 5, 1 };
	struct profile_type t;
	int64_t period;

	assert_int_equal(profile__set_types(heap, ht, 2), 0);
	profile__set_period(heap, "space", "bytes", 512);
	assert_int_equal(profile__set_types(cpu, ct, 2), 0);
	profile__add_values(heap, &f, 1, l, hv);
	profile__add_values(cpu, &g, 1, 0, cv);
	profile__merge(dst, heap);
	assert_int_equal(profile__nr_types(dst), 2);
	assert_string_equal(profile__type(dst, 0).type, "inuse_space");
	assert_true(profile__period(dst, &t, &period));
	assert_int_equal(period, 512);
	profile__merge(dst, cpu);
	assert_int_equal(profile__nr_types(dst), 3);
	assert_int_equal(profile__find_type(dst, "samples", "count"), 2);
	assert_int_equal(profile__nr_stacks(dst), 2);
	assert_string_equal(profile__label(dst, profile__stack(dst, 0).labels, "thread"), "worker-1");
	assert_int_equal(profile__stack(dst, 0).values[1], 20);
	assert_int_equal(profile__stack(dst, 1).labels, 0);
	assert_int_equal(profile__stack(dst, 1).values[0], 0);
	assert_int_equal(profile__stack(dst, 1).values[1], 1);	/* alloc_space met alloc_space */
	assert_int_equal(profile__stack(dst, 1).values[2], 5);
	assert_int_equal(profile__type_total(dst, 1), 21);
	profile__free(heap), profile__free(cpu), profile__free(dst);
}

/* Profile type ids: Pyroscope's five fields from a profile's sample type and period, the
 * legacy names' types, validation. */
static void test_profile_type_ids(void **state)
{
	static const struct profile_type heap[] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" } };
	struct profile *p = profile__new();
	struct strbuf sb = STRBUF_INIT;
	int rank_samples, rank_cpu;

	ptype__id(&sb, p, 0, NULL);	/* no period: the sample type's own */
	assert_string_equal(sb.buf, "process_cpu:samples:count:samples:count");
	assert_int_equal(profile__set_types(p, heap, 2), 0);
	profile__set_period(p, "space", "bytes", 524288);
	strbuf_reset(&sb);
	ptype__id(&sb, p, 1, NULL);
	assert_string_equal(sb.buf, "memory:alloc_space:bytes:space:bytes");
	strbuf_reset(&sb);
	ptype__id(&sb, p, 0, "custom");
	assert_string_equal(sb.buf, "custom:alloc_objects:count:space:bytes");
	assert_string_equal(ptype__of_service("app.cpu"), PTYPE_CPU_SAMPLES);
	assert_string_equal(ptype__of_service("checkout"), PTYPE_CPU_SAMPLES);
	assert_string_equal(ptype__of_service("app.alloc_objects"), "memory:alloc_objects:count:space:bytes");
	assert_string_equal(ptype__of_service("app.inuse_space"), "memory:inuse_space:bytes:space:bytes");
	assert_string_equal(ptype__suffix("samples", &rank_samples), "cpu");
	assert_string_equal(ptype__suffix("cpu", &rank_cpu), "cpu");
	assert_true(rank_samples < rank_cpu);
	assert_string_equal(ptype__suffix("space", NULL), "inuse_space");
	assert_null(ptype__suffix("bogus", NULL));
	assert_string_equal(ptype__units("alloc_space", "bytes"), "bytes");
	assert_string_equal(ptype__units("inuse_objects", "count"), "objects");
	assert_string_equal(ptype__units("cpu", "nanoseconds"), "samples");
	assert_true(ptype__valid(PTYPE_CPU_SAMPLES));
	assert_false(ptype__valid("cpu"));
	assert_false(ptype__valid("a:b:c:d:"));
	assert_false(ptype__valid("a:b:c:d:e:f"));
	assert_false(ptype__valid("a:b c:c:d:e"));
	strbuf_release(&sb);
	profile__free(p);
}

static void test_col_round_trip(void **state)
{
	static const char text[] =
		"# {\"hostname\": \"h\", \"samples\": 9}\n"
		"0;;python;main;work (app.py:3)_[p] 5\r\n"
		"\n"
		"0;c1;java;Foo.bar_[j] 4\n";
	struct profile *p = profile__new(), *q = profile__new();
	char err[128] = "", *out = NULL;
	size_t outlen = 0;
	FILE *f;

	assert_int_equal(col__parse(p, text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(profile__nr_stacks(p), 2);
	assert_int_equal(profile__total(p), 9);
	struct profile_stack s = profile__stack(p, 0);
	assert_int_equal(s.depth, 5);
	assert_string_equal(profile__name(p, s.frames[1]), "");
	assert_string_equal(profile__name(p, s.frames[4]), "work (app.py:3)_[p]");
	assert_string_equal(json_string_value(json_object_get(profile__meta(p), "hostname")), "h");

	f = open_memstream(&out, &outlen);
	assert_int_equal(col__write(f, p, true), 0);
	fclose(f);
	assert_int_equal(col__parse(q, out, outlen, err, sizeof(err)), 0);
	assert_int_equal(profile__nr_stacks(q), 2);
	assert_int_equal(profile__total(q), 9);
	assert_int_equal(json_integer_value(json_object_get(profile__meta(q), "samples")), 9);
	free(out);
	profile__free(p);
	profile__free(q);
}

/* Labels become gProfiler's prefix when written with the header (not in folded text),
 * names and labels escaped on the way out; col__split_prefix reads the prefix back into
 * labels, the process kept as the root frame when asked. */
static void test_col_labels_prefix(void **state)
{
	struct profile *p = profile__new(), *q = profile__new(), *r, *k;
	const struct profile_label web[] = { { "process", "py;thon" }, { "container", "web" } };
	const struct profile_label bare[] = { { "process", "" } };
	uint32_t f[2] = { profile__intern_str(p, "main"), profile__intern_str(p, "a;b\tc") };
	char err[128] = "", *out = NULL;
	size_t outlen = 0;
	FILE *fp;

	profile__add_labeled(p, f, 2, profile__labelset(p, web, 2), 3);
	profile__add_labeled(p, f, 1, profile__labelset(p, bare, 1), 2);
	profile__add(p, f, 1, 1);	/* no process label: frames verbatim */
	fp = open_memstream(&out, &outlen);
	assert_int_equal(col__write(fp, p, true), 0);
	fclose(fp);
	assert_string_equal(out, "# {}\n0;web;py|thon;main;a|b c 3\n0;;;main 2\nmain 1\n");
	free(out);
	fp = open_memstream(&out, &outlen);
	assert_int_equal(col__write(fp, p, false), 0);
	fclose(fp);
	assert_string_equal(out, "main;a|b c 3\nmain 2\nmain 1\n");
	free(out);

	/* the agent's profile as a flamegraph shows it: the process as the root frame */
	r = col__split_prefix(p, true);
	assert_int_equal(profile__stack(r, 0).depth, 2);	/* labels are no prefix: as it was */
	profile__free(r);
	r = col__process_root(p);
	assert_int_equal(profile__nr_stacks(r), 3);
	struct profile_stack v = profile__stack(r, 0);
	assert_int_equal(v.depth, 3);
	assert_string_equal(profile__name(r, v.frames[0]), "py;thon");
	assert_string_equal(profile__name(r, v.frames[2]), "a;b\tc");
	assert_string_equal(profile__label(r, v.labels, COL_LABEL_CONTAINER), "web");
	v = profile__stack(r, 1);
	assert_int_equal(v.depth, 2);
	assert_string_equal(profile__name(r, v.frames[0]), "");
	assert_int_equal(profile__stack(r, 2).depth, 1);	/* no label, no prefix: as it was */
	profile__free(r);

	static const char text[] = "# {\"frequency\": 11}\n0;web;py;main;work 5\n0;;java;run 4\n";
	assert_int_equal(col__parse(q, text, strlen(text), err, sizeof(err)), 0);
	assert_true(col__has_prefix(q));
	r = col__split_prefix(q, false);
	k = col__split_prefix(q, true);
	assert_int_equal(profile__nr_stacks(r), 2);
	assert_int_equal(profile__total(r), 9);
	struct profile_stack s = profile__stack(r, 0);
	assert_int_equal(s.depth, 2);
	assert_string_equal(profile__name(r, s.frames[0]), "main");
	assert_string_equal(profile__label(r, s.labels, COL_LABEL_CONTAINER), "web");
	assert_string_equal(profile__label(r, s.labels, COL_LABEL_PROCESS), "py");
	s = profile__stack(r, 1);
	assert_null(profile__label(r, s.labels, COL_LABEL_CONTAINER));
	assert_string_equal(profile__label(r, s.labels, COL_LABEL_PROCESS), "java");
	assert_int_equal(json_integer_value(json_object_get(profile__meta(r), "frequency")), 11);
	s = profile__stack(k, 0);
	assert_int_equal(s.depth, 3);
	assert_string_equal(profile__name(k, s.frames[0]), "py");
	/* written again: the same bytes */
	fp = open_memstream(&out, &outlen);
	assert_int_equal(col__write(fp, r, true), 0);
	fclose(fp);
	assert_string_equal(out, "# {\"frequency\":11}\n0;web;py;main;work 5\n0;;java;run 4\n");
	free(out);
	/* one stack without the prefix: nothing is split */
	col__add_stack(q, "main", 4, 1);
	assert_false(col__has_prefix(q));
	profile__free(r);
	r = col__split_prefix(q, false);
	assert_int_equal(profile__stack(r, 0).depth, 5);
	assert_int_equal(profile__stack(r, 0).labels, 0);
	profile__free(p), profile__free(q), profile__free(r), profile__free(k);
}

static void test_col_rejects_bad_lines(void **state)
{
	static const char *const bad[] = {
		"a;b;c\n", "a;b 12x\n", "a;b 99999999999999999999999\n", "# [1,2]\na 1\n", "a;b \n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile *p = profile__new();
		char err[128] = "";
		assert_int_equal(col__parse(p, bad[i], strlen(bad[i]), err, sizeof(err)), -22);
		assert_non_null(strstr(err, "line "));
		profile__free(p);
	}
}

static void test_sanitize(void **state)
{
	char name[] = "Foo.bar([Ljava/lang/String;)V\n";
	assert_string_equal(col__sanitize_frame(name), "Foo.bar([Ljava/lang/String|)V ");
}

static void test_hashmap_grow_remove(void **state)
{
	struct hashmap *m = hashmap__new();
	char key[32];

	for (int i = 0; i < 10000; i++) {
		bool created;
		int n = snprintf(key, sizeof(key), "k%d", i);
		void **slot = hashmap__insert(m, key, (size_t)n, &created);
		assert_true(created);
		*slot = (void *)(uintptr_t)(i + 1);
	}
	for (int i = 0; i < 10000; i += 2) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal((uintptr_t)hashmap__remove(m, key, (size_t)n), i + 1);
	}
	assert_int_equal(hashmap__count(m), 5000);
	for (int i = 0; i < 10000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		void **slot = hashmap__find(m, key, (size_t)n);
		if (i % 2)
			assert_int_equal((uintptr_t)*slot, i + 1);
		else
			assert_null(slot);
	}
	hashmap__free(m);
}

static void test_strbuf(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	strbuf_setlen(&sb, 2);
	assert_string_equal(sb.buf, "0,");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_and_add),
		cmocka_unit_test(test_merge_reinterns),
		cmocka_unit_test(test_sample_types),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_merge_types_and_labels),
		cmocka_unit_test(test_profile_type_ids),
		cmocka_unit_test(test_col_round_trip),
		cmocka_unit_test(test_col_labels_prefix),
		cmocka_unit_test(test_col_rejects_bad_lines),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_empty_stack),
		cmocka_unit_test(test_hashmap_grow_remove),
		cmocka_unit_test(test_strbuf),
	};
	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
