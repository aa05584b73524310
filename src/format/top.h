/* The top table: functions by self samples, with their total (inclusive) samples, as
 * `go tool pprof -top` and Pyroscope's table show them. */
#ifndef KILN_FORMAT_TOP_H
#define KILN_FORMAT_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

struct top_row {
	uint32_t name;		/* frame id in the profile */
	uint64_t self;		/* samples where it is the leaf */
	uint64_t total;		/* samples where it is on the stack (once per stack) */
};

/* Computes one row per frame name that appears in a stack, leaving out each stack's first
 * skip frames, sorted by self, then total, descending, then by name. Returns the number of
 * rows and sets *rows (free() it; NULL when there are none). */
size_t top__compute(const struct profile *p, unsigned skip, struct top_row **rows);

/* Writes the first limit rows (0: all) as an aligned text table with shares of the total.
 * Returns 0, or a negative errno when the write failed. */
int top__write(FILE *f, const struct profile *p, unsigned skip, size_t limit);

#endif
