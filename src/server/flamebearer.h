/* Pyroscope's flamebearer: a call tree flattened into levels of delta-encoded tuples.
 * Single: [x, total, self, name] per node; double (diff): [lx, ltotal, lself, rx, rtotal,
 * rself, name]. Row 0 is the root "total"; children lie left to right sorted by name and
 * start at their parent's offset; x is stored relative to the end of the previous node of
 * the same row. Nodes below the maxNodes-th largest total are folded into "other". */
#ifndef KILN_SERVER_FLAMEBEARER_H
#define KILN_SERVER_FLAMEBEARER_H

#include <jansson.h>
#include <stddef.h>

#include "profile/profile.h"

/* Returns the "flamebearer" object {names, levels, numTicks, maxSelf} of p (single), or of
 * left against right (double, when right is not NULL: numTicks is their sum). Sets
 * *left_ticks and *right_ticks (may be NULL). Returns a new reference. */
json_t *flamebearer__build(const struct profile *left, const struct profile *right,
			   size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks);

#endif
