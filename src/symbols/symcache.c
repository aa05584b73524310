/* The cache of per-binary symbol tables: see src/symbols/symcache.h. */
#include "symbols/symcache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "symbols/binary.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

#define DEFAULT_CACHE_BYTES (64ull << 20)
#define KEY_MAX (1 + 8 + 4096)

enum bin_state { BIN_NEW, BIN_LOADED, BIN_FAILED };

/* One binary, reachable from the map under every key it is known by. */
struct bin {
	struct bin *prev, *next;	/* LRU list of loaded binaries, most recent first */
	char **keys;
	size_t *keylens;
	size_t nr_keys;
	char *path;			/* as the first process to map it saw it */
	pid_t pid;			/* that process, for its root */
	int fd;				/* pinned descriptor until loaded, or -1 */
	enum bin_state state;
	pid_t failed_pid;		/* BIN_FAILED: the process whose view failed */
	bool has_build_id_key;
	struct elf_symbols syms;
	size_t bytes;			/* accounted in bytes while loaded */
};

struct symcache {
	uint64_t cap;
	struct hashmap *bins;		/* key -> struct bin * (several keys per bin) */
	struct bin *lru_head, *lru_tail;
	uint64_t bytes;
	size_t pinned_fds, max_pinned_fds;
	symcache_open_fn on_open;
	void *on_open_ctx;
};

struct symcache *symcache__new(uint64_t cache_bytes)
{
	struct symcache *s = xcalloc(1, sizeof(*s));
	struct rlimit rl;

	s->cap = cache_bytes ? cache_bytes : DEFAULT_CACHE_BYTES;
	s->bins = hashmap__new();
	/* Pinned descriptors share the process's limit with perf events and sockets. */
	s->max_pinned_fds = 256;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		s->max_pinned_fds = rl.rlim_cur / 4;
	if (s->max_pinned_fds < 16)
		s->max_pinned_fds = 16;
	if (s->max_pinned_fds > 4096)
		s->max_pinned_fds = 4096;
	return s;
}

static void bin_free(struct bin *b)
{
	size_t i;

	if (b->fd >= 0)
		close(b->fd);
	for (i = 0; i < b->nr_keys; i++)
		free(b->keys[i]);
	free(b->keys);
	free(b->keylens);
	free(b->path);
	elf_symbols_release(&b->syms);
	free(b);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

void symcache__free(struct symcache *s)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	size_t n = 0, i, len;
	const void *key;
	void **all, *val;

	if (!s)
		return;
	/* A bin sits under several keys: collect, dedupe, then free each once. */
	all = xmalloc((hashmap__count(s->bins) + 1) * sizeof(*all));
	while (hashmap__next(s->bins, &it, &key, &len, &val))
		all[n++] = val;
	qsort(all, n, sizeof(*all), cmp_ptr);
	for (i = 0; i < n; i++)
		if (!i || all[i] != all[i - 1])
			bin_free(all[i]);
	free(all);
	hashmap__free(s->bins);
	free(s);
}

/* ---- keys ---- */

static size_t key_build_id(char *key, const uint8_t *id, size_t len)
{
	key[0] = 'B';
	memcpy(key + 1, id, len);
	return 1 + len;
}

static size_t key_inode(char *key, const struct mapping *m)
{
	key[0] = 'I';
	memcpy(key + 1, &m->maj, 4);
	memcpy(key + 5, &m->min, 4);
	memcpy(key + 9, &m->ino, 8);
	return 17;
}

static size_t key_path(char *key, const struct proc_ref *p, const struct mapping *m)
{
	int n = snprintf(key, KEY_MAX, "P%d:%s", p ? (int)p->pid : 0, m->path);

	return n < 0 ? 1 : (size_t)n >= KEY_MAX ? KEY_MAX - 1 : (size_t)n;
}

static void bin_add_key(struct symcache *s, struct bin *b, const char *key, size_t len)
{
	bool created;
	void **slot = hashmap__insert(s->bins, key, len, &created);

	if (!created)
		return;
	*slot = b;
	b->keys = xrealloc(b->keys, (b->nr_keys + 1) * sizeof(*b->keys));
	b->keylens = xrealloc(b->keylens, (b->nr_keys + 1) * sizeof(*b->keylens));
	b->keys[b->nr_keys] = xmalloc(len);
	memcpy(b->keys[b->nr_keys], key, len);
	b->keylens[b->nr_keys++] = len;
	if (key[0] == 'B')
		b->has_build_id_key = true;
}

