/* The profile model and the collapsed-stack format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "profile/profile.h"
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
		cmocka_unit_test(test_col_round_trip),
		cmocka_unit_test(test_col_rejects_bad_lines),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_hashmap_grow_remove),
		cmocka_unit_test(test_strbuf),
	};
	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
