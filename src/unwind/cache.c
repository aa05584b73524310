/* The per-binary cache of lazily compiled unwind tables (see cache.h). Two lists: every
 * entry in least-recently-used order (evicted by bytes), and the entries whose CFI is
 * open in least-recently-compiled order (closed by count and idle time). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <elfutils/libdwelf.h>

#include "unwind/binary.h"
#include "unwind/cache.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

#define RETRY_NS (10ull * 1000000000ull)	/* a binary that failed is retried after this */
#define IDLE_NS (30ull * 1000000000ull)	/* open CFI unused this long is closed */
#define MAX_OPEN 128
#define KEY_MAX (1 + MAPPING_BUILD_ID_MAX + 16)
#define MAX_VERDICTS 16384	/* frame-pointer verdicts kept past their tables */

struct entry {
	struct unwind_table t;
	int err;		/* < 0: the binary could not be read */
	uint64_t failed_at;	/* when err was set, for the retry */
	size_t bytes;
	struct entry *prev, *next;	/* LRU list, most recent first */
	/* the open CFI, and what it reads */
	bool open;
	struct unwind_elf b, d;
	struct unwind_cfi cfi;
	struct entry *oprev, *onext;	/* open list, most recently compiled first */
	uint64_t used_at;		/* last compile */
	uint64_t reopen_failed_at;	/* 0, or when reading the binary again failed */
	struct unwind_elf file;		/* the binary's identity when first read (no data) */
	uint8_t key[KEY_MAX];
	size_t keylen;
};

struct unwind_cache {
	struct hashmap *map;	/* key -> struct entry */
	struct hashmap *verdicts;	/* binary (key, size, mtime) -> UNWIND_FP_* */
	struct entry lru;	/* list head */
	struct entry opened;	/* open list head */
	unsigned nopen, max_open;
	uint64_t bytes, limit;
	uint64_t builds, evictions, reopens, fetches;
	uint64_t gets;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

struct unwind_cache *unwind_cache__new(uint64_t limit, bool rows_if_fp)
{
	struct unwind_cache *c = xcalloc(1, sizeof(*c));

