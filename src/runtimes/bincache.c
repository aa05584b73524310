/* The runtime readers' per-file cache (see bincache.h): a hash map by identity and a list
 * in least-recently-used order. */
#include "runtimes/bincache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

struct bin_entry {
	struct bin_id id;
	struct bin_entry *prev, *next;	/* most recently used first */
	max_align_t value[];
};

struct bincache {
	struct hashmap *map;	/* bin_id -> struct bin_entry */
	struct bin_entry head;
	size_t value_size, max;
	uint64_t hits;
};

bool bin_id__of(struct bin_id *id, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start,
		 end);
	if (stat(path, &st) < 0)
		return false;
	memset(id, 0, sizeof(*id));
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = (uint64_t)st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	id->pgoff = pgoff;
	return true;
}

struct bincache *bincache__new(size_t value_size, size_t max)
{
	struct bincache *c = xcalloc(1, sizeof(*c));

	c->map = hashmap__new();
	c->head.prev = c->head.next = &c->head;
	c->value_size = value_size;
	c->max = max ? max : 1;
	return c;
}

void bincache__free(struct bincache *c)
{
	if (!c)
		return;
	for (struct bin_entry *e = c->head.next, *next; e != &c->head; e = next) {
		next = e->next;
		free(e);
	}
	hashmap__free(c->map);
	free(c);
}

static void unlink_entry(struct bin_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void push_front(struct bincache *c, struct bin_entry *e)
{
	e->next = c->head.next;
	e->prev = &c->head;
	c->head.next->prev = e;
	c->head.next = e;
}

void *bincache__find(struct bincache *c, const struct bin_id *id)
{
	void **slot = hashmap__find(c->map, id, sizeof(*id));
	struct bin_entry *e;

	if (!slot)
		return NULL;
	e = *slot;
	unlink_entry(e);
	push_front(c, e);
	c->hits++;
	return e->value;
}

void *bincache__add(struct bincache *c, const struct bin_id *id)
{
	bool created;
	void **slot;
	struct bin_entry *e;

	slot = hashmap__find(c->map, id, sizeof(*id));
	if (slot) {
		e = *slot;
		unlink_entry(e);
		push_front(c, e);
		memset(e->value, 0, c->value_size);
		return e->value;
	}
	if (hashmap__count(c->map) >= c->max) {
		struct bin_entry *old = c->head.prev;

		unlink_entry(old);
		hashmap__remove(c->map, &old->id, sizeof(old->id));
		free(old);
	}
	e = xcalloc(1, sizeof(*e) + c->value_size);
	e->id = *id;
	slot = hashmap__insert(c->map, &e->id, sizeof(e->id), &created);
	*slot = e;
	push_front(c, e);
	return e->value;
}

void *bincache__get(struct bincache *c, const struct bin_id *id,
		    void (*inspect)(void *value, void *ctx), void *ctx)
{
	void *v = bincache__find(c, id);

	if (!v) {
		v = bincache__add(c, id);
		inspect(v, ctx);
	}
	return v;
}

/* bincache__get_mapped's inspect, called through bincache__get's */
struct mapped_inspect {
	void (*inspect)(void *value, const struct bin_mapping *m);
	const struct bin_mapping *m;
};

static void inspect_mapped(void *value, void *ctx)
{
	const struct mapped_inspect *mi = ctx;

	mi->inspect(value, mi->m);
}

void *bincache__get_mapped(struct bincache **c, size_t value_size, size_t max,
			   const struct bin_mapping *m, void *scratch,
			   void (*inspect)(void *value, const struct bin_mapping *m))
{
	struct mapped_inspect mi = { inspect, m };
	struct bin_id id;

	if (!bin_id__of(&id, m->pid, m->start, m->end, m->pgoff)) {
		memset(scratch, 0, value_size);
		inspect(scratch, m);
		return scratch;
	}
	if (!*c)
		*c = bincache__new(value_size, max);
	return bincache__get(*c, &id, inspect_mapped, &mi);
}

size_t bincache__count(const struct bincache *c)
{
	return hashmap__count(c->map);
}

uint64_t bincache__hits(const struct bincache *c)
{
	return c->hits;
}
