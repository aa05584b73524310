/* Opens the ELF behind a mapping for the unwinder, and its separate debug file, through
 * symbols/binary.h and symbols/debugfile.h; the vDSO is read from kiln's own memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <gelf.h>

#include "symbols/binary.h"
#include "symbols/debugfile.h"
#include "unwind/binary.h"
#include "unwind/table.h"
#include "util/strbuf.h"

/* Wraps descriptor fd (owned from here on, also on failure) into b. */
static int open_elf(struct unwind_elf *b, int fd)
{
	if (fd < 0)
		return fd;
	b->fd = fd;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		unwind_elf_close(b);
		return -ENOEXEC;
	}
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF) {
		unwind_elf_close(b);
		return -ENOEXEC;
	}
	return 0;
}

/* The kernel's vDSO is the same image in every process: use kiln's own copy. */
static int open_vdso(struct unwind_elf *b)
{
	const uint8_t *img = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;
	size_t size;

	if (!img)
		return -ENOENT;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (size < sizeof(eh) || size > (1u << 20))
		return -ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	b->mem = xmalloc(size);
	memcpy(b->mem, img, size);
	b->elf = elf_memory(b->mem, size);
	if (!b->elf) {
		unwind_elf_close(b);
		return -ENOEXEC;
	}
	return 0;
}

int unwind_elf_open(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	if (m->path && strcmp(m->path, "[vdso]") == 0)
		return open_vdso(b);
	if (!binary__has_file(m))
		return -ENOENT;
	return open_elf(b, binary__open(p, m));
}

void unwind_elf_close(struct unwind_elf *b)
{
	if (b->elf)
		elf_end(b->elf);
	if (b->fd >= 0)
		close(b->fd);
	free(b->mem);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m)
{
	char root[64];

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!binary__has_file(m))
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	if (open_elf(d, debugfile__open(b->elf, root, m->path)) != 0)
		return -ENOENT;
	if (!unwind_elf_has_section(d->elf, ".debug_frame")) {
		unwind_elf_close(d);
		return -ENOENT;
	}
	return 0;
}
