/* OTLP profiles in the earlier Sample numbering (format/otlp_compat.h): a walk over the
 * wire format down to the samples (request 1 → ResourceProfiles 2 → ScopeProfiles 2 →
 * Profile 2 → Sample), which reads or rewrites their tags. */
#include "format/otlp_compat.h"

#include <stdint.h>

/* Reads a varint at *p below end. Returns 0, or -1 when it runs past end or 10 bytes. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			return 0;
	}
	return -1;
}

struct census {
	unsigned earlier, later;
	bool rewrite, bad;
};

/* The path to a Sample: at each depth, the field number that holds the next message. */
static const unsigned path[] = { 1, 2, 2, 2 };

static void walk(uint8_t *b, size_t len, unsigned depth, struct census *c)
{
	const uint8_t *p = b, *end = b + len;

	while (p < end && !c->bad) {
		uint8_t *tag = (uint8_t *)p;
		uint64_t key, n;
		if (varint(&p, end, &key)) {
			c->bad = true;
			return;
		}
		unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
		if (depth == 4 && field >= 2 && field <= 4) {
			bool packed = wt == 2;
			/* a varint 4 is either numbering's (earlier link_index, or later values
			 * unpacked, as Pyroscope's Java agent writes them): it tells nothing */
			if (field == 3 && packed)
				c->earlier++;
			else if ((field == 3 && wt == 0) || (field == 4 && packed))
				c->later++;
			if (c->rewrite && p == tag + 1)	/* one-byte tag: field < 16 */
				*tag = (uint8_t)((field == 2 ? 4 : field == 3 ? 2 : 3) << 3 | wt);
		}
		switch (wt) {
		case 0:
			if (varint(&p, end, &n))
				c->bad = true;
			break;
		case 1:
		case 5:
			if ((size_t)(end - p) < (wt == 1 ? 8u : 4u))
				c->bad = true;
			else
				p += wt == 1 ? 8 : 4;
			break;
		case 2:
			if (varint(&p, end, &n) || n > (uint64_t)(end - p)) {
				c->bad = true;
				break;
			}
			if (depth < 4 && field == path[depth])
				walk((uint8_t *)p, (size_t)n, depth + 1, c);
			p += n;
			break;
		default:
			c->bad = true;
		}
	}
}

bool otlp__earlier_samples(const void *data, size_t len)
{
	struct census c = { 0 };

	walk((uint8_t *)data, len, 0, &c);	/* not written: rewrite is off */
	return !c.bad && c.earlier && !c.later;
}

void otlp__upgrade_samples(void *data, size_t len)
{
	struct census c = { .rewrite = true };

	walk(data, len, 0, &c);
}
