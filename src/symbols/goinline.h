/* Go's inlined calls from .gopclntab: for each pc range of a function where the compiler
 * inlined other functions, their names, from the function's inline tree (FUNCDATA_InlTree)
 * and its PCDATA_InlTreeIndex table, as the runtime's inlineUnwinder reads them. Layouts
 * of Go 1.13-1.19 (20-byte tree nodes) and 1.20+ (16 bytes). Untrusted input: every
 * offset is checked. */
#ifndef KILN_SYMBOLS_GOINLINE_H
#define KILN_SYMBOLS_GOINLINE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "symbols/symtab.h"

struct elf_segment;

/* Returns a pointer to len bytes of the binary at vaddr, or NULL when they are not in
 * the file; valid until goinline__load() returns. */
typedef const uint8_t *(*goinline_view_fn)(void *ctx, uint64_t vaddr, size_t len);

/* Adds one entry to t for each inlined pc range of the pclntab at data (size bytes; see
 * gofunc_tab_init() for text_start): its range, named by the inlined functions'
 * names outermost first, each followed by '\n'. gofunc is moduledata's gofunc (the base
 * of Go 1.18+ funcdata offsets; ignored before 1.18, whose funcdata are addresses).
 * Returns the number of entries added (a malformed tree adds nothing for its function),
 * or -EINVAL when data is not a pclntab. */
int goinline__load(const uint8_t *data, size_t size, uint64_t text_start, uint64_t gofunc,
		   goinline_view_fn view, void *ctx, struct symtab *t);

/* goinline__load() on the pclntab of Go binary e (stripped or not; section headers
 * needed), its moduledata found through .go.module (Go 1.26+) or in .noptrdata, the trees
 * read through the PT_LOAD segments segs. Returns the number of entries added to t (0
 * when its moduledata is not found), or -ENOENT when e has no pclntab (not Go). */
int goinline__from_elf(Elf *e, const struct elf_segment *segs, size_t nr_segs, struct symtab *t);

#endif
