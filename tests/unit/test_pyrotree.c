/* Pyroscope's tree bytes (server/pyrotree.h): a known tree byte for byte, and truncation
 * that keeps every sample while bounding the nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "format/col.h"
#include "server/pyrotree.h"

/* Walks tree bytes: the number of nodes and the sum of self values; -1 when malformed. */
static long walk(const unsigned char *b, size_t len, uint64_t *total)
{
	size_t at = 0, pending = 1;
	long nodes = 0;

	*total = 0;
	while (pending) {
		uint64_t v[3];
		for (int f = 0; f < 3; f++) {
			v[f] = 0;
			for (int shift = 0;; shift += 7) {
				if (at >= len || shift > 63)
					return -1;
				v[f] |= (uint64_t)(b[at] & 0x7f) << shift;
				if (!(b[at++] & 0x80))
					break;
			}
			if (f == 0) {
				if (len - at < v[0])
					return -1;
				at += v[0];
			}
		}
		*total += v[1];
		pending += v[2];
		pending--;
		nodes++;
	}
	return at == len ? nodes : -1;
}

static void test_known(void **state)
{
	struct profile *p = profile__new();
	struct store_tree t;
	struct strbuf out = STRBUF_INIT;
	static const char text[] = "a;b 3\na;c 2\na 1\n";

	assert_int_equal(col__parse(p, text, strlen(text), NULL, 0), 0);
	store_tree_init(&t);
	pyrotree__from_profile(p, &t);
	pyrotree__write(&out, &t, 0);
	/* root "" self 0, one child; a self 1, two children; b 3; c 2 */
	static const unsigned char want[] = { 0, 0, 1, 1, 'a', 1, 2, 1, 'b', 3, 0, 1, 'c', 2, 0 };
	assert_int_equal(out.len, sizeof(want));
	assert_memory_equal(out.buf, want, sizeof(want));
	strbuf_release(&out);
	store_tree_release(&t);
	profile__free(p);
}

static void test_truncated(void **state)
{
	struct profile *p = profile__new();
	struct store_tree t;
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	uint64_t total = 0, want = 0;

	for (int i = 0; i < 500; i++) {
		strbuf_addf(&text, "main;f%d;g%d %d\n", i % 50, i, i + 1);
		want += (uint64_t)i + 1;
	}
	assert_int_equal(col__parse(p, text.buf, text.len, NULL, 0), 0);
	store_tree_init(&t);
	pyrotree__from_profile(p, &t);
	pyrotree__write(&out, &t, 64);
	long nodes = walk((const unsigned char *)out.buf, out.len, &total);
	assert_true(nodes > 1);
	assert_int_equal(total, want);		/* folded into "other", never lost */
	assert_true(nodes <= 1 + 64 + 51);	/* the kept ones, at most one "other" per parent */
	assert_non_null(memmem(out.buf, out.len, "other", 5));
	strbuf_release(&out);
	strbuf_release(&text);
	store_tree_release(&t);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
