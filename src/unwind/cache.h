/* Compiled unwind tables, one per binary, shared by every process that maps it, keyed by
 * build-id (or device and inode), bounded in bytes and evicted least-recently-used.
 * Binaries are opened through /proc/<pid>/map_files or /proc/<pid>/root while the
 * process lives; separate debug files are found by build-id or .gnu_debuglink under the
 * process's root. Nothing is written to disk. Internal to src/unwind/. */
#ifndef KILN_UNWIND_CACHE_H
#define KILN_UNWIND_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/mapping.h"
#include "unwind/table.h"

struct unwind_cache;

/* limit bounds the bytes of all tables. rows_if_fp: keep rows for frame-pointer binaries
 * (dwarf mode) rather than only their classification (smart mode). */
struct unwind_cache *unwind_cache__new(uint64_t limit, bool rows_if_fp);
void unwind_cache__free(struct unwind_cache *c);	/* accepts NULL */

/* Returns the table of the binary behind m in process p, compiling it on first use, or
 * NULL when m has no file (anonymous or JIT memory) or the binary cannot be read (a
 * failure is remembered for a few seconds, not retried per sample). The table stays
 * valid until the next call. */
const struct unwind_table *unwind_cache__get(struct unwind_cache *c, const struct proc_ref *p,
					     const struct mapping *m);

/* Bytes held, and tables compiled and evicted so far. */
uint64_t unwind_cache__bytes(const struct unwind_cache *c);
uint64_t unwind_cache__builds(const struct unwind_cache *c);
uint64_t unwind_cache__evictions(const struct unwind_cache *c);

#endif
