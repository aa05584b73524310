/* The pc ranges of the FDEs of a CFI section, and the rows of one FDE. Internal to
 * src/unwind/. */
#ifndef KILN_UNWIND_FDE_H
#define KILN_UNWIND_FDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <libelf.h>

#include "unwind/table.h"

struct fde_range {
	uint64_t lo, hi;	/* [lo, hi) in the binary's vaddrs */
};

struct fde_list {
	struct fde_range *v;
	size_t n, alloc;
};

/* Appends the range of every FDE of section scn (.eh_frame when eh_frame, else
 * .debug_frame) of elf to l. FDEs whose encoding is not understood are skipped.
 * Returns the number added, or a negative errno when the section has no usable data.
 * Nothing in the section is trusted. */
int fde_list_add(struct fde_list *l, Elf *elf, Elf_Scn *scn, bool eh_frame);
/* The same for .eh_frame scn, in the order of the binary search table of .eh_frame_hdr
 * hdr (sorted by address, which the section's own order is not: cold parts, startup code),
 * so that no sort is needed; falls back to fde_list_add() when hdr is NULL or its table
 * is not one that points at scn's FDEs. Same return convention; *by_table (when not NULL)
 * tells whether the table listed them. */
int fde_list_add_sorted(struct fde_list *l, Elf *elf, Elf_Scn *scn, Elf_Scn *hdr,
			bool *by_table);
/* The vaddr of the FDE for the function at vaddr in the binary search table of
 * .eh_frame_hdr hdr (exactly its initial location), as libdw finds it. Returns false when the
 * table has none. */
bool fde_hdr_find(Elf_Scn *hdr, uint64_t vaddr, uint64_t *fde_vaddr);
/* Frees l's ranges and leaves it empty. */
void fde_list_release(struct fde_list *l);

/* A row while an FDE is compiled: it covers [pc, the next row's pc), relative to a base. */
struct fde_row {
	uint32_t pc;
	struct unwind_rule rule;
};

struct fde_rows {
	struct fde_row *v;
	size_t n, alloc;
};

/* Appends a row to rv. */
void fde_rows_push(struct fde_rows *rv, uint32_t pc, const struct unwind_rule *r);

/* Compiles the FDE of cfi that covers [lo, hi) (vaddrs) into rows relative to base,
 * appended to rv in address order; none when lo < base or hi is more than 4 GiB above
 * base, and the rows stop where libdw fails. With rv NULL only classifies, from the first
 * 16 rows (the prologue). Returns true when the FDE sets up an rbp frame (push rbp; mov rsp, rbp: CFA = rbp + 16 with rbp saved
 * at CFA - 16). The CFI is untrusted: any rule we do not support becomes CFA_BAD. */
bool fde_compile(Dwarf_CFI *cfi, uint64_t base, uint64_t lo, uint64_t hi, struct fde_rows *rv);

#endif
