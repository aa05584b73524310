/* The cache of per-binary symbol tables behind the symbolizer.
 *
 * A binary is known by every key its mappings offer: build-id (from MMAP2, or read from
 * the file when first opened), device and inode, or (for neither) process and path. All
 * keys of one binary lead to one entry, so a library mapped by many processes, or copied
 * into many containers with the same build-id, is parsed once. Parsed tables are evicted
 * least recently used first when their bytes exceed the budget. Pinning opens the file
 * while its process lives and keeps the descriptor until the table is parsed; past a
 * share of RLIMIT_NOFILE, pinning parses at once and closes the descriptor instead. */
#ifndef KILN_SYMBOLS_SYMCACHE_H
#define KILN_SYMBOLS_SYMCACHE_H

#include <stdint.h>

#include "symbols/elf.h"
#include "symbols/mapping.h"

struct symcache;

/* cache_bytes bounds the parsed tables' memory (0: 64 MiB). Never fails. */
struct symcache *symcache__new(uint64_t cache_bytes);
/* Frees every table and closes every pinned descriptor. Accepts NULL. */
void symcache__free(struct symcache *c);

/* Opens m's binary (src/symbols/binary.h) and keeps it open until it is parsed, unless
 * it is known already. Returns 0, -ENOENT when m has no file, or the open's negative
 * errno. */
int symcache__pin(struct symcache *c, const struct proc_ref *p, const struct mapping *m);

/* The symbols of m's binary, parsed on first use from the pinned descriptor or a file
 * opened now. NULL when m has no file or it cannot be opened (a failure is remembered
 * for that process; another process's view is tried again). The table stays valid until
 * the next call that may load another binary (it may evict this one). */
const struct elf_symbols *symcache__get(struct symcache *c, const struct proc_ref *p,
					const struct mapping *m);

/* Called once for each binary newly opened (pinned, or opened to be parsed) with its
 * descriptor (valid during the call only), the root of the process that maps it
 * ("/proc/PID/root", or "" when unknown) and its path as that process sees it. */
typedef void (*symcache_open_fn)(void *ctx, int fd, const char *root, const char *path);
void symcache__set_open_hook(struct symcache *c, symcache_open_fn fn, void *ctx);

/* Forgets the parsed table of the binary whose build-id is id, so that the next
 * symcache__get() parses it again (its debug file has arrived). A binary not parsed yet
 * is left as it is. */
void symcache__forget_build_id(struct symcache *c, const uint8_t *id, size_t len);

/* Bytes held by parsed tables. */
uint64_t symcache__memory(const struct symcache *c);

#endif
