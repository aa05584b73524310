/* The sampler's record queue: order, wrap-around between records, refusal when full, and
 * one producer thread against one consumer thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "agent/recqueue.h"

static void put(struct recqueue *q, uint32_t tag, size_t len)
{
	uint8_t *p = recqueue__reserve(q, len);

	assert_non_null(p);
	memset(p, (int)(tag & 0xff), len);
	memcpy(p, &tag, len < 4 ? len : 4);
	recqueue__commit(q);
}

static void get(struct recqueue *q, uint32_t tag, size_t len)
{
	size_t n;
	const uint8_t *p = recqueue__peek(q, &n);
	uint32_t got = 0;

	assert_non_null(p);
	assert_int_equal(n, len);
	memcpy(&got, p, len < 4 ? len : 4);
	assert_int_equal(got, tag);
	assert_int_equal(p[len - 1], (len <= 4 ? ((uint8_t *)&tag)[len - 1] : (tag & 0xff)));
	recqueue__pop(q);
}

static void test_order_wrap_full(void **state)
{
	struct recqueue *q = recqueue__new(256);
	size_t n;

	assert_null(recqueue__peek(q, &n));
	put(q, 1, 100);		/* 112 bytes with framing */
	put(q, 2, 100);		/* 224 */
	assert_null(recqueue__reserve(q, 100));	/* full */
	recqueue__commit(q);
	get(q, 1, 100);
	/* 32 bytes left at the end, 112 free at the start: wraps. */
	put(q, 3, 60);
	get(q, 2, 100);
	get(q, 3, 60);
	assert_null(recqueue__peek(q, &n));
	assert_int_equal(recqueue__used(q), 0);
	/* Not committed: not visible. */
	assert_non_null(recqueue__reserve(q, 8));
	assert_null(recqueue__peek(q, &n));
	recqueue__commit(q);
	assert_non_null(recqueue__peek(q, &n));
	recqueue__pop(q);
	recqueue__free(q);
}

#define N 200000

static void *producer(void *arg)
{
	struct recqueue *q = arg;

	for (uint32_t i = 0; i < N;) {
		size_t len = 8 + (i * 37) % 300;
		uint8_t *p = recqueue__reserve(q, len);
		if (!p) {
			recqueue__commit(q);
			continue;
		}
		memset(p, (int)(i & 0xff), len);
		memcpy(p, &i, 4);
		if (++i % 16 == 0)
			recqueue__commit(q);
	}
	recqueue__commit(q);
	return NULL;
}

static void test_threads(void **state)
{
	struct recqueue *q = recqueue__new(4096);
	pthread_t t;

	pthread_create(&t, NULL, producer, q);
	for (uint32_t i = 0; i < N;) {
		size_t n;
		const uint8_t *p = recqueue__peek(q, &n);
		uint32_t got;
		if (!p)
			continue;
		memcpy(&got, p, 4);
		if (got != i || n != 8 + (i * 37) % 300 || p[n - 1] != (i & 0xff))
			fail_msg("record %u: got %u of %zu bytes", i, got, n);
		recqueue__pop(q);
		i++;
	}
	pthread_join(t, NULL);
	recqueue__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_wrap_full),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
