/* Pyroscope's flamebearer: a call tree flattened into levels of delta-encoded tuples.
 * Single: [x, total, self, name] per node; double (diff): [lx, ltotal, lself, rx, rtotal,
 * rself, name]. Row 0 is the root "total"; children lie left to right sorted by name and
 * start at their parent's offset; x is stored relative to the end of the previous node of
 * the same row. Truncation to maxNodes keeps the nodes of largest total (ties: shallower,
 * then by name, then first built) and folds the others of each parent into one "other"
 * child carrying their samples: the levels hold at most maxNodes nodes (at least 2: the
 * root and one "other"), the root and the "other" nodes included. */
#ifndef KILN_SERVER_FLAMEBEARER_H
#define KILN_SERVER_FLAMEBEARER_H

#include <jansson.h>
#include <stddef.h>

#include "profile/profile.h"
#include "store/store.h"
#include "util/strbuf.h"

/* Returns the "flamebearer" object {names, levels, numTicks, maxSelf} of left (single), or
 * of left against right (double, when right is not NULL: numTicks is their sum). Sets
 * *left_ticks and *right_ticks (may be NULL). Returns a new reference. */
json_t *flamebearer__build(const struct profile *left, const struct profile *right,
			   size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks);

/* The same as JSON text appended to out (what the server sends), and as an object, from
 * a store's call trees (store__select_tree): right may be NULL. */
void flamebearer__write_trees(struct strbuf *out, const struct store_tree *left,
			      const struct store_tree *right, size_t max_nodes,
			      uint64_t *left_ticks, uint64_t *right_ticks);
json_t *flamebearer__build_trees(const struct store_tree *left, const struct store_tree *right,
				 size_t max_nodes, uint64_t *left_ticks, uint64_t *right_ticks);

#endif
