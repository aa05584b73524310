/* util/idmap: known answers for get/set/replace, keys the table treats specially (0, all
 * ones, keys that differ only in high bits), and a fill through many rehashes checked
 * against a plain array, with and without reserve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>

#include "util/idmap.h"

static void test_basics(void **state)
{
	struct idmap *m = idmap__new();

	assert_int_equal(idmap__count(m), 0);
	assert_int_equal(idmap__get(m, 42), 0);
	idmap__set(m, 42, 7);
	assert_int_equal(idmap__get(m, 42), 7);
	assert_int_equal(idmap__get(m, 43), 0);
	assert_int_equal(idmap__count(m), 1);
	/* replacing keeps one entry */
	idmap__set(m, 42, 9);
	assert_int_equal(idmap__get(m, 42), 9);
	assert_int_equal(idmap__count(m), 1);
	/* key 0 and the all-ones key are keys like any other */
	idmap__set(m, 0, 1);
	idmap__set(m, UINT64_MAX, UINT32_MAX);
	assert_int_equal(idmap__get(m, 0), 1);
	assert_int_equal(idmap__get(m, UINT64_MAX), UINT32_MAX);
	assert_int_equal(idmap__count(m), 3);
	idmap__free(m);
	idmap__free(NULL);
}

/* A call tree's keys: parent << 32 | frame. Keys differing only in the parent half, or only
 * in the frame half, must not collide into one entry. */
static void test_tree_keys(void **state)
{
	struct idmap *m = idmap__new();
	uint32_t id = 1;

	for (uint64_t parent = 0; parent < 64; parent++)
		for (uint64_t frame = 0; frame < 64; frame++)
			idmap__set(m, parent << 32 | frame, id++);
	assert_int_equal(idmap__count(m), 64 * 64);
	id = 1;
	for (uint64_t parent = 0; parent < 64; parent++)
		for (uint64_t frame = 0; frame < 64; frame++)
			assert_int_equal(idmap__get(m, parent << 32 | frame), id++);
	assert_int_equal(idmap__get(m, 64ULL << 32), 0);
	assert_int_equal(idmap__get(m, 64), 0);
	idmap__free(m);
}

/* Fills well past the first table (1024 slots) with keys from a fixed LCG, replacing every
 * tenth, and checks every key (and some absent ones) against the reference array. */
static void fill_and_check(size_t n, bool reserve)
{
	struct idmap *m = idmap__new();
	uint64_t *keys = malloc(n * sizeof(*keys)), x = 12345;
	uint32_t *ids = malloc(n * sizeof(*ids));

	assert_non_null(keys);
	assert_non_null(ids);
	if (reserve)
		idmap__reserve(m, n);
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		keys[i] = x;
		ids[i] = (uint32_t)i + 1;
		idmap__set(m, keys[i], ids[i]);
	}
	for (size_t i = 0; i < n; i += 10) {
		ids[i] = (uint32_t)(n + i + 1);
		idmap__set(m, keys[i], ids[i]);
	}
	assert_int_equal(idmap__count(m), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(idmap__get(m, keys[i]), ids[i]);
	/* the LCG's next values were never set */
	for (size_t i = 0; i < 1000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		assert_int_equal(idmap__get(m, x), 0);
	}
	free(keys);
	free(ids);
	idmap__free(m);
}

static void test_grow(void **state)
{
	fill_and_check(100000, false);
}

static void test_reserve(void **state)
{
	fill_and_check(100000, true);
	fill_and_check(10, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_tree_keys),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_reserve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
