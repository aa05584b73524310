/* What a runtime reader found in a mapped file, remembered by the file's identity, so that
 * the next process of the same binary costs a stat, not an ELF open and a symbol search:
 * the node, php and python readers each keep one (a reader's own value type, filled by
 * its own inspect function). Bounded: past its size the least recently used file is
 * forgotten. A file replaced on disk (new inode, size or mtime) is a new one. Not
 * thread-safe: each reader uses its cache from the session's thread only. */
#ifndef KILN_RUNTIMES_BINCACHE_H
#define KILN_RUNTIMES_BINCACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A mapped file as stat() sees it through /proc/PID/map_files, and the offset it is
 * mapped at (a reader's findings are relative to the segment). */
struct bin_id {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint64_t pgoff;
};

/* Fills id for the mapping [start, end) at pgoff of process pid. Returns false when the
 * file cannot be stat'd (the process is gone, no permission). */
bool bin_id__of(struct bin_id *id, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff);

struct bincache;

/* A cache of values of value_size bytes for at most max files. */
struct bincache *bincache__new(size_t value_size, size_t max);
void bincache__free(struct bincache *c);	/* accepts NULL */

/* Returns the value of file id: found, or zeroed, filled by inspect(value, ctx) and kept.
 * The pointer is valid until the next call on c. */
void *bincache__get(struct bincache *c, const struct bin_id *id,
		    void (*inspect)(void *value, void *ctx), void *ctx);

/* A file as a process maps it (the mapping a reader looks at). */
struct bin_mapping {
	pid_t pid;
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
};

/* The value of the file of mapping m: *c's through bincache__get() (*c made on first use,
 * for max values of value_size bytes), or, when the file cannot be stat'd, scratch
 * (value_size bytes), zeroed and filled by inspect each time. */
void *bincache__get_mapped(struct bincache **c, size_t value_size, size_t max,
			   const struct bin_mapping *m, void *scratch,
			   void (*inspect)(void *value, const struct bin_mapping *m));

/* Returns the value of file id, or NULL when it is not cached. */
void *bincache__find(struct bincache *c, const struct bin_id *id);

/* Returns a zeroed value kept for file id (replacing one cached), for the caller to
 * fill. Valid until the next call on c. */
void *bincache__add(struct bincache *c, const struct bin_id *id);

/* Files cached; lookups that found one. */
size_t bincache__count(const struct bincache *c);
uint64_t bincache__hits(const struct bincache *c);

#endif
