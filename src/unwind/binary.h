/* Opening the ELF file behind a mapping, as the sampled process sees it, and its separate
 * debug file. Internal to src/unwind/. */
#ifndef KILN_UNWIND_BINARY_H
#define KILN_UNWIND_BINARY_H

#include <libelf.h>

#include "symbols/mapping.h"

struct unwind_elf {
	Elf *elf;
	int fd;		/* -1 for the vDSO, which is read from memory */
	void *mem;	/* the vDSO image copy, or NULL */
};

/* Opens the binary of mapping m of process p with binary__open() (map_files, the
 * process's root, the host); "[vdso]" is read from kiln's own vDSO (the kernel maps the
 * same image in every process). Returns 0, or a negative errno (-ENOENT for memory with
 * no file). Close with unwind_elf_close(). */
int unwind_elf_open(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m);

/* Opens the separate debug file of binary b (mapping m of p) when it holds .debug_frame,
 * found by debugfile__open() (build-id directory, .gnu_debuglink with its CRC) under the
 * process's root and on the host. Returns 0, or -ENOENT. */
int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m);

/* Releases b (accepts one already closed, or one whose open failed). */
void unwind_elf_close(struct unwind_elf *b);

#endif
