/* The earlier OTLP Sample numbering (format/otlp_compat.h): a request whose sample has
 * packed values in 2, packed attribute_indices in 3 and link_index in 4 is detected and
 * renumbered to 4, 2 and 3, byte for byte; one in the later numbering (packed or not),
 * one whose samples say nothing either way, and a malformed one are left as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "format/otlp_compat.h"

/* Request{1 ResourceProfiles{2 ScopeProfiles{2 Profile{2 Sample{...}}}}} with a
 * 10-byte sample. */
static size_t request(uint8_t *out, const uint8_t sample[10])
{
	const uint8_t head[] = { 0x0a, 16, 0x12, 14, 0x12, 12, 0x12, 10 };

	memcpy(out, head, sizeof(head));
	memcpy(out + sizeof(head), sample, 10);
	return sizeof(head) + 10;
}

static void test_renumber(void **state)
{
	/* stack_index 1; values [7]; attribute_indices [1]; link_index 2 */
	const uint8_t earlier[10] = { 0x08, 1, 0x12, 1, 7, 0x1a, 1, 1, 0x20, 2 };
	const uint8_t later[10] = { 0x08, 1, 0x22, 1, 7, 0x12, 1, 1, 0x18, 2 };
	const uint8_t moot[10] = { 0x08, 1, 0x12, 1, 7, 0x2a, 3, 1, 2, 3 };	/* 2 and 5 */
	uint8_t buf[32], want[32];
	size_t n = request(buf, earlier);

	assert_true(otlp__earlier_samples(buf, n));
	assert_false(otlp__earlier_samples(buf, n - 3));	/* cut short: malformed */
	otlp__upgrade_samples(buf, n);
	assert_int_equal(request(want, later), n);
	assert_memory_equal(buf, want, n);
	assert_false(otlp__earlier_samples(buf, n));	/* now the later numbering */
	n = request(buf, moot);
	assert_false(otlp__earlier_samples(buf, n));
	/* the later numbering with values unpacked (Pyroscope's Java agent): left alone */
	const uint8_t unpacked[10] = { 0x08, 1, 0x12, 2, 1, 2, 0x20, 7, 0x20, 8 };
	n = request(buf, unpacked);
	assert_false(otlp__earlier_samples(buf, n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_renumber),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
