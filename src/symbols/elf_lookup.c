/* Lookups by name in one ELF file (see elf_lookup.h). */
#include "symbols/elf_lookup.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"

struct elf_lookup {
	int fd;
	Elf *elf;
};

struct elf_lookup *elf_lookup__open(const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	struct elf_lookup *e = xcalloc(1, sizeof(*e));
	e->fd = fd;
	e->elf = elf;
	return e;
}

void elf_lookup__free(struct elf_lookup *e)
{
	if (!e)
		return;
	elf_end(e->elf);
	close(e->fd);
	free(e);
}

/* Looks name up in one symbol table section. */
static int find_in(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, uint64_t *vaddr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return -ENOENT;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s && strcmp(s, name) == 0) {
			*vaddr = sym.st_value;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_lookup__symbol(struct elf_lookup *e, const char *name, int dynamic_only, uint64_t *vaddr)
{
	static const unsigned types[] = { SHT_DYNSYM, SHT_SYMTAB };
	for (size_t t = 0; t < (dynamic_only ? 1u : 2u); t++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e->elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t])
				continue;
			if (find_in(e->elf, scn, &sh, name, vaddr) == 0)
				return 0;
		}
	}
	return -ENOENT;
}

int elf_lookup__read(struct elf_lookup *e, uint64_t vaddr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (vaddr - sh.sh_addr))
			continue;
		if (pread(e->fd, buf, len, (off_t)(sh.sh_offset + (vaddr - sh.sh_addr))) != (ssize_t)len)
			return -EIO;
		return 0;
	}
	return -ENOENT;
}

int elf_lookup__bias(struct elf_lookup *e, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	size_t n;
	if (elf_getphdrnum(e->elf, &n) != 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~0xfffULL) != pgoff)
			continue;
		*bias = start - (ph.p_vaddr & ~0xfffULL);
		return 0;
	}
	return -ENOENT;
}
