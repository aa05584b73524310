#include "server/cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *key;		/* NULL: free slot */
	char *text;
	size_t len;
	uint64_t gen, ticks[2], used;
};

struct render_cache {
	pthread_mutex_t lock;
	struct entry *v;
	size_t n, max_bytes, bytes;
	uint64_t clock;
};

struct render_cache *render_cache__new(size_t entries, size_t max_bytes)
{
	struct render_cache *c = xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	c->n = entries ? entries : 1;
	c->v = xcalloc(c->n, sizeof(*c->v));
	c->max_bytes = max_bytes;
	return c;
}

static void drop(struct render_cache *c, struct entry *e)
{
	c->bytes -= e->len;
	free(e->key);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

void render_cache__free(struct render_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].key)
			drop(c, &c->v[i]);
	free(c->v);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

bool render_cache__get(struct render_cache *c, const char *key, uint64_t gen,
		       struct strbuf *out, uint64_t ticks[2])
{
	bool hit = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++) {
		struct entry *e = &c->v[i];
		if (!e->key)
			continue;
		if (e->gen != gen) {
			drop(c, e);
			continue;
		}
		if (!hit && !strcmp(e->key, key)) {
			strbuf_add(out, e->text, e->len);
			ticks[0] = e->ticks[0];
			ticks[1] = e->ticks[1];
			e->used = ++c->clock;
			hit = true;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void render_cache__put(struct render_cache *c, const char *key, uint64_t gen,
		       const char *text, size_t len, const uint64_t ticks[2])
{
	struct entry *slot = NULL;

	if (!c || len > c->max_bytes)
		return;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++) {
		struct entry *e = &c->v[i];
		if (e->key && e->gen > gen) {	/* computed before a newer one: stale already */
			pthread_mutex_unlock(&c->lock);
			return;
		}
		if (e->key && (e->gen != gen || !strcmp(e->key, key)))
			drop(c, e);
	}
	/* make room: free slots first, then the least recently used */
	for (;;) {
		struct entry *lru = NULL;
		slot = NULL;
		for (size_t i = 0; i < c->n; i++) {
			struct entry *e = &c->v[i];
			if (!e->key && !slot)
				slot = e;
			else if (e->key && (!lru || e->used < lru->used))
				lru = e;
		}
		if (slot && c->bytes + len <= c->max_bytes)
			break;
		drop(c, lru);	/* not NULL: the cache holds something, or len would fit */
	}
	slot->key = xstrdup(key);
	slot->text = xmalloc(len ? len : 1);
	memcpy(slot->text, text, len);
	slot->len = len;
	slot->gen = gen;
	slot->ticks[0] = ticks[0];
	slot->ticks[1] = ticks[1];
	slot->used = ++c->clock;
	c->bytes += len;
	pthread_mutex_unlock(&c->lock);
}
