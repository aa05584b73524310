/* An open-addressing map from 64-bit keys to non-zero 32-bit ids: what deduplicates the
 * nodes of a call tree when a node's key is (parent id << 32 | frame id). Used by the
 * SQLite backend's stack dictionary and the server's flamegraph builder.
 *
 * Allocation failure aborts (see util/strbuf.h). Not thread-safe. */
#ifndef KILN_UTIL_IDMAP_H
#define KILN_UTIL_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap;

/* Returns a new, empty map. */
struct idmap *idmap__new(void);
/* Frees the map. Accepts NULL. */
void idmap__free(struct idmap *m);
/* Returns the id of key, or 0 when absent (ids are never 0). */
uint32_t idmap__get(const struct idmap *m, uint64_t key);
/* Sets key to id (non-zero), replacing any previous id. */
void idmap__set(struct idmap *m, uint64_t key, uint32_t id);
/* The number of keys in the map. */
size_t idmap__count(const struct idmap *m);
/* Makes room for n entries in all, so that filling it does not rehash. */
void idmap__reserve(struct idmap *m, size_t n);

#endif
