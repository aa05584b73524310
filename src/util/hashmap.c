#include "util/hashmap.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/strbuf.h"

struct entry {
	uint64_t hash;		/* 0 marks an empty slot */
	void *key;		/* owned copy */
	size_t len;
	void *value;
};

struct hashmap {
	struct entry *slots;
	size_t cap;		/* power of two */
	size_t count;
};

uint64_t hash_bytes(const void *data, size_t len)
{
	uint64_t h = XXH3_64bits(data, len);
	return h ? h : 1;
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *m = xcalloc(1, sizeof(*m));
	m->cap = 16;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	return m;
}

void hashmap__clear(struct hashmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash)
			free(m->slots[i].key);
	memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

void hashmap__free(struct hashmap *m)
{
	if (!m)
		return;
	hashmap__clear(m);
	free(m->slots);
	free(m);
}

size_t hashmap__count(const struct hashmap *m)
{
	return m->count;
}

static struct entry *probe(const struct hashmap *m, uint64_t h, const void *key, size_t len)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct entry *e = &m->slots[i];
		if (!e->hash)
			return e;
		if (e->hash == h && e->len == len && (!len || memcmp(e->key, key, len) == 0))
			return e;
	}
}

static void grow(struct hashmap *m)
{
	struct entry *old = m->slots;
	size_t oldcap = m->cap;

	m->cap *= 2;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].hash)
			continue;
		size_t mask = m->cap - 1, j = old[i].hash & mask;
		while (m->slots[j].hash)
			j = (j + 1) & mask;
		m->slots[j] = old[i];
	}
	free(old);
}

void **hashmap__find(const struct hashmap *m, const void *key, size_t len)
{
	struct entry *e = probe(m, hash_bytes(key, len), key, len);
	return e->hash ? &e->value : NULL;
}

void **hashmap__insert(struct hashmap *m, const void *key, size_t len, bool *created)
{
	uint64_t h = hash_bytes(key, len);
	struct entry *e;

	if (created)
		*created = false;
	if ((m->count + 1) * 4 > m->cap * 3)
		grow(m);
	e = probe(m, h, key, len);
	if (e->hash)
		return &e->value;
	e->hash = h;
	e->key = xmalloc(len);
	if (len)	/* key may be NULL for the empty key: memcpy(dst, NULL, 0) is undefined */
		memcpy(e->key, key, len);
	e->len = len;
	e->value = NULL;
	m->count++;
	if (created)
		*created = true;
	return &e->value;
}

void *hashmap__remove(struct hashmap *m, const void *key, size_t len)
{
	struct entry *e = probe(m, hash_bytes(key, len), key, len);
	size_t mask = m->cap - 1, i, j;
	void *value;

	if (!e->hash)
		return NULL;
	value = e->value;
	free(e->key);
	m->count--;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	i = (size_t)(e - m->slots);
	for (j = (i + 1) & mask; m->slots[j].hash; j = (j + 1) & mask) {
		size_t home = m->slots[j].hash & mask;
		/* Move j to i when its home is not cyclically within (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	return value;
}

bool hashmap__next(const struct hashmap *m, struct hashmap_iter *it,
		   const void **key, size_t *len, void **value)
{
	while (it->pos < m->cap) {
		struct entry *e = &m->slots[it->pos++];
		if (!e->hash)
			continue;
		if (key)
			*key = e->key;
		if (len)
			*len = e->len;
		if (value)
			*value = e->value;
		return true;
	}
	return false;
}
