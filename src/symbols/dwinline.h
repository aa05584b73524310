/* Native inlined functions from DWARF: the DW_TAG_inlined_subroutine scopes around an
 * address, read with libdw from the binary's own .debug_info or from its separate debug
 * file (found by build-id or .gnu_debuglink, symbols/debugfile.h). Each binary's debug
 * info is opened on its first lookup and kept (at most a few binaries, the least recently
 * used closed first; very large debug info is not opened, and a binary whose lookups turn
 * out slow, above half a millisecond each on average, is given up). Not thread-safe. */
#ifndef KILN_SYMBOLS_DWINLINE_H
#define KILN_SYMBOLS_DWINLINE_H

#include <stdint.h>

#include "symbols/mapping.h"
#include "util/strbuf.h"

struct dwinline;

struct dwinline *dwinline__new(void);	/* never fails (allocation failure aborts) */
void dwinline__free(struct dwinline *d);	/* accepts NULL */

/* Appends the functions inlined at vaddr (an ELF virtual address) of the binary behind
 * mapping m of process p to out, outermost first, each followed by '\n', C++ names
 * demangled. Returns the number appended: 0 when nothing is inlined there or the binary
 * has no debug info. */
int dwinline__find(struct dwinline *d, const struct proc_ref *p, const struct mapping *m,
		   uint64_t vaddr, struct strbuf *out);

#endif
