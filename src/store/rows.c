#include "store/rows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int row_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct sample_row *)a)->stack, y = ((const struct sample_row *)b)->stack;
	return x < y ? -1 : x > y;
}

size_t rows__normalize(struct sample_row *rows, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(rows, n, sizeof(*rows), row_cmp);
	for (size_t i = 1; i < n; i++) {
		if (rows[i].stack == rows[out].stack)
			rows[out].count += rows[i].count;
		else
			rows[++out] = rows[i];
	}
	return out + 1;
}

static void put_varint(struct strbuf *out, uint64_t v)
{
	unsigned char buf[10];
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (unsigned char)v;
	strbuf_add(out, buf, n);
}

static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p == end)
			return -EINVAL;
		unsigned char b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

void rows__encode(struct strbuf *out, const struct sample_row *rows, size_t n)
{
	uint32_t prev = 0;

	strbuf_grow(out, n * 3 + 4);
	put_varint(out, n);
	for (size_t i = 0; i < n; i++) {
		put_varint(out, rows[i].stack - prev);
		put_varint(out, rows[i].count);
		prev = rows[i].stack;
	}
}

int rows__each(const void *blob, size_t len, void (*fn)(uint32_t, uint64_t, void *), void *arg)
{
	const unsigned char *p = blob, *end = p + len;
	uint64_t n, delta, count, stack = 0;

	if (get_varint(&p, end, &n) || n > len)
		return -EINVAL;
	for (uint64_t i = 0; i < n; i++) {
		if (get_varint(&p, end, &delta) || get_varint(&p, end, &count))
			return -EINVAL;
		stack += delta;
		if (stack > UINT32_MAX || (i && !delta))
			return -EINVAL;
		fn((uint32_t)stack, count, arg);
	}
	return p == end ? 0 : -EINVAL;
}

struct collect {
	struct sample_row *rows;
	size_t n;
};

static void collect_one(uint32_t stack, uint64_t count, void *arg)
{
	struct collect *c = arg;

	c->rows[c->n].stack = stack;
	c->rows[c->n++].count = count;
}

int rows__decode(const void *blob, size_t len, struct sample_row **rows, size_t *n)
{
	const unsigned char *p = blob;
	uint64_t nr;
	struct collect c = { NULL, 0 };
	int ret;

	if (get_varint(&p, p + len, &nr) || nr > len)
		return -EINVAL;
	c.rows = malloc((nr ? nr : 1) * sizeof(*c.rows));
	if (!c.rows)
		abort();
	ret = rows__each(blob, len, collect_one, &c);
	if (ret) {
		free(c.rows);
		return ret;
	}
	*rows = c.rows;
	*n = c.n;
	return 0;
}

size_t rows__merge(const struct sample_row *a, size_t na, const struct sample_row *b, size_t nb,
		   struct sample_row **out)
{
	struct sample_row *r = malloc((na + nb ? na + nb : 1) * sizeof(*r));
	size_t i = 0, j = 0, n = 0;

	if (!r)
		abort();
	while (i < na && j < nb) {
		if (a[i].stack < b[j].stack) {
			r[n++] = a[i++];
		} else if (a[i].stack > b[j].stack) {
			r[n++] = b[j++];
		} else {
			r[n].stack = a[i].stack;
			r[n++].count = a[i++].count + b[j++].count;
		}
	}
	while (i < na)
		r[n++] = a[i++];
	while (j < nb)
		r[n++] = b[j++];
	*out = r;
	return n;
}
