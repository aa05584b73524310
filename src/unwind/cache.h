/* Unwind tables, one per binary, shared by every process that maps it, keyed by build-id
 * (or device and inode), bounded in bytes and evicted least-recently-used.
 *
 * A table starts as the sorted list of its binary's FDEs; each FDE's rows are compiled
 * the first time a sample needs them. While FDEs may still be compiled, the cache keeps
 * the binary's CFI open (a private copy of its CFI sections, no descriptor): at most a
 * fixed number of binaries at once, least-recently-compiled closed first, any left idle
 * for half a minute, and all but the one in use before any table is evicted for bytes. A closed binary is read again through the sample's process on
 * the next FDE not compiled yet, without its .eh_frame when .eh_frame_hdr's table listed
 * it (each FDE and its CIE are then read as they are compiled, so a large binary costs a
 * few pages, not its whole section, each time), and used only if it is the same binary (build-id, or
 * device, inode, size and mtime; same headers and CFI sections): a binary replaced,
 * truncated or deleted since gives "no CFI" for the FDEs not compiled, never a wrong row.
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

/* limit bounds the bytes of all tables and open CFI. rows_if_fp is no longer used: every
 * binary's FDEs are listed and compiled when a sample first needs them, in smart mode too
 * (its leaf frames in frame-pointer binaries). */
struct unwind_cache *unwind_cache__new(uint64_t limit, bool rows_if_fp);
void unwind_cache__free(struct unwind_cache *c);	/* accepts NULL */

/* Sets how many binaries may have their CFI open at once (default 128, at least 1). */
void unwind_cache__set_max_open(struct unwind_cache *c, unsigned n);

/* Returns the table of the binary behind m in process p, listing its FDEs on first use,
 * or NULL when m has no file (anonymous or JIT memory) or the binary cannot be read (a
 * failure is remembered for a few seconds, not retried per sample). The table stays
 * valid until the next call. */
const struct unwind_table *unwind_cache__get(struct unwind_cache *c, const struct proc_ref *p,
					     const struct mapping *m);

/* Returns the rule at vaddr of table t, just returned by unwind_cache__get() for m in p,
 * or NULL when no CFI covers vaddr. Compiles the FDE the first time, reading the binary
 * again through p when its CFI was closed; when that fails (the process is gone, the
 * binary changed) NULL is returned and the read retried after a few seconds. The rule is
 * valid until the next call. */
const struct unwind_rule *unwind_cache__find(struct unwind_cache *c, const struct unwind_table *t,
					     const struct proc_ref *p, const struct mapping *m,
					     uint64_t vaddr);

/* Bytes the cache holds for table t: its rows and, while open, its CFI. */
uint64_t unwind_cache__table_bytes(const struct unwind_cache *c, const struct unwind_table *t);

/* Bytes held; tables built and evicted; binaries read again, and with CFI open now. */
uint64_t unwind_cache__bytes(const struct unwind_cache *c);
uint64_t unwind_cache__builds(const struct unwind_cache *c);
uint64_t unwind_cache__evictions(const struct unwind_cache *c);
uint64_t unwind_cache__reopens(const struct unwind_cache *c);
/* .eh_frame entries read one by one into binaries read again lazily (unwind_elf_open_lazy) */
uint64_t unwind_cache__fetches(const struct unwind_cache *c);
unsigned unwind_cache__open(const struct unwind_cache *c);

#endif
