/* Debug files from debuginfod servers, off the sampling path: see debuginfod.h. */
#include "symbols/debuginfod.h"

#include <dirent.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/debugfile.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

#define DEFAULT_CACHE_BYTES (1ull << 30)
#define DEFAULT_TIMEOUT_MS 10000u
#define MAX_FETCH_S 300		/* one fetch at most, however steadily it progresses */
#define MAX_QUEUE 256		/* binaries waiting for a look (each holds a descriptor) */
#define MAX_FAILURES 3		/* in a row, and the servers are left alone for a while */
#define BACKOFF_S 300
#define BUILD_ID_MAX 64

struct job {
	int fd;
	char *root, *path;
};

struct debuginfod {
	char cache[4096];
	uint64_t cache_bytes;
	unsigned timeout_ms;

	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t cond;
	pthread_t worker;
	bool started, stop, busy;
	struct job queue[MAX_QUEUE];
	unsigned head, nr;
	uint8_t (*fetched)[1 + BUILD_ID_MAX];	/* length, then the id */
	size_t nr_fetched;
	uint64_t generation;	/* atomic */
	struct debuginfod_stats st;

	/* the worker's own */
	struct hashmap *seen;	/* build-id -> (void *)1: looked at already */
	double fetch_start;	/* CLOCK_MONOTONIC s, for the progress callback */
	double last_progress;	/* when the last bytes came */
	long last_bytes;
	bool cancelled;		/* the progress callback ended the fetch */
	unsigned failures;
	double backoff_until;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int mkdirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The progress callback of libdebuginfod, called about every second while a transfer
 * runs or waits: non-zero abandons it. Until a server answers, a counts the callback's
 * calls and b is 0; then a is the bytes received and b the file's size. A fetch ends when
 * no answer, or no byte, came for the time limit (a server down or hanging), after
 * MAX_FETCH_S (a large file on a slow link), or when the agent stops. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct debuginfod *d = debuginfod_get_user_data(c);
	double now = mono_s();
	bool stop;

	pthread_mutex_lock(&d->lock);
	stop = d->stop;
	pthread_mutex_unlock(&d->lock);
	if (b > 0 && a > d->last_bytes) {
		d->last_bytes = a;
		d->last_progress = now;
	}
	if (stop || now - d->last_progress > d->timeout_ms / 1000.0 ||
	    now - d->fetch_start > MAX_FETCH_S)
		d->cancelled = true;
	return d->cancelled;
}

/* A fetch we ended ourselves looks like "no such file" to libdebuginfod 0.188, which
 * then leaves an empty file in the cache that stops it asking for ten minutes: remove it,
 * it was the time limit, not the server's answer. */
