/* Reads the ELF behind a mapping for the unwinder, and its separate debug file, through
 * symbols/binary.h and symbols/debugfile.h into sparse private copies (see binary.h); the
 * vDSO is copied from kiln's own memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "symbols/binary.h"
#include "symbols/debugfile.h"
#include "unwind/binary.h"
#include "unwind/table.h"
#include "util/io.h"
#include "util/strbuf.h"

#define IMAGE_MAX (1ull << 36)	/* larger files are not read */
#define PAGE 4096ull
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The sections the unwinder and debugfile__open() read; SHT_NOTE sections (the build-id)
 * are read too. Other sections are only looked at by their headers. */
static const char *const wanted[] = { ".eh_frame", ".eh_frame_hdr", ".debug_frame",
				      ".gnu_debuglink", ".gopclntab", ".data.rel.ro.gopclntab",
				      ".go.module" };

/* The pages of b's image in [start, start + len) (start page-aligned) not touched yet:
 * what copying there adds to its memory (the entries of a lazy copy share pages). */
static uint64_t new_pages(const struct unwind_elf *b, uint64_t start, uint64_t len)
{
	unsigned char v[256];
	uint64_t n = 0, pages = (len + PAGE - 1) / PAGE;

	for (uint64_t i = 0; i < pages; i += sizeof(v)) {
		uint64_t k = pages - i < sizeof(v) ? pages - i : sizeof(v);

		if (mincore((char *)b->map + start + i * PAGE, k * PAGE, v) != 0)
			return pages - i + n;	/* cannot tell: count them all */
		for (uint64_t j = 0; j < k; j++)
			n += !(v[j] & 1);
	}
	return n;
}

/* Copies [off, off + len) of file fd into b's image (clamped to the file). Returns false
 * when the file is shorter than it was when sized: it changed while being read. */
static bool copy_range(struct unwind_elf *b, int fd, uint64_t off, uint64_t len)
{
	if (off >= b->map_len)
		return true;	/* a corrupt header: libelf rejects what it points at */
	if (len > b->map_len - off)
		len = b->map_len - off;
	uint64_t start = (off & ~(PAGE - 1));

	b->bytes += new_pages(b, start, off + len - start) * PAGE;
	/* one fault-in for the range rather than a fault per page (Linux 5.14) */
	madvise((char *)b->map + start, off + len - start, MADV_POPULATE_WRITE);
	return io__pread_all(fd, (char *)b->map + off, len, off) == 0;
}

/* The index in wanted of the section name at offset name, or -1. */
static int wanted_name(const char *strtab, size_t strtab_len, uint32_t name)
{
	if (!strtab || name >= strtab_len)
		return -1;
	const char *n = strtab + name;
	size_t max = strtab_len - name;

	if (!memchr(n, '\0', max))
		return -1;
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (strcmp(n, wanted[i]) == 0)
			return (int)i;
	return -1;
}

static Elf64_Shdr shdr_at(const struct unwind_elf *b, uint64_t shoff, uint64_t i)
{
	Elf64_Shdr sh;

	memcpy(&sh, (const char *)b->map + shoff + i * sizeof(sh), sizeof(sh));
	return sh;
}

/* The index in wanted of the lazily read sections: .eh_frame (when .eh_frame_hdr is there)
 * and the Go ones, which only listing a table reads. */
#define W_EH 0
#define W_HDR 1
#define W_GO 4

/* Fills b's image from fd: the ELF header, program and section headers, the section name
 * table, and the wanted sections (with lazy, not .eh_frame when .eh_frame_hdr is there, nor
 * the Go sections). Returns 0 or a negative errno. */
