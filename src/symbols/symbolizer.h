/* Turns addresses into frame names: kernel addresses through /proc/kallsyms, user
 * addresses through the mapped binary (ELF .symtab/.dynsym, MiniDebugInfo, separate debug
 * files by build-id or debuglink, Go .gopclntab, C++ demangling) and JIT addresses through
 * perf maps (/tmp/perf-<nspid>.map inside the process's root).
 *
 * Everything parsed from a binary is cached per binary (build-id, or device/inode), shared
 * by every process that maps it, and evicted by size. The agent symbolizes each unique
 * stack once, at the end of a session; binaries are pinned (an open descriptor kept) when
 * first sampled, so that a process that exits before the session ends is still named.
 *
 * Names are written without gProfiler's annotations: the caller appends "_[k]" and the
 * like. Nothing here trusts the files it reads: a corrupt or truncated binary or perf map
 * yields unresolved frames and at most one warning, never a crash. Not thread-safe: one
 * thread (the agent's) uses a symbolizer at a time. */
#ifndef KILN_SYMBOLS_SYMBOLIZER_H
#define KILN_SYMBOLS_SYMBOLIZER_H

#include <stdint.h>

#include "symbols/mapping.h"
#include "util/strbuf.h"

struct symbolizer;

/* cache_bytes bounds the memory of parsed binaries (0 picks a default of 64 MiB).
 * Never fails (allocation failure aborts); an unreadable /proc/kallsyms only leaves
 * kernel frames unresolved. */
struct symbolizer *symbolizer__new(uint64_t cache_bytes);
/* Frees the symbolizer and every cached binary and pinned descriptor. Accepts NULL. */
void symbolizer__free(struct symbolizer *s);

/* Makes sure the binary behind m (in process p) can still be read after p exits: opens
 * it through /proc/<pid>/map_files or /proc/<pid>/root while p lives. Cheap when the
 * binary is already known. Returns 0, or a negative errno when it could not be opened
 * (symbolization will then try the host path, then give up with "(module+0xOFF)"). */
int symbolizer__pin(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m);

/* Appends the name of kernel address addr (a function of vmlinux or of a module) to out.
 * Returns 0, or -ENOENT when unknown, in which case out gets "(kernel+0xADDR)". */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct strbuf *out);

/* Appends the name of user address addr, which lies in mapping m of process p, to out.
 * Returns 0 when a symbol was found, or -ENOENT when none was, in which case out gets
 * "(module+0xOFFSET)" with the module's base name and the file offset. Perf maps are
 * consulted for anonymous executable mappings and for addresses no ELF symbol covers. */
int symbolizer__user(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m,
		     uint64_t addr, struct strbuf *out);

/* Appends the names of the functions inlined at user address addr (mapping m of p) to out,
 * outermost first, each followed by '\n': Go's inline tree from .gopclntab, or the DWARF
 * inline subroutines of a native binary with debug info (its own or a separate debug
 * file). The function symbolizer__user() names is the physical one around them. Returns
 * the number of names appended (0: nothing inlined there, or nothing known). */
int symbolizer__inlined(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m,
			uint64_t addr, struct strbuf *out);

/* Appends the perf-map name of addr in process p (no mapping known, e.g. JIT code in a
 * region the process table has not seen) to out. Returns 0, or -ENOENT. */
int symbolizer__perfmap(struct symbolizer *s, const struct proc_ref *p, uint64_t addr,
			struct strbuf *out);

/* Forgets the perf map of a process that exited (its binaries stay cached). */
void symbolizer__forget_process(struct symbolizer *s, pid_t pid);

/* Bytes held by cached binaries and perf maps, for the session header and eviction tests. */
uint64_t symbolizer__memory(const struct symbolizer *s);

#endif
