/* Opens the ELF behind a mapping for the unwinder, and its separate debug file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <gelf.h>

#include "unwind/binary.h"
#include "unwind/table.h"
#include "util/strbuf.h"

static bool is_deleted(const char *path)
{
	size_t n = strlen(path), k = strlen(" (deleted)");

	return n >= k && strcmp(path + n - k, " (deleted)") == 0;
}

static int open_elf(struct unwind_elf *b, const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0)
		return -errno;
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
	char path[4096];
	int err = -ENOENT;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	if (!m->path)
		return -ENOENT;
	if (strcmp(m->path, "[vdso]") == 0)
		return open_vdso(b);
	if (m->path[0] != '/' && strncmp(m->path, "/memfd:", 7) != 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)p->pid,
		 (unsigned long)m->start, (unsigned long)m->end);
	err = open_elf(b, path);
	if (err == 0 || is_deleted(m->path) || m->path[0] != '/')
		return err;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid, m->path);
	err = open_elf(b, path);
	if (err == -ENOENT && p->pid == getpid())
		err = open_elf(b, m->path);
	return err;
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

/* Copies the GNU build-id of elf into id. Returns its length, 0 when it has none. */
static size_t elf_build_id(Elf *elf, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= max) {
				memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

/* Returns the .gnu_debuglink file name of elf, or NULL. Points into elf's data. */
static const char *debuglink(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debuglink") != 0 || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || d->d_size < 2)
			continue;
		const char *s = d->d_buf;
		if (!memchr(s, '\0', d->d_size) || !s[0] || strchr(s, '/'))
			return NULL;
		return s;
	}
	return NULL;
}

/* Opens path as the debug file of a binary with build-id id (len 0: unknown). */
static int try_debug(struct unwind_elf *d, const char *path, const uint8_t *id, size_t len)
{
	uint8_t got[64];

	if (open_elf(d, path) != 0)
		return -ENOENT;
	if (!unwind_elf_has_section(d->elf, ".debug_frame") ||
	    (len && (elf_build_id(d->elf, got, sizeof(got)) != len || memcmp(got, id, len) != 0))) {
		unwind_elf_close(d);
		return -ENOENT;
	}
	return 0;
}

int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m)
{
	uint8_t id[64];
	size_t len = 0;
	char path[4096], root[64];
	const char *link;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!m->path || m->path[0] != '/')
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	if (m->build_id_len) {
		len = m->build_id_len;
		memcpy(id, m->build_id, len);
	} else {
		len = elf_build_id(b->elf, id, sizeof(id));
	}
	if (len >= 2) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "%s/usr/lib/debug/.build-id/%02x/", root, id[0]);
		for (size_t i = 1; i < len; i++)
			strbuf_addf(&sb, "%02x", id[i]);
		strbuf_addstr(&sb, ".debug");
		int err = try_debug(d, sb.buf, id, len);
		strbuf_release(&sb);
		if (err == 0)
			return 0;
	}
	link = debuglink(b->elf);
	if (!link)
		return -ENOENT;
	const char *slash = strrchr(m->path, '/');
	int dirlen = (int)(slash - m->path);
	const char *fmts[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s/usr/lib/debug%.*s/%s" };

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		snprintf(path, sizeof(path), fmts[i], root, dirlen, m->path, link);
		if (strcmp(path + strlen(root), m->path) != 0 && try_debug(d, path, id, len) == 0)
			return 0;
	}
	return -ENOENT;
}
