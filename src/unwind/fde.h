/* The pc ranges of the FDEs of a CFI section. Internal to src/unwind/. */
#ifndef KILN_UNWIND_FDE_H
#define KILN_UNWIND_FDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

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
/* Frees l's ranges and leaves it empty. */
void fde_list_release(struct fde_list *l);

#endif
