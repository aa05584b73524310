/* server/cache: the render cache's known answers — hits and misses, generations (a newer
 * upload invalidates, a result computed before it is not stored), replacement of a key,
 * least-recently-used eviction by entry count and by bytes, the size limit, NULL — and
 * threads that share one cache and only ever read back their own key's text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/cache.h"

/* Looks key up at gen: the text on a hit (static buffer), NULL on a miss. */
static const char *get(struct render_cache *c, const char *key, uint64_t gen, uint64_t *t0)
{
	static char text[256];
	struct strbuf out = STRBUF_INIT;
	uint64_t ticks[2] = { 0, 0 };
	bool hit = render_cache__get(c, key, gen, &out, ticks);

	if (t0)
		*t0 = ticks[0];
	snprintf(text, sizeof(text), "%s", out.len ? out.buf : "");
	strbuf_release(&out);
	return hit ? text : NULL;
}

static void put(struct render_cache *c, const char *key, uint64_t gen, const char *text)
{
	const uint64_t ticks[2] = { strlen(text), 2 * strlen(text) };

	render_cache__put(c, key, gen, text, strlen(text), ticks);
}

static void test_hit_miss(void **state)
{
	struct render_cache *c = render_cache__new(4, 1024);
	struct strbuf out = STRBUF_INIT;
	uint64_t ticks[2] = { 7, 7 }, t0;

	assert_null(get(c, "a", 1, NULL));
	put(c, "a", 1, "alpha");
	assert_string_equal(get(c, "a", 1, &t0), "alpha");
	assert_int_equal(t0, 5);
	assert_null(get(c, "b", 1, NULL));
	/* a hit appends to what out holds, and sets both ticks */
	strbuf_addstr(&out, "x=");
	assert_true(render_cache__get(c, "a", 1, &out, ticks));
	assert_string_equal(out.buf, "x=alpha");
	assert_int_equal(ticks[0], 5);
	assert_int_equal(ticks[1], 10);
	/* the same key again replaces, it does not add */
	put(c, "a", 1, "omega!");
	assert_string_equal(get(c, "a", 1, NULL), "omega!");
	/* an empty text is a hit too */
	put(c, "e", 1, "");
	assert_string_equal(get(c, "e", 1, NULL), "");
	strbuf_release(&out);
	render_cache__free(c);
}

static void test_generations(void **state)
{
	struct render_cache *c = render_cache__new(4, 1024);

	put(c, "a", 5, "five");
	/* asked at a newer generation: a miss, and the old entry is gone for good */
	assert_null(get(c, "a", 6, NULL));
	assert_null(get(c, "a", 5, NULL));
	/* a result computed at generation 7 is not stored once one of 8 is */
	put(c, "b", 8, "eight");
	put(c, "a", 7, "seven");
	assert_null(get(c, "a", 8, NULL));
	assert_string_equal(get(c, "b", 8, NULL), "eight");
	/* a newer put drops every older entry */
	put(c, "c", 9, "nine");
	assert_null(get(c, "b", 9, NULL));
	assert_string_equal(get(c, "c", 9, NULL), "nine");
	render_cache__free(c);
}

static void test_lru_entries(void **state)
{
	struct render_cache *c = render_cache__new(2, 1024);

	put(c, "a", 1, "A");
	put(c, "b", 1, "B");
	assert_non_null(get(c, "a", 1, NULL));	/* a is now more recent than b */
	put(c, "c", 1, "C");
	assert_null(get(c, "b", 1, NULL));
	assert_string_equal(get(c, "a", 1, NULL), "A");
	assert_string_equal(get(c, "c", 1, NULL), "C");
	render_cache__free(c);

	/* 0 entries means one */
	c = render_cache__new(0, 1024);
	put(c, "a", 1, "A");
	put(c, "b", 1, "B");
	assert_null(get(c, "a", 1, NULL));
	assert_string_equal(get(c, "b", 1, NULL), "B");
	render_cache__free(c);
}

static void test_bytes(void **state)
{
	struct render_cache *c = render_cache__new(8, 10);

	put(c, "a", 1, "123456");
	put(c, "b", 1, "1234");		/* 10 bytes in all: both fit */
	assert_non_null(get(c, "a", 1, NULL));
	assert_non_null(get(c, "b", 1, NULL));
	put(c, "c", 1, "12");		/* 12 > 10: the least recently used (a) goes */
	assert_null(get(c, "a", 1, NULL));
	assert_string_equal(get(c, "b", 1, NULL), "1234");
	assert_string_equal(get(c, "c", 1, NULL), "12");
	/* larger than the whole cache: not kept, and nothing else is evicted for it */
	put(c, "big", 1, "12345678901");
	assert_null(get(c, "big", 1, NULL));
	assert_non_null(get(c, "b", 1, NULL));
	assert_non_null(get(c, "c", 1, NULL));
	/* exactly the whole cache: kept, alone */
	put(c, "full", 1, "1234567890");
	assert_string_equal(get(c, "full", 1, NULL), "1234567890");
	assert_null(get(c, "b", 1, NULL));
	assert_null(get(c, "c", 1, NULL));
	/* replacing a key frees its old bytes first: 10 bytes again fit beside nothing */
	put(c, "full", 1, "abcdefghij");
	assert_string_equal(get(c, "full", 1, NULL), "abcdefghij");
	render_cache__free(c);
}

static void test_null(void **state)
{
	struct strbuf out = STRBUF_INIT;
	uint64_t ticks[2] = { 0, 0 };

	assert_false(render_cache__get(NULL, "a", 1, &out, ticks));
	render_cache__put(NULL, "a", 1, "x", 1, ticks);
	render_cache__free(NULL);
	assert_int_equal(out.len, 0);
}

#define THREADS 4
#define ROUNDS 2000

struct worker {
	struct render_cache *c;
	int id;
	int hits;
	int wrong;
};

/* Puts and gets keys of its own (and reads others'): a hit's text must be its key's. */
static void *work(void *arg)
{
	struct worker *w = arg;
	char key[32], text[64];

	for (int i = 0; i < ROUNDS; i++) {
		struct strbuf out = STRBUF_INIT;
		uint64_t ticks[2];
		int k = (i * 7 + w->id) % 16;

		snprintf(key, sizeof(key), "key-%d", k);
		snprintf(text, sizeof(text), "text of key-%d", k);
		if (i % 3 == 0) {
			ticks[0] = (uint64_t)k;
			ticks[1] = 0;
			render_cache__put(w->c, key, 1, text, strlen(text), ticks);
		} else if (render_cache__get(w->c, key, 1, &out, ticks)) {
			w->hits++;
			if (strcmp(out.buf, text) || ticks[0] != (uint64_t)k)
				w->wrong++;
		}
		strbuf_release(&out);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct render_cache *c = render_cache__new(8, 1 << 20);
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int hits = 0;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ c, i, 0, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].wrong, 0);
		hits += w[i].hits;
	}
	assert_true(hits > 0);
	render_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_miss),
		cmocka_unit_test(test_generations),
		cmocka_unit_test(test_lru_entries),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
