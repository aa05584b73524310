/* Lookups by name in one ELF file (see elf_lookup.h). */
#include "symbols/elf_lookup.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
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

/* Symbol i of data, when it is a defined symbol called name. */
static bool sym_is(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, size_t i, const char *name,
		   GElf_Sym *out)
{
	GElf_Sym sym;
	const char *s;

	if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
		return false;
	s = elf_strptr(elf, sh->sh_link, sym.st_name);
	if (!s || strcmp(s, name) != 0)
		return false;
	*out = sym;
	return true;
}

/* The .gnu.hash section that indexes symbol table section ndx: its words, or NULL. */
static const uint32_t *gnu_hash_of(Elf *elf, size_t ndx, size_t *nwords)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GNU_HASH || sh.sh_link != ndx)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 16 || ((uintptr_t)d->d_buf & 7))
			return NULL;
		*nwords = d->d_size / 4;
		return d->d_buf;
	}
	return NULL;
}

/* Looks name up through .gnu.hash h (nw words) for a symbol table of n symbols: 1 found,
 * 0 not among the hashed symbols, -1 when the table is not usable (then the caller
 * scans). Every index read from the file is bounded. */
static int find_hashed(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, size_t n,
		       const uint32_t *h, size_t nw, const char *name, GElf_Sym *out)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2], shift = h[3], hash = 5381;
	const uint32_t *buckets, *chain;
	uint64_t word, mask;

	if (nbuckets == 0 || bloom == 0 || shift >= 64 || symoffset > n ||
	    (uint64_t)4 + 2ull * bloom + nbuckets > nw)
		return -1;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		hash = hash * 33 + *c;
	memcpy(&word, h + 4 + 2 * ((hash / 64) % bloom), 8);
	mask = (1ull << (hash % 64)) | (1ull << ((hash >> shift) % 64));
	if ((word & mask) != mask)
		return 0;
	buckets = h + 4 + 2 * (size_t)bloom;
	chain = buckets + nbuckets;
	size_t nchain = nw - (size_t)(chain - h);

	for (uint32_t i = buckets[hash % nbuckets]; i != 0; i++) {
		if (i < symoffset || i >= n || i - symoffset >= nchain)
			return -1;
		uint32_t ch = chain[i - symoffset];

		if ((ch | 1) == (hash | 1) && sym_is(elf, data, sh, i, name, out))
			return 1;
		if (ch & 1)
			break;
	}
	return 0;
}

/* Looks name up in one symbol table section: by its .gnu.hash when it has one (a
 * .dynsym: the hashed symbols, then the few before them), else by a scan. */
static int find_in(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, GElf_Sym *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const uint32_t *h;
	size_t nw = 0, from = 1, to;

	if (!data || sh->sh_entsize == 0)
		return -ENOENT;
	size_t n = sh->sh_size / sh->sh_entsize;

	to = n;
	h = sh->sh_type == SHT_DYNSYM ? gnu_hash_of(elf, elf_ndxscn(scn), &nw) : NULL;
	if (h) {
		int found = find_hashed(elf, data, sh, n, h, nw, name, out);

		if (found == 1)
			return 0;
		if (found == 0)
			to = h[1] > 1 ? h[1] : 1;	/* symbols before symoffset are not hashed */
	}
	for (size_t i = from; i < to; i++)
		if (sym_is(elf, data, sh, i, name, out))
			return 0;
	return -ENOENT;
}

int elf_lookup__object(struct elf_lookup *e, const char *name, int dynamic_only, uint64_t *vaddr,
		       uint64_t *size)
{
	static const unsigned types[] = { SHT_DYNSYM, SHT_SYMTAB };
	for (size_t t = 0; t < (dynamic_only ? 1u : 2u); t++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e->elf, scn))) {
			GElf_Shdr sh;
			GElf_Sym sym;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] ||
			    find_in(e->elf, scn, &sh, name, &sym) != 0)
				continue;
			*vaddr = sym.st_value;
			if (size)
				*size = sym.st_size;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_lookup__symbol(struct elf_lookup *e, const char *name, int dynamic_only, uint64_t *vaddr)
{
	return elf_lookup__object(e, name, dynamic_only, vaddr, NULL);
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