	c->map = hashmap__new();
	c->verdicts = hashmap__new();
	c->lru.prev = c->lru.next = &c->lru;
	c->opened.oprev = c->opened.onext = &c->opened;
	c->max_open = MAX_OPEN;
	c->limit = limit;
	(void)rows_if_fp;
	return c;
}

void unwind_cache__set_max_open(struct unwind_cache *c, unsigned n)
{
	c->max_open = n ? n : 1;
}

/* The bytes e holds: its table, and its open CFI with the copies it reads. */
static void account(struct unwind_cache *c, struct entry *e)
{
	c->bytes -= e->bytes;
	e->bytes = sizeof(*e) + unwind_table_bytes(&e->t);
	if (e->open)
		e->bytes += e->b.bytes + e->d.bytes + unwind_cfi_bytes(&e->cfi, &e->t);
	c->bytes += e->bytes;
}

static void close_cfi(struct unwind_cache *c, struct entry *e)
{
	if (!e->open)
		return;
	e->oprev->onext = e->onext;
	e->onext->oprev = e->oprev;
	c->nopen--;
	e->open = false;
	unwind_cfi_close(&e->cfi);
	unwind_elf_close(&e->d);
	unwind_elf_close(&e->b);
	account(c, e);
}

/* Moves e to the front of the open list (adding it), closing the least recently compiled
 * others beyond the limit. */
static void touch_open(struct unwind_cache *c, struct entry *e)
{
	if (e->open) {
		e->oprev->onext = e->onext;
		e->onext->oprev = e->oprev;
	} else {
		e->open = true;
		c->nopen++;
	}
	e->onext = c->opened.onext;
	e->oprev = &c->opened;
	c->opened.onext->oprev = e;
	c->opened.onext = e;
	e->used_at = now_ns();
	while (c->nopen > c->max_open && c->opened.oprev != e)
		close_cfi(c, c->opened.oprev);
}

static void entry_free(struct unwind_cache *c, struct entry *e)
{
	close_cfi(c, e);
	unwind_table_release(&e->t);
	free(e);
}

void unwind_cache__free(struct unwind_cache *c)
{
	if (!c)
		return;
	for (struct entry *e = c->lru.next, *next; e != &c->lru; e = next) {
		next = e->next;
		entry_free(c, e);
	}
	hashmap__free(c->map);
	hashmap__free(c->verdicts);
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

/* Closes the open CFI of the least recently compiled binaries, then evicts the least
 * recently used tables, never keep's, until the cache fits its limit: a closed CFI is
 * cheap to read again, an evicted table must be listed and compiled again. */
static void evict(struct unwind_cache *c, struct entry *keep)
{
	struct entry *e;

	for (e = c->opened.oprev; c->bytes > c->limit && e != &c->opened;) {
		struct entry *prev = e->oprev;

		if (e != keep)
			close_cfi(c, e);
		e = prev;
	}
	e = c->lru.prev;

	while (c->bytes > c->limit && e != &c->lru) {
		struct entry *prev = e->prev;

		if (e != keep) {
			lru_unlink(e);
			hashmap__remove(c->map, e->key, e->keylen);
			close_cfi(c, e);
			c->bytes -= e->bytes;
			c->evictions++;
			entry_free(c, e);
		}
		e = prev;
	}
}

/* Reads the binary of m, and its separate debug file when with_debug says so (-1: when
 * the binary has no .debug_frame of its own), into e->b and e->d; with lazy, .eh_frame
 * only as its entries are needed (see fetch()). */
static int read_binary(struct entry *e, const struct proc_ref *p, const struct mapping *m,
		       int with_debug, bool lazy, struct unwind_sources *src)
{
	int err = lazy ? unwind_elf_open_lazy(&e->b, p, m) : unwind_elf_open(&e->b, p, m);

	memset(&e->d, 0, sizeof(e->d));
	if (err)
		return err;
	src->elf = e->b.elf;
	src->debug = NULL;
	if (with_debug < 0)
		with_debug = !unwind_elf_has_section(e->b.elf, ".debug_frame");
	if (with_debug && unwind_elf_open_debug(&e->d, &e->b, p, m) == 0)
		src->debug = e->d.elf;
	return 0;
}

/* The key of e's frame-pointer verdict: its cache key, and the file's size and mtime (a
 * binary rewritten in place keeps its inode). Returns its length. */
static size_t verdict_key(const struct entry *e, uint8_t *key)
{
	memcpy(key, e->key, e->keylen);
	memcpy(key + e->keylen, &e->b.size, sizeof(e->b.size));
	memcpy(key + e->keylen + sizeof(e->b.size), &e->b.mtime_ns, sizeof(e->b.mtime_ns));
	return e->keylen + sizeof(e->b.size) + sizeof(e->b.mtime_ns);
}

/* Reads and lists the binary of m into e. A binary listed before (its table evicted
 * since) keeps its frame-pointer verdict: 256 FDEs are not compiled again to decide it. */
static void build(struct unwind_cache *c, struct entry *e, const struct proc_ref *p,
		  const struct mapping *m)
{
	struct unwind_sources src = { 0 };
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint8_t vkey[KEY_MAX + 16];
	size_t vlen = 0;

	e->err = read_binary(e, p, m, -1, false, &src);
	if (e->err == 0) {
		void **v;

		vlen = verdict_key(e, vkey);
		if ((v = hashmap__find(c->verdicts, vkey, vlen)))
			src.fp_known = (uint8_t)(uintptr_t)*v;
		e->err = unwind_table_init(&e->t, &src, &e->cfi);
		if (e->err == 0 && !src.fp_known) {
			bool created;

			if (hashmap__count(c->verdicts) >= MAX_VERDICTS)
				hashmap__clear(c->verdicts);
			v = hashmap__insert(c->verdicts, vkey, vlen, &created);
			*v = (void *)(uintptr_t)(e->t.fp_built ? UNWIND_FP_YES : UNWIND_FP_NO);
		}
		e->file = e->b;
		e->file.elf = NULL, e->file.map = e->file.mem = NULL;
		if (e->err == 0 && e->t.nfde > e->t.compiled) {
			touch_open(c, e);
		} else {
			unwind_elf_close(&e->d);
			unwind_elf_close(&e->b);
		}
	}
	if (e->err) {
		e->failed_at = now_ns();
		log_debug("failed to read the unwind tables of '%s': %s", m->path ? m->path : "?",
			  strerror(-e->err));
	} else {
		log_debug("unwind table of '%s': %zu FDEs (%zu sampled for frame pointers) in "
			  "%.1f ms of CPU", m->path ? m->path : "?", e->t.nfde, e->t.nfdes,
			  (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) / 1e6);
	}
	c->builds++;
	account(c, e);
}

/* Reads e's binary again through p to compile more FDEs. Returns false when it cannot be
 * read or is no longer the binary the table was listed from. */
static bool reopen(struct unwind_cache *c, struct entry *e, const struct proc_ref *p,
		   const struct mapping *m)
{
	struct unwind_sources src = { 0 };
	const void *id;
	int err;

	if (e->reopen_failed_at && now_ns() - e->reopen_failed_at < RETRY_NS)
		return false;
	/* the table is listed: with .eh_frame_hdr's table, libdw reads only the entries it
	 * looks up, so the copy needs only those (a megabyte section is not read again) */
	err = read_binary(e, p, m, e->t.secs[SRC_DBG].size != 0, e->t.eh_by_table, &src);
	if (err == 0 && e->key[0] == 'B' &&
	    (dwelf_elf_gnu_build_id(e->b.elf, &id) != (ssize_t)(e->keylen - 1) ||
	     memcmp(id, e->key + 1, e->keylen - 1) != 0))
		err = -ESTALE;
	if (err == 0 && e->key[0] == 'I' && !unwind_elf_same_file(&e->file, &e->b))
		err = -ESTALE;
	if (err == 0)
		err = unwind_cfi_open(&e->cfi, &e->t, &src);
	if (err) {
		unwind_elf_close(&e->d);
		unwind_elf_close(&e->b);
		e->reopen_failed_at = now_ns();
		log_debug("failed to read '%s' again for its unwind table: %s",
			  m->path ? m->path : "?", strerror(-err));
		return false;
	}
	e->reopen_failed_at = 0;
	c->reopens++;
	log_debug("unwind CFI of '%s' read again (%zu KiB; %u open, %llu MiB cached)",
		  m->path ? m->path : "?", (size_t)((e->b.bytes + e->d.bytes) >> 10), c->nopen,
		  (unsigned long long)(c->bytes >> 20));
	touch_open(c, e);
	return true;
}

/* Reads the .eh_frame entries the FDE at vaddr needs into e's lazily read copy. Returns
 * false when they cannot be read (the process is gone, the binary changed): then e's CFI
 * is closed, read again after a few seconds, and nothing is compiled from bytes not read. */
static bool fetch(struct unwind_cache *c, struct entry *e, const struct proc_ref *p,
		  const struct mapping *m, uint64_t vaddr)
{
	uint64_t off;
	int need, err;

	if (!e->b.lazy)
		return true;
	need = unwind_table_eh_entry(&e->t, e->b.elf, vaddr, &off);
	if (need == 0)
		return true;
	err = need < 0 ? -ENOENT : unwind_elf_read_eh(&e->b, p, m, off);
	if (err == 0) {
		c->fetches++;
		return true;
	}
	log_debug("failed to read an FDE of '%s': %s", m->path ? m->path : "?", strerror(-err));
	close_cfi(c, e);
	e->reopen_failed_at = now_ns();
	return false;
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
	if ((++c->gets & 1023) == 0 && c->nopen && now_ns() - c->opened.oprev->used_at > IDLE_NS)
		close_cfi(c, c->opened.oprev);	/* one idle CFI closed per 1,024 frames */
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
			build(c, e, p, m);
			evict(c, e);
		}
	}
	return e->err ? NULL : &e->t;
}