static int read_image(struct unwind_elf *b, int fd, bool lazy)
{
	Elf64_Ehdr eh;

	if (!copy_range(b, fd, 0, sizeof(eh)) || b->map_len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, b->map, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum != PN_XNUM &&
	    !copy_range(b, fd, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		return -EIO;
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0 ||
	    eh.e_shoff >= b->map_len || b->map_len - eh.e_shoff < sizeof(Elf64_Shdr))
		return 0;	/* no section headers: no CFI sections to find */
	if (!copy_range(b, fd, eh.e_shoff, sizeof(Elf64_Shdr)))
		return -EIO;
	Elf64_Shdr sh0 = shdr_at(b, eh.e_shoff, 0);
	uint64_t shnum = eh.e_shnum ? eh.e_shnum : sh0.sh_size;	/* extended numbering */
	uint64_t shstrndx = eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh.e_shstrndx;

	if (shnum > (b->map_len - eh.e_shoff) / sizeof(Elf64_Shdr))
		shnum = (b->map_len - eh.e_shoff) / sizeof(Elf64_Shdr);
	if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum == PN_XNUM &&
	    !copy_range(b, fd, eh.e_phoff, (uint64_t)sh0.sh_info * sizeof(Elf64_Phdr)))
		return -EIO;
	if (!copy_range(b, fd, eh.e_shoff, shnum * sizeof(Elf64_Shdr)))
		return -EIO;

	const char *strtab = NULL;
	size_t strtab_len = 0;

	if (shstrndx < shnum) {
		Elf64_Shdr st = shdr_at(b, eh.e_shoff, shstrndx);

		if (st.sh_type != SHT_NOBITS && st.sh_offset < b->map_len &&
		    st.sh_size <= b->map_len - st.sh_offset) {
			if (!copy_range(b, fd, st.sh_offset, st.sh_size))
				return -EIO;
			strtab = (const char *)b->map + st.sh_offset;
			strtab_len = st.sh_size;
		}
	}
	uint64_t at[2] = { 0, 0 };	/* indexes of .eh_frame and .eh_frame_hdr */

	for (uint64_t i = 1; lazy && i < shnum; i++) {
		Elf64_Shdr sh = shdr_at(b, eh.e_shoff, i);

		if (sh.sh_type != SHT_NOBITS && sh.sh_size > 0 &&
		    wanted_name(strtab, strtab_len, sh.sh_name) == W_HDR)
			at[W_HDR] = i;
	}
	for (uint64_t i = 1; i < shnum; i++) {
		Elf64_Shdr sh = shdr_at(b, eh.e_shoff, i);
		int w = wanted_name(strtab, strtab_len, sh.sh_name);

		if (sh.sh_type == SHT_NOBITS || (sh.sh_type != SHT_NOTE && w < 0))
			continue;
		if (lazy && w >= W_GO)
			continue;
		if (lazy && w == W_EH && at[W_HDR] && !b->lazy) {
			b->lazy = true;
			b->eh_off = sh.sh_offset;
			b->eh_len = sh.sh_size;
			at[W_EH] = i;
			continue;
		}
		if (!copy_range(b, fd, sh.sh_offset, sh.sh_size))
			return -EIO;
		if (w == W_EH || w == W_HDR)
			at[w] = i;
	}
	/* libdw uses .eh_frame_hdr's binary search table only when that section comes
	 * before .eh_frame (GNU ld's order; lld and gold put it after): otherwise every
	 * lookup scans .eh_frame from the start. In the copy, nothing else reads section
	 * indexes, so swap the two headers. */
	if (at[0] && at[1] > at[0] && eh.e_shstrndx != at[0] && eh.e_shstrndx != at[1]) {
		Elf64_Shdr x = shdr_at(b, eh.e_shoff, at[0]), y = shdr_at(b, eh.e_shoff, at[1]);

		memcpy((char *)b->map + eh.e_shoff + at[0] * sizeof(x), &y, sizeof(y));
		memcpy((char *)b->map + eh.e_shoff + at[1] * sizeof(x), &x, sizeof(x));
	}
	return 0;
}