/* The bin of m, created (BIN_NEW) when unknown. Every key m offers ends up naming it. */
static struct bin *bin_get(struct symcache *s, const struct proc_ref *p, const struct mapping *m)
{
	char k[2][KEY_MAX];
	size_t kl[2], nk = 0, i;
	struct bin *b = NULL;

	if (m->build_id_len && m->build_id_len <= MAPPING_BUILD_ID_MAX)
		kl[nk] = key_build_id(k[nk], m->build_id, m->build_id_len), nk++;
	if (m->ino)
		kl[nk] = key_inode(k[nk], m), nk++;
	if (!nk)
		kl[nk] = key_path(k[nk], p, m), nk++;
	for (i = 0; i < nk && !b; i++) {
		void **slot = hashmap__find(s->bins, k[i], kl[i]);

		if (slot)
			b = *slot;
	}
	if (!b) {
		b = xcalloc(1, sizeof(*b));
		b->fd = -1;
		b->path = xstrdup(m->path);
		b->pid = p ? p->pid : 0;
		elf_symbols_init(&b->syms);
	}
	for (i = 0; i < nk; i++)
		bin_add_key(s, b, k[i], kl[i]);
	return b;
}

/* Points every key of b at other and frees b (both are the same binary). b's pinned
 * descriptor goes to other when other has none and is not loaded yet. */
static void bin_merge(struct symcache *s, struct bin *b, struct bin *other)
{
	size_t i;

	if (b->fd >= 0 && other->fd < 0 && other->state != BIN_LOADED) {
		other->fd = b->fd;
		other->pid = b->pid;
		other->state = BIN_NEW;
		b->fd = -1;
	} else if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
		s->pinned_fds--;
	}

	for (i = 0; i < b->nr_keys; i++) {
		void **slot = hashmap__find(s->bins, b->keys[i], b->keylens[i]);

		if (slot)
			hashmap__remove(s->bins, b->keys[i], b->keylens[i]);
		bin_add_key(s, other, b->keys[i], b->keylens[i]);
	}
	bin_free(b);
}

/* Registers b under the build-id read from fd, or merges b into the bin that already has
 * it. Returns the bin to use. */
static struct bin *bin_identify(struct symcache *s, struct bin *b, int fd)
{
	uint8_t id[MAPPING_BUILD_ID_MAX];
	char key[KEY_MAX];
	size_t kl;
	void **slot;
	int n;

	if (b->has_build_id_key || (n = elf__build_id(fd, id, sizeof(id))) <= 0)
		return b;
	kl = key_build_id(key, id, (size_t)n);
	slot = hashmap__find(s->bins, key, kl);
	if (slot && *slot != b) {
		struct bin *other = *slot;

		bin_merge(s, b, other);
		return other;
	}
	bin_add_key(s, b, key, kl);
	return b;
}

/* ---- LRU and eviction ---- */

static void lru_unlink(struct symcache *s, struct bin *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else if (s->lru_head == b)
		s->lru_head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else if (s->lru_tail == b)
		s->lru_tail = b->prev;
	b->prev = b->next = NULL;
}

static void lru_touch(struct symcache *s, struct bin *b)
{
	if (s->lru_head == b)
		return;
	lru_unlink(s, b);
	b->next = s->lru_head;
	if (s->lru_head)
		s->lru_head->prev = b;
	s->lru_head = b;
	if (!s->lru_tail)
		s->lru_tail = b;
}

static void bin_evict(struct symcache *s, struct bin *b)
{
	size_t i;

	lru_unlink(s, b);
	s->bytes -= b->bytes;
	for (i = 0; i < b->nr_keys; i++)
		hashmap__remove(s->bins, b->keys[i], b->keylens[i]);
	bin_free(b);
}

static void evict(struct symcache *s, const struct bin *keep)
{
	while (s->bytes > s->cap && s->lru_tail && s->lru_tail != keep)
		bin_evict(s, s->lru_tail);
}