const struct unwind_rule *unwind_cache__find(struct unwind_cache *c, const struct unwind_table *t,
					     const struct proc_ref *p, const struct mapping *m,
					     uint64_t vaddr)
{
	struct entry *e = (struct entry *)((char *)t - offsetof(struct entry, t));
	size_t compiled = e->t.compiled;
	const struct unwind_rule *r;
	bool need = false;

	if (!e->open) {
		r = unwind_table_find(&e->t, vaddr, NULL, &need);
		if (!need || !reopen(c, e, p, m))
			return r;
	}
	if (!fetch(c, e, p, m, vaddr))
		return NULL;
	r = unwind_table_find(&e->t, vaddr, &e->cfi, NULL);
	if (e->t.compiled != compiled) {
		touch_open(c, e);
		account(c, e);
		evict(c, e);
	}
	return r;
}

uint64_t unwind_cache__table_bytes(const struct unwind_cache *c, const struct unwind_table *t)
{
	(void)c;
	return ((const struct entry *)((const char *)t - offsetof(struct entry, t)))->bytes;
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

uint64_t unwind_cache__reopens(const struct unwind_cache *c)
{
	return c->reopens;
}

uint64_t unwind_cache__fetches(const struct unwind_cache *c)
{
	return c->fetches;
}

unsigned unwind_cache__open(const struct unwind_cache *c)
{
	return c->nopen;
}
