/* Separate debug files fetched by build-id from debuginfod servers (elfutils'
 * libdebuginfod, the $DEBUGINFOD_URLS that perf and gdb read), for the stripped binaries
 * of a distribution whose debug info is not installed.
 *
 * Nothing here runs on the sampling path or blocks a session: the symbol cache hands
 * each newly seen binary to debuginfod__request(), which only queues it; one worker
 * thread looks at it (a .symtab or a local debug file: nothing to do), fetches what is
 * missing, one file at a time, each abandoned when nothing arrives for a time limit or
 * when it takes too long, files larger than half the cache are refused
 * (DEBUGINFOD_MAXSIZE), and it backs off for a while after repeated failures (a server that is down or hangs costs one time limit per
 * few binaries, then nothing). A file fetched lands in an on-disk cache by build-id
 * (<cache>/<build-id>/debuginfo, libdebuginfod's layout), kept under a size bound by
 * removing the least recently used entries; src/symbols/debugfile.c finds it there like
 * any other debug file. The symbolizer asks for the build-ids fetched since it last
 * asked, so that a binary parsed before its file came is parsed again. Thread-safe. */
#ifndef KILN_SYMBOLS_DEBUGINFOD_H
#define KILN_SYMBOLS_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

struct debuginfod_config {
	const char *cache_dir;	/* NULL: $XDG_CACHE_HOME/kiln/debuginfod, else
				 * $HOME/.cache/kiln/debuginfod */
	uint64_t cache_bytes;	/* bound of the cache on disk; 0: 1 GiB */
	unsigned timeout_ms;	/* a fetch that receives nothing this long is abandoned;
				 * 0: 10 s (any fetch ends after 5 minutes) */
};

struct debuginfod_stats {
	uint64_t requested;	/* binaries looked at */
	uint64_t fetched;	/* debug files downloaded (or found in the cache) */
	uint64_t missing;	/* the servers have none */
	uint64_t failed;	/* errors and timeouts */
	uint64_t cache_bytes;	/* the cache's size after the last trim */
};

struct debuginfod;

/* Starts the client and its worker, with the servers of $DEBUGINFOD_URLS. Must be called
 * before the process starts other threads: it points libdebuginfod at the cache through
 * the environment (DEBUGINFOD_CACHE_PATH). Returns NULL, with the reason in err, when
 * $DEBUGINFOD_URLS is empty or unset, or the cache directory cannot be created. */
struct debuginfod *debuginfod__new(const struct debuginfod_config *cfg, char *err,
				   size_t errlen);
/* Stops the worker, abandoning a fetch in progress within about a second, and frees
 * everything. Accepts NULL. */
void debuginfod__free(struct debuginfod *d);

/* The cache directory in use. */
const char *debuginfod__cache_dir(const struct debuginfod *d);

/* Queues a look at the binary open at fd (dup'ed: the caller keeps fd), mapped from path
 * in a process whose root is root ("" for the host). Returns 0 when queued, -ENOSPC when
 * the queue is full (the binary is not looked at), or a negative errno. Never blocks. */
int debuginfod__request(struct debuginfod *d, int fd, const char *root, const char *path);

/* The fetch generation: it changes each time a debug file arrives. Cheap (atomic). */
uint64_t debuginfod__generation(const struct debuginfod *d);
/* Calls fn for each build-id whose debug file arrived since the last call, then forgets
 * them. */
void debuginfod__take_fetched(struct debuginfod *d,
			      void (*fn)(void *ctx, const uint8_t *id, size_t len), void *ctx);

/* Counters since debuginfod__new. */
struct debuginfod_stats debuginfod__stats(struct debuginfod *d);

/* Waits until the queue is empty and no fetch runs, or timeout_ms passed. Returns 0, or
 * -ETIMEDOUT. For tests. */
int debuginfod__wait_idle(struct debuginfod *d, unsigned timeout_ms);

/* Removes least recently used entries of cache directory dir until the files under it
 * take at most max bytes; the entry of build-id keep_hex (may be NULL) stays. Returns the
 * bytes left, or a negative errno. */
int64_t debuginfod__trim(const char *dir, uint64_t max, const char *keep_hex);

#endif
