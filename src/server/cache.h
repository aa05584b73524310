/* A small cache of rendered flamegraphs for the query endpoints: the flamebearer JSON of a
 * normalized request (service query, time range rounded to the store's resolution,
 * maxNodes), valid only at the store generation it was computed at (store__generation),
 * so that nothing cached is served after an upload or a retention pass. Least recently
 * used entries go first; thread-safe. */
#ifndef KILN_SERVER_CACHE_H
#define KILN_SERVER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

struct render_cache;

/* A cache of at most entries results and max_bytes bytes of text in all. */
struct render_cache *render_cache__new(size_t entries, size_t max_bytes);
/* Accepts NULL. */
void render_cache__free(struct render_cache *c);

/* When key is cached at generation gen, appends its text to out, sets ticks[0..1] and
 * returns true. Entries of another generation are dropped. c may be NULL (no cache). */
bool render_cache__get(struct render_cache *c, const char *key, uint64_t gen,
		       struct strbuf *out, uint64_t ticks[2]);
/* Stores a copy of text[0..len) and ticks under key at generation gen, replacing the
 * least recently used entry when full; text larger than the whole cache is not kept. */
void render_cache__put(struct render_cache *c, const char *key, uint64_t gen,
		       const char *text, size_t len, const uint64_t ticks[2]);

#endif
