/* The per-binary cache of compiled unwind tables (see cache.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind/binary.h"
#include "unwind/cache.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

#define RETRY_NS (10ull * 1000000000ull)	/* a binary that failed is retried after this */
#define KEY_MAX (1 + MAPPING_BUILD_ID_MAX + 16)

struct entry {
	struct unwind_table t;
	int err;		/* < 0: the binary could not be read */
	uint64_t failed_at;	/* when err was set, for the retry */
	size_t bytes;
	struct entry *prev, *next;	/* LRU list, most recent first */
	uint8_t key[KEY_MAX];
	size_t keylen;
};

struct unwind_cache {
	struct hashmap *map;	/* key -> struct entry */
	struct entry lru;	/* list head */
	uint64_t bytes, limit;
	uint64_t builds, evictions;
	bool rows_if_fp;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct unwind_cache *unwind_cache__new(uint64_t limit, bool rows_if_fp)
{
	struct unwind_cache *c = xcalloc(1, sizeof(*c));

	c->map = hashmap__new();
	c->lru.prev = c->lru.next = &c->lru;
	c->limit = limit;
	c->rows_if_fp = rows_if_fp;
	return c;
}

static void entry_free(struct entry *e)
{
	unwind_table_release(&e->t);
	free(e);
}

void unwind_cache__free(struct unwind_cache *c)
{
	if (!c)
		return;
	for (struct entry *e = c->lru.next, *next; e != &c->lru; e = next) {
		next = e->next;
		entry_free(e);
	}
	hashmap__free(c->map);
	free(c);
}

static void lru_unlink(struct entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_push_front(struct unwind_cache *c, struct entry *e)
{
	e->next = c->lru.next;
	e->prev = &c->lru;
	c->lru.next->prev = e;
	c->lru.next = e;
}

/* The cache key of m's binary: its build-id, else device and inode, else the vDSO. */
static size_t make_key(const struct mapping *m, uint8_t *key)
{
	if (m->build_id_len > 0 && m->build_id_len <= MAPPING_BUILD_ID_MAX) {
		key[0] = 'B';
		memcpy(key + 1, m->build_id, m->build_id_len);
		return 1 + (size_t)m->build_id_len;
	}
	if (m->ino != 0) {
		key[0] = 'I';
		memcpy(key + 1, &m->maj, 4);
		memcpy(key + 5, &m->min, 4);
		memcpy(key + 9, &m->ino, 8);
		return 17;
	}
	if (m->path && strcmp(m->path, "[vdso]") == 0) {
		key[0] = 'V';
		return 1;
	}
	return 0;
}

/* Evicts least-recently-used tables, never keep, until the cache fits its limit. */
static void evict(struct unwind_cache *c, const struct entry *keep)
{
	struct entry *e = c->lru.prev;

	while (c->bytes > c->limit && e != &c->lru) {
		struct entry *prev = e->prev;

		if (e != keep) {
			lru_unlink(e);
			hashmap__remove(c->map, e->key, e->keylen);
			c->bytes -= e->bytes;
			c->evictions++;
			entry_free(e);
		}
		e = prev;
	}
}

/* Reads and compiles the binary of m into e. */
static void build(struct unwind_cache *c, struct entry *e, const struct proc_ref *p,
		  const struct mapping *m)
{
	struct unwind_elf b, d = { .fd = -1 };
	struct unwind_sources src = { .rows_if_fp = c->rows_if_fp };
	uint64_t t0 = cpu_ns();

	e->err = unwind_elf_open(&b, p, m);
	if (e->err == 0) {
		src.elf = b.elf;
		/* .eh_frame may cover only the C runtime's few functions when the code was
		 * built -fno-asynchronous-unwind-tables: its .debug_frame is in a debug file */
		if (!unwind_elf_has_section(b.elf, ".debug_frame") &&
		    unwind_elf_open_debug(&d, &b, p, m) == 0)
			src.debug = d.elf;
		e->err = unwind_table_build(&e->t, &src);
		unwind_elf_close(&d);
		unwind_elf_close(&b);
	}
	if (e->err) {
		e->failed_at = now_ns();
		log_debug("failed to read the unwind tables of '%s': %s", m->path ? m->path : "?",
			  strerror(-e->err));
	}
	else
		log_debug("unwind table of '%s': %zu rows in %.1f ms of CPU",
			  m->path ? m->path : "?", e->t.nrows, (double)(cpu_ns() - t0) / 1e6);
	c->builds++;
	e->bytes = sizeof(*e) + (e->err ? 0 : unwind_table_bytes(&e->t));
	c->bytes += e->bytes;
}

const struct unwind_table *unwind_cache__get(struct unwind_cache *c, const struct proc_ref *p,
					     const struct mapping *m)
{
	uint8_t key[KEY_MAX];
	size_t len = make_key(m, key);
	struct entry *e;
	bool created;

	if (len == 0)
		return NULL;
	void **slot = hashmap__insert(c->map, key, len, &created);

	if (created) {
		e = xcalloc(1, sizeof(*e));
		memcpy(e->key, key, len);
		e->keylen = len;
		*slot = e;
		lru_push_front(c, e);
		build(c, e, p, m);
		evict(c, e);
	} else {
		e = *slot;
		if (e != c->lru.next) {
			lru_unlink(e);
			lru_push_front(c, e);
		}
		if (e->err && now_ns() - e->failed_at > RETRY_NS) {
			c->bytes -= e->bytes;
			build(c, e, p, m);
			evict(c, e);
		}
	}
	return e->err ? NULL : &e->t;
}

uint64_t unwind_cache__bytes(const struct unwind_cache *c)
{
	return c->bytes;
}

uint64_t unwind_cache__builds(const struct unwind_cache *c)
{
	return c->builds;
}

uint64_t unwind_cache__evictions(const struct unwind_cache *c)
{
	return c->evictions;
}
