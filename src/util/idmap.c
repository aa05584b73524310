/* An open-addressing map from 64-bit keys to 32-bit ids (see util/idmap.h). Linear
 * probing on a power-of-two table, kept at most 3/4 full; id 0 marks an empty slot, which
 * is why ids are never 0. */
#include "util/idmap.h"

#include <stdlib.h>

#include "util/strbuf.h"

struct idmap {
	uint64_t *keys;
	uint32_t *ids;		/* 0 marks an empty slot */
	size_t cap, count;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

struct idmap *idmap__new(void)
{
	struct idmap *m = xcalloc(1, sizeof(*m));

	m->cap = 1024;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->ids = xcalloc(m->cap, sizeof(*m->ids));
	return m;
}

void idmap__free(struct idmap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->ids);
	free(m);
}

uint32_t idmap__get(const struct idmap *m, uint64_t key)
{
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->ids[i])
			return 0;
		if (m->keys[i] == key)
			return m->ids[i];
	}
}

static void grow(struct idmap *m)
{
	uint64_t *keys = m->keys;
	uint32_t *ids = m->ids;
	size_t cap = m->cap;

	m->cap *= 2;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->ids = xcalloc(m->cap, sizeof(*m->ids));
	for (size_t i = 0; i < cap; i++) {
		if (!ids[i])
			continue;
		size_t j = slot_of(keys[i], m->cap);
		while (m->ids[j])
			j = (j + 1) & (m->cap - 1);
		m->keys[j] = keys[i];
		m->ids[j] = ids[i];
	}
	free(keys);
	free(ids);
}

void idmap__set(struct idmap *m, uint64_t key, uint32_t id)
{
	if ((m->count + 1) * 4 > m->cap * 3)
		grow(m);
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->ids[i]) {
			m->keys[i] = key;
			m->ids[i] = id;
			m->count++;
			return;
		}
		if (m->keys[i] == key) {
			m->ids[i] = id;
			return;
		}
	}
}

void idmap__reserve(struct idmap *m, size_t n)
{
	while (n * 4 > m->cap * 3)
		grow(m);
}

size_t idmap__count(const struct idmap *m)
{
	return m->count;
}
