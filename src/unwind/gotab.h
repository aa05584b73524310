/* Unwind rows for Go code from the binary's .gopclntab: the stack-pointer delta (pcsp)
 * at every pc of every Go function, exact in leaves, prologues and epilogues and
 * independent of frame pointers and debug info (the runtime's own traceback uses it).
 * Internal to src/unwind/. */
#ifndef KILN_UNWIND_GOTAB_H
#define KILN_UNWIND_GOTAB_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include "unwind/fde.h"

/* Called for each Go function [lo, hi) with its rows (pcs relative to base). */
typedef void (*unwind_go_fn)(void *ctx, uint64_t lo, uint64_t hi, const struct fde_rows *rv);

/* True when elf looks like a Go binary (.gopclntab or .go.buildinfo). */
bool unwind_go_binary(Elf *elf);

/* Compiles the pcsp table of every Go function of elf into rows, given to emit in
 * address order: at each pc, CFA = rsp + delta + 8 with the caller's rbp at CFA - 16 when
 * rbp points there (RBP_GO); CFA_END for the outermost frames (runtime.goexit, mstart,
 * rt0_go, and mcall and morestack at the root of a g0 stack); CFA_BAD where SP is
 * written (the other stack switches: gogo, systemstack) or the table is malformed;
 * CFA_GO_SWITCH for runtime.asmcgocall (cgo calls). Functions whose ranges fall outside
 * [base, base + 4 GiB) are skipped. Returns the number of functions given, or -ENOENT
 * when elf has no readable pclntab. The table is untrusted. */
int unwind_go_rows(Elf *elf, uint64_t base, unwind_go_fn emit, void *ctx);

#endif
