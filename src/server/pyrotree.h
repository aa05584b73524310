/* Pyroscope's tree bytes (the `tree` of SelectMergeStacktraces with PROFILE_FORMAT_TREE):
 * the call tree in pre-order from a nameless root, each node as a varint name length,
 * the name, a varint self value and a varint child count. Nodes whose total is below the
 * max_nodes-th largest are folded into one "other" child of their parent, as Pyroscope
 * truncates. Internal to the server. */
#ifndef KILN_SERVER_PYROTREE_H
#define KILN_SERVER_PYROTREE_H

#include <stddef.h>

#include "profile/profile.h"
#include "store/store.h"
#include "util/strbuf.h"

/* Fills out (initialized, empty) with the call tree of p's stacks (their first value);
 * out's names point into p, which must outlive it. */
void pyrotree__from_profile(const struct profile *p, struct store_tree *out);

/* Appends the tree bytes of t to out, at most max_nodes nodes (0: all) besides the folds. */
void pyrotree__write(struct strbuf *out, const struct store_tree *t, size_t max_nodes);

#endif