/* ---- loading ---- */

static void opened(struct symcache *s, int fd, const struct proc_ref *p, const struct mapping *m)
{
	char root[64] = "";

	if (!s->on_open)
		return;
	if (p && p->pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	s->on_open(s->on_open_ctx, fd, root, m->path);
}

void symcache__set_open_hook(struct symcache *s, symcache_open_fn fn, void *ctx)
{
	s->on_open = fn;
	s->on_open_ctx = ctx;
}

void symcache__forget_build_id(struct symcache *s, const uint8_t *id, size_t len)
{
	char key[KEY_MAX];
	void **slot;

	if (!len || len > MAPPING_BUILD_ID_MAX)
		return;
	slot = hashmap__find(s->bins, key, key_build_id(key, id, len));
	if (slot && ((struct bin *)*slot)->state == BIN_LOADED)
		bin_evict(s, *slot);
}

static void bin_close_pin(struct symcache *s, struct bin *b)
{
	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
		s->pinned_fds--;
	}
}

/* Parses b once. Returns b (or the bin it turned out to duplicate), loaded or failed. */
static struct bin *bin_load(struct symcache *s, struct bin *b, const struct proc_ref *p,
			    const struct mapping *m)
{
	char root[64] = "", err[256] = "";
	int fd = b->fd, ret;

	if (b->state == BIN_LOADED)
		return b;
	if (b->state == BIN_FAILED && (!p || p->pid == b->failed_pid))
		return b;
	if (fd < 0) {
		fd = binary__open(p, m);
		if (fd < 0) {
			log_debug("failed to open '%s' of process %d: %s", m->path,
				  p ? (int)p->pid : 0, strerror(-fd));
			b->state = BIN_FAILED;
			b->failed_pid = p ? p->pid : 0;
			return b;
		}
		b->fd = fd;
		b->pid = p ? p->pid : 0;
		s->pinned_fds++;
		b = bin_identify(s, b, fd);
		if (b->state == BIN_LOADED)
			return b;
		opened(s, b->fd, p, m);
	}
	if (b->pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)b->pid);
	ret = elf_symbols__load(&b->syms, b->fd, root, b->path, err, sizeof(err));
	if (ret == -ENOEXEC)	/* executable memory from a non-ELF file: JIT memfds */
		log_debug("failed to read symbols of '%s': %s", b->path, err);
	else if (ret < 0)
		log_warn("failed to read symbols of '%s': %s", b->path, err);
	bin_close_pin(s, b);
	b->state = BIN_LOADED;
	b->bytes = elf_symbols__memory(&b->syms);
	s->bytes += b->bytes;
	lru_touch(s, b);
	evict(s, b);
	return b;
}

int symcache__pin(struct symcache *s, const struct proc_ref *p, const struct mapping *m)
{
	struct bin *b;
	int fd;

	if (!binary__has_file(m))
		return -ENOENT;
	b = bin_get(s, p, m);
	if (b->state == BIN_LOADED || b->fd >= 0)
		return 0;
	fd = binary__open(p, m);
	if (fd < 0) {
		b->state = BIN_FAILED;
		b->failed_pid = p ? p->pid : 0;
		return fd;
	}
	b->fd = fd;
	b->pid = p ? p->pid : 0;
	b->state = BIN_NEW;
	s->pinned_fds++;
	b = bin_identify(s, b, fd);
	if (b->fd >= 0 && b->state == BIN_NEW)
		opened(s, b->fd, p, m);
	/* Too many open descriptors: parse now and keep the table instead. */
	if (b->fd >= 0 && s->pinned_fds > s->max_pinned_fds)
		bin_load(s, b, p, m);
	return 0;
}

const struct elf_symbols *symcache__get(struct symcache *s, const struct proc_ref *p,
				       const struct mapping *m)
{
	struct bin *b;

	if (!binary__has_file(m))
		return NULL;
	b = bin_load(s, bin_get(s, p, m), p, m);
	if (b->state != BIN_LOADED)
		return NULL;
	lru_touch(s, b);
	return &b->syms;
}

uint64_t symcache__memory(const struct symcache *s)
{
	return s->bytes;
}
