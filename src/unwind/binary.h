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

/* Opens the binary of mapping m of process p: through /proc/<pid>/map_files/<start>-<end>,
 * else /proc/<pid>/root/<path>; "[vdso]" is read from kiln's own vDSO (the kernel maps the
 * same image in every process). Returns 0, or a negative errno (-ENOENT for memory with
 * no file). Close with unwind_elf_close(). */
int unwind_elf_open(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m);

/* Opens the separate debug file of binary b (mapping m of p) that holds .debug_frame:
 * /usr/lib/debug/.build-id/xx/yyyy.debug, else the .gnu_debuglink name beside the binary,
 * in its .debug/ folder, or under /usr/lib/debug/, all inside the process's root. A file
 * whose build-id differs from the binary's is refused. Returns 0, or -ENOENT. */
int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m);

/* Releases b (accepts one already closed, or one whose open failed). */
void unwind_elf_close(struct unwind_elf *b);

#endif
