/* A hash map from byte-string keys to pointer values, open addressing with linear probing.
 * Keys are copied into the map; values belong to the caller. Hashing is xxHash (XXH3).
 *
 *   bool created;
 *   void **slot = hashmap__insert(m, key, len, &created);
 *   if (created) *slot = new_value();
 *
 * Allocation failure aborts (see util/strbuf.h). Not thread-safe. */
#ifndef KILN_UTIL_HASHMAP_H
#define KILN_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap;

struct hashmap_iter {
	size_t pos;
};
#define HASHMAP_ITER_INIT { 0 }

struct hashmap *hashmap__new(void);
/* Frees the map and its copies of the keys, not the values. Accepts NULL. */
void hashmap__free(struct hashmap *m);
size_t hashmap__count(const struct hashmap *m);

/* Returns the value slot of key, or NULL when the key is absent. */
void **hashmap__find(const struct hashmap *m, const void *key, size_t len);
/* Returns the value slot of key, adding the key with a NULL value when absent
 * (then *created is set to true). The slot stays valid until the next insert. */
void **hashmap__insert(struct hashmap *m, const void *key, size_t len, bool *created);
/* Removes key. Returns its value, or NULL when it was absent. */
void *hashmap__remove(struct hashmap *m, const void *key, size_t len);
/* Removes every key; values are the caller's to free first. */
void hashmap__clear(struct hashmap *m);

/* Visits every entry in unspecified order. Returns false when done.
 * The map must not change during a visit. */
bool hashmap__next(const struct hashmap *m, struct hashmap_iter *it,
		   const void **key, size_t *len, void **value);

uint64_t hash_bytes(const void *data, size_t len);

#endif