static void drop_negative_entry(const struct debuginfod *d, const char *hex)
{
	char path[4096 + 160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/debuginfo", d->cache, hex);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

/* True when the ELF file at fd has a .symtab. */
static bool has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* Looks at one binary: fetches its debug file when it needs one. */
static void process(struct debuginfod *d, debuginfod_client *client, struct job *j)
{
	Elf *e = elf_begin(j->fd, ELF_C_READ, NULL);
	const void *id;
	ssize_t len = e && elf_kind(e) == ELF_K_ELF ? dwelf_elf_gnu_build_id(e, &id) : -1;
	uint8_t idbuf[BUILD_ID_MAX];
	char hex[2 * BUILD_ID_MAX + 1];
	bool created, need;
	char *path = NULL;
	int fd, local;

	if (len <= 0 || len > BUILD_ID_MAX) {
		elf_end(e);
		return;
	}
	memcpy(idbuf, id, (size_t)len);
	hashmap__insert(d->seen, idbuf, (size_t)len, &created);
	need = created && !has_symtab(e);
	if (need) {
		local = debugfile__open(e, j->root, j->path);
		if (local >= 0) {
			close(local);
			need = false;
		}
	}
	elf_end(e);
	if (!need)
		return;
	for (ssize_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", idbuf[i]);
	if (mono_s() < d->backoff_until) {
		/* the servers failed us lately: ask again when the binary is seen again */
		hashmap__remove(d->seen, idbuf, (size_t)len);
		return;
	}
	pthread_mutex_lock(&d->lock);
	d->st.requested++;
	pthread_mutex_unlock(&d->lock);
	d->fetch_start = d->last_progress = mono_s();
	d->last_bytes = 0;
	d->cancelled = false;
	fd = debuginfod_find_debuginfo(client, idbuf, (int)len, &path);
	if (d->cancelled && fd < 0) {
		drop_negative_entry(d, hex);
		fd = -ETIMEDOUT;
	}
	pthread_mutex_lock(&d->lock);
	if (fd >= 0) {
		close(fd);
		d->st.fetched++;
		d->failures = 0;
		d->fetched = xrealloc(d->fetched, (d->nr_fetched + 1) * sizeof(*d->fetched));
		d->fetched[d->nr_fetched][0] = (uint8_t)len;
		memcpy(&d->fetched[d->nr_fetched][1], idbuf, (size_t)len);
		d->nr_fetched++;
		__atomic_add_fetch(&d->generation, 1, __ATOMIC_RELEASE);
		log_debug("fetched the debug file of build-id %s into '%s'", hex, path);
	} else if (fd == -ENOENT) {
		d->st.missing++;
		d->failures = 0;
	} else {
		d->st.failed++;
		log_debug("failed to fetch the debug file of build-id %s: %s", hex, strerror(-fd));
		hashmap__remove(d->seen, idbuf, (size_t)len);
		if (++d->failures >= MAX_FAILURES) {
			d->backoff_until = mono_s() + BACKOFF_S;
			d->failures = 0;
			log_warn("failed to fetch debug files from '%s' %d times in a row (%s): "
				 "not asking again for %d s", getenv(DEBUGINFOD_URLS_ENV_VAR),
				 MAX_FAILURES, strerror(-fd), BACKOFF_S);
		}
	}
	pthread_mutex_unlock(&d->lock);
	free(path);
	if (fd >= 0) {
		int64_t left = debuginfod__trim(d->cache, d->cache_bytes, hex);
		pthread_mutex_lock(&d->lock);
		if (left >= 0)
			d->st.cache_bytes = (uint64_t)left;
		pthread_mutex_unlock(&d->lock);
	}
}

static void *worker_main(void *arg)
{
	struct debuginfod *d = arg;
	debuginfod_client *client = debuginfod_begin();

	if (client) {
		debuginfod_set_user_data(client, d);
		debuginfod_set_progressfn(client, progress);
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct job j;
		while (!d->stop && !d->nr)
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stop)
			break;
		j = d->queue[d->head];
		d->head = (d->head + 1) % MAX_QUEUE;
		d->nr--;
		d->busy = true;
		pthread_mutex_unlock(&d->lock);
		if (client)
			process(d, client, &j);
		close(j.fd);
		free(j.root);
		free(j.path);
		pthread_mutex_lock(&d->lock);
		d->busy = false;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	if (client)
		debuginfod_end(client);
	return NULL;
}

static void default_cache(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg == '/')
		snprintf(buf, size, "%s/kiln/debuginfod", xdg);
	else
		snprintf(buf, size, "%s/.cache/kiln/debuginfod", home && *home ? home : "/root");
}

struct debuginfod *debuginfod__new(const struct debuginfod_config *cfg, char *err,
				   size_t errlen)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct debuginfod *d;
	sigset_t all, old;
	int ret;

	if (!urls || !*urls) {
		errmsg(err, errlen, "no debuginfod servers: $%s is not set",
		       DEBUGINFOD_URLS_ENV_VAR);
		return NULL;
	}
	d = xcalloc(1, sizeof(*d));
	if (cfg && cfg->cache_dir)
		snprintf(d->cache, sizeof(d->cache), "%s", cfg->cache_dir);
	else
		default_cache(d->cache, sizeof(d->cache));
	d->cache_bytes = cfg && cfg->cache_bytes ? cfg->cache_bytes : DEFAULT_CACHE_BYTES;
	d->timeout_ms = cfg && cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	ret = mkdirs(d->cache);
	if (ret < 0) {
		errmsg(err, errlen, "failed to create the debuginfod cache '%s': %s", d->cache,
		       strerror(-ret));
		free(d);
		return NULL;
	}
	/* libdebuginfod reads its cache from the environment at every query; the agent
	 * is still one thread here. A file larger than half the cache is not fetched. */
	setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, d->cache, 1);
	if (!getenv(DEBUGINFOD_MAXSIZE_ENV_VAR)) {
		char max[32];
		snprintf(max, sizeof(max), "%llu", (unsigned long long)(d->cache_bytes / 2));
		setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, max, 1);
	}
	debugfile__set_debuginfod_cache(d->cache);
	elf_version(EV_CURRENT);
	d->seen = hashmap__new();
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	/* Signals (SIGINT, SIGTERM) are the agent's main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&d->worker, NULL, worker_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		errmsg(err, errlen, "failed to start the debuginfod worker: %s", strerror(ret));
		debuginfod__free(d);
		return NULL;
	}
	d->started = true;
	return d;
}

void debuginfod__free(struct debuginfod *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->worker, NULL);
	for (unsigned i = 0; i < d->nr; i++) {
		struct job *j = &d->queue[(d->head + i) % MAX_QUEUE];
		close(j->fd);
		free(j->root);
		free(j->path);
	}
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	hashmap__free(d->seen);
	free(d->fetched);
	free(d);
}

const char *debuginfod__cache_dir(const struct debuginfod *d)
{
	return d->cache;
}

int debuginfod__request(struct debuginfod *d, int fd, const char *root, const char *path)
{
	struct job *j;
	int dup_fd;

	pthread_mutex_lock(&d->lock);
	if (d->nr == MAX_QUEUE) {
		pthread_mutex_unlock(&d->lock);
		return -ENOSPC;
	}
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0) {
		pthread_mutex_unlock(&d->lock);
		return -errno;
	}
	j = &d->queue[(d->head + d->nr) % MAX_QUEUE];
	j->fd = dup_fd;
	j->root = xstrdup(root ? root : "");
	j->path = xstrdup(path ? path : "");
	d->nr++;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

uint64_t debuginfod__generation(const struct debuginfod *d)
{
	return __atomic_load_n(&d->generation, __ATOMIC_ACQUIRE);
}

void debuginfod__take_fetched(struct debuginfod *d,
			      void (*fn)(void *ctx, const uint8_t *id, size_t len), void *ctx)
{
	uint8_t (*list)[1 + BUILD_ID_MAX];
	size_t n;

	pthread_mutex_lock(&d->lock);
	list = d->fetched;
	n = d->nr_fetched;
	d->fetched = NULL;
	d->nr_fetched = 0;
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n; i++)
		fn(ctx, &list[i][1], list[i][0]);
	free(list);
}

struct debuginfod_stats debuginfod__stats(struct debuginfod *d)
{
	struct debuginfod_stats st;

	pthread_mutex_lock(&d->lock);
	st = d->st;
	pthread_mutex_unlock(&d->lock);
	return st;
}

int debuginfod__wait_idle(struct debuginfod *d, unsigned timeout_ms)
{
	struct timespec until = clock__deadline_on(CLOCK_REALTIME, (int)timeout_ms);
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	while ((d->nr || d->busy) && ret == 0)
		ret = pthread_cond_timedwait(&d->cond, &d->lock, &until);
	pthread_mutex_unlock(&d->lock);
	return ret ? -ETIMEDOUT : 0;
}

/* ---- the cache's bound ---- */

