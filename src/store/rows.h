/* Sample rows of the SQLite backend, independent of SQLite: (stack id, count) pairs sorted
 * by stack id, packed into a blob of varints (count of pairs, then per pair the stack-id
 * delta and the count). A blob holds every stack of one series in one time bucket, so a
 * stored stack sample costs 2-4 bytes instead of a table row. */
#ifndef KILN_STORE_ROWS_H
#define KILN_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

struct sample_row {
	uint32_t stack;
	uint64_t count;
};

/* Sorts rows by stack and adds up duplicates in place. Returns the new length. */
size_t rows__normalize(struct sample_row *rows, size_t n);
/* Appends the blob of rows (sorted, unique: see rows__normalize) to out. */
void rows__encode(struct strbuf *out, const struct sample_row *rows, size_t n);
/* Decodes a blob into *rows (malloc'd, caller frees) and *n. Returns 0, or -EINVAL when
 * the blob is malformed. */
int rows__decode(const void *blob, size_t len, struct sample_row **rows, size_t *n);
/* Calls fn(stack, count, arg) for every pair of a blob, without allocating.
 * Returns 0, or -EINVAL when the blob is malformed. */
int rows__each(const void *blob, size_t len, void (*fn)(uint32_t, uint64_t, void *), void *arg);
/* Merges two sorted unique arrays into a new malloc'd one (sum of counts for equal
 * stacks). Returns its length. */
size_t rows__merge(const struct sample_row *a, size_t na, const struct sample_row *b, size_t nb,
		   struct sample_row **out);

#endif
