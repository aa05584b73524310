/* kj_map: open addressing with linear probing and backward-shift deletion, for the
 * agent's caches (method names, compiled methods, thread names). Key 0 marks a free cell. */
#include <stdlib.h>
#include <string.h>

#include "jvm.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t kj_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a, finished by mix() */

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return mix(h) | 1;
}

void kj_map_init(struct kj_map *m)
{
	memset(m, 0, sizeof(*m));
}

void kj_map_release(struct kj_map *m)
{
	free(m->keys);
	free(m->vals);
	kj_map_init(m);
}

uint64_t *kj_map_find(const struct kj_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static int grow(struct kj_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys)), *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t j = 0; j < m->cap; j++) {
		if (!m->keys[j])
			continue;
		size_t i = mix(m->keys[j]) & (cap - 1);
		while (keys[i])
			i = (i + 1) & (cap - 1);
		keys[i] = m->keys[j];
		vals[i] = m->vals[j];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

uint64_t *kj_map_insert(struct kj_map *m, uint64_t key)
{
	uint64_t *v = kj_map_find(m, key);
	size_t i;

	if (v || !key)
		return v;
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return NULL;
	for (i = mix(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->count++;
	return &m->vals[i];
}

bool kj_map_remove(struct kj_map *m, uint64_t key)
{
	uint64_t *v = kj_map_find(m, key);
	size_t i, j;

	if (!v)
		return false;
	i = (size_t)(v - m->vals);
	m->keys[i] = 0;
	m->count--;
	for (j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		size_t home = mix(m->keys[j]) & (m->cap - 1);
		/* move j back to i when i lies cyclically between home and j */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
	return true;
}

bool kj_map_next(const struct kj_map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->keys[*pos]) {
			*key = m->keys[*pos];
			*val = m->vals[*pos];
			(*pos)++;
			return true;
		}
	}
	return false;
}