/* Reads file fd (owned from here on, also on failure) into b. */
static int open_elf(struct unwind_elf *b, int fd, bool lazy)
{
	struct stat st;
	int err;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > IMAGE_MAX || elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -ENOEXEC;
	}
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	b->size = st.st_size;
	b->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	b->map_len = (size_t)st.st_size;
	b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		close(fd);
		return -ENOMEM;
	}
	err = read_image(b, fd, lazy);
	close(fd);
	if (err == 0) {
		b->elf = elf_memory(b->map, b->map_len);
		if (!b->elf || elf_kind(b->elf) != ELF_K_ELF)
			err = -ENOEXEC;
	}
	if (err)
		unwind_elf_close(b);
	return err;
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
	b->bytes = size;
	memcpy(b->mem, img, size);
	b->elf = elf_memory(b->mem, size);
	if (!b->elf) {
		unwind_elf_close(b);
		return -ENOEXEC;
	}
	return 0;
}

static int open_any(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m,
		    bool lazy)
{
	memset(b, 0, sizeof(*b));
	if (m->path && strcmp(m->path, "[vdso]") == 0)
		return open_vdso(b);
	if (!binary__has_file(m))
		return -ENOENT;
	return open_elf(b, binary__open(p, m), lazy);
}

int unwind_elf_open(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m)
{
	return open_any(b, p, m, false);
}

int unwind_elf_open_lazy(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m)
{
	return open_any(b, p, m, true);
}

/* Reads the CFI entry at offset off of lazy b's .eh_frame (its length, then the rest) from
 * fd into the copy; *id gets its CIE pointer (0: a CIE) and *id_at where that was. */
static int read_entry(struct unwind_elf *b, int fd, uint64_t off, uint32_t *id, uint64_t *id_at)
{
	uint32_t len32;
	uint64_t len, hdr = 4;
	const char *at = (const char *)b->map + b->eh_off;

	if (off > b->eh_len || b->eh_len - off < 8 || !copy_range(b, fd, b->eh_off + off, 8))
		return -EIO;
	memcpy(&len32, at + off, 4);
	len = len32;
	if (len32 == 0xffffffffu)	/* 64-bit DWARF: not in .eh_frame, refused */
		return -EIO;
	if (len < 4 || len > b->eh_len - off - hdr)
		return -EIO;
	if (!copy_range(b, fd, b->eh_off + off, hdr + len))
		return -EIO;
	memcpy(id, at + off + hdr, 4);
	*id_at = off + hdr;
	return 0;
}

int unwind_elf_read_eh(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m,
		       uint64_t off)
{
	struct unwind_elf now = { 0 };
	struct stat st;
	uint32_t id, cie_id;
	uint64_t id_at, cie_at;
	int fd, err;

	if (!b->lazy)
		return 0;
	fd = binary__open(p, m);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -errno;
	}
	now.dev = st.st_dev;
	now.ino = st.st_ino;
	now.size = st.st_size;
	now.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	err = unwind_elf_same_file(&now, b) ? read_entry(b, fd, off, &id, &id_at) : -ESTALE;
	/* an FDE's CIE pointer is the distance back from where it is to its CIE */
	if (err == 0 && (id == 0 || id > id_at))
		err = -EIO;
	if (err == 0)
		err = read_entry(b, fd, id_at - id, &cie_id, &cie_at);
	if (err == 0 && cie_id != 0)
		err = -EIO;
	close(fd);
	return err;
}

bool unwind_elf_same_file(const struct unwind_elf *a, const struct unwind_elf *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

void unwind_elf_close(struct unwind_elf *b)
{
	if (b->elf)
		elf_end(b->elf);
	if (b->map)
		munmap(b->map, b->map_len);
	free(b->mem);
	memset(b, 0, sizeof(*b));
}

int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m)
{
	char root[64];

	memset(d, 0, sizeof(*d));
	if (!binary__has_file(m))
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	if (open_elf(d, debugfile__open(b->elf, root, m->path), false) != 0)
		return -ENOENT;
	if (!unwind_elf_has_section(d->elf, ".debug_frame")) {
		unwind_elf_close(d);
		return -ENOENT;
	}
	return 0;
}