struct cache_entry {
	char name[2 * BUILD_ID_MAX + 1];
	uint64_t bytes;
	int64_t used;		/* newest access or change of its files, s */
};

static bool is_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n >= 2 && n <= 2 * BUILD_ID_MAX && !s[n];
}

/* Sums the regular files of one entry (libdebuginfod keeps debuginfo, executable and
 * sources there, one level deep). */
static void entry_scan(int dirfd, struct cache_entry *ce)
{
	int fd = openat(dirfd, ce->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		ce->bytes += (uint64_t)st.st_size;
		if (st.st_atime > ce->used)
			ce->used = st.st_atime;
		if (st.st_mtime > ce->used)
			ce->used = st.st_mtime;
	}
	closedir(d);
}

static void entry_remove(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

static int by_use(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

int64_t debuginfod__trim(const char *dir, uint64_t max, const char *keep_hex)
{
	DIR *d = opendir(dir);
	struct cache_entry *all = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	uint64_t total = 0;
	int dfd;

	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (!is_hex(de->d_name))
			continue;
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			all = xrealloc(all, alloc * sizeof(*all));
		}
		memset(&all[n], 0, sizeof(all[n]));
		memcpy(all[n].name, de->d_name, strlen(de->d_name) + 1);	/* is_hex: fits */
		entry_scan(dfd, &all[n]);
		total += all[n++].bytes;
	}
	qsort(all, n, sizeof(*all), by_use);
	for (size_t i = 0; i < n && total > max; i++) {
		if (keep_hex && !strcmp(all[i].name, keep_hex))
			continue;
		entry_remove(dfd, all[i].name);
		total -= all[i].bytes;
	}
	closedir(d);
	free(all);
	return (int64_t)total;
}
