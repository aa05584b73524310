#include "symbols/elf.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/debugfile.h"
#include "symbols/goinline.h"
#include "symbols/gopclntab.h"
#include "util/io.h"
#include "util/log.h"
#include "util/strbuf.h"

#define MAX_SEGMENTS 256
#define MINIDEBUG_MAX (256u << 20)	/* decompressed .gnu_debugdata */
#define GO_SCAN_MAX (512u << 20)	/* segment bytes scanned for a pclntab */

void elf_symbols_init(struct elf_symbols *es)
{
	memset(es, 0, sizeof(*es));
	symtab_init(&es->tab);
	symtab_init(&es->inl);
}

void elf_symbols_release(struct elf_symbols *es)
{
	symtab_release(&es->tab);
	symtab_release(&es->inl);
	free(es->segs);
	elf_symbols_init(es);
}

/* Functions, and the named labels of hand-written assembly (_start, entry points) that
 * sit in code sections without a type, as perf counts them. */
static bool is_function(Elf *e, const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE || sym->st_value == 0)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	if (type != STT_NOTYPE || name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
		return false;
	scn = elf_getscn(e, sym->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Preference among symbols at one address, as perf chooses: global, then weak, then
 * local. The table keeps the first added of equals, so symbols go in in that order. */
static int bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/* Adds the function symbols of every section of type type (SHT_SYMTAB or SHT_DYNSYM).
 * Returns how many were added. */
static size_t add_symbols(struct symtab *t, Elf *e, GElf_Word type)
{
	size_t added = 0, entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	int rank;

	if (!entsize)
		return 0;
	for (rank = 0; rank < 3; rank++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d || !d->d_buf)
				continue;
			n = d->d_size / entsize;
			for (i = 1; i < n; i++) {
				GElf_Sym sym;
				const char *name, *at;

				if (!gelf_getsym(d, (int)i, &sym) || bind_rank(&sym) != rank)
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (!name || !*name || !is_function(e, &sym, name))
					continue;
				/* "memcpy@@GLIBC_2.14" in a .symtab is the "memcpy" of .dynsym */
				at = strchr(name + 1, '@');
				symtab__add(t, sym.st_value, sym.st_size, name,
					    at ? (size_t)(at - name) : strlen(name));
				added++;
			}
		}
	}
	return added;
}

/* Ends unsized symbols at the end of each code section. */
static void add_barriers(struct symtab *t, Elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    (sh.sh_flags & SHF_ALLOC) && sh.sh_size)
			symtab__add_barrier(t, sh.sh_addr + sh.sh_size);
	}
}

static Elf_Scn *find_section(Elf *e, const char *want, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, out))
			continue;
		name = elf_strptr(e, shstrndx, out->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Names x86-64 PLT stubs "name@plt", as perf and objdump do: entry i of .plt.sec (or of
 * .plt after its first, resolver entry) jumps through relocation i of .rela.plt. */
static void add_plt(struct symtab *t, Elf *e)
{
	GElf_Shdr rela_sh, plt_sh, dyn_sh;
	GElf_Ehdr eh;
	Elf_Scn *rela, *plt, *dyn;
	Elf_Data *rd, *sd;
	uint64_t base, limit;
	size_t i, n, entsize;

	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return;
	rela = find_section(e, ".rela.plt", &rela_sh);
	if (!rela || rela_sh.sh_type != SHT_RELA)
		return;
	plt = find_section(e, ".plt.sec", &plt_sh);
	base = plt ? plt_sh.sh_addr : 0;
	if (!plt) {
		plt = find_section(e, ".plt", &plt_sh);
		base = plt_sh.sh_addr + 16;
	}
	entsize = gelf_fsize(e, ELF_T_RELA, 1, EV_CURRENT);
	dyn = elf_getscn(e, rela_sh.sh_link);
	if (!plt || plt_sh.sh_size < 16 || !entsize || !dyn || !gelf_getshdr(dyn, &dyn_sh) ||
	    dyn_sh.sh_type != SHT_DYNSYM)
		return;
	limit = plt_sh.sh_addr + plt_sh.sh_size;
	rd = elf_getdata(rela, NULL);
	sd = elf_getdata(dyn, NULL);
	if (!rd || !rd->d_buf || !sd || !sd->d_buf)
		return;
	n = rd->d_size / entsize;
	for (i = 0; i < n && base + 16 * (i + 1) <= limit; i++) {
		struct strbuf name = STRBUF_INIT;
		const char *sym_name;
		GElf_Rela r;
		GElf_Sym sym;

		if (!gelf_getrela(rd, (int)i, &r) || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		sym_name = elf_strptr(e, dyn_sh.sh_link, sym.st_name);
		if (!sym_name || !*sym_name)
			continue;
		strbuf_addf(&name, "%s@plt", sym_name);
		symtab__add(t, base + 16 * i, 16, name.buf, name.len);
		strbuf_release(&name);
	}
}

/* Decompresses an xz stream into a malloc'd buffer. Returns NULL when it is not one. */
static uint8_t *unxz(const uint8_t *in, size_t inlen, size_t *outlen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = inlen * 4 + 4096;
	uint8_t *out = xmalloc(cap);
	lzma_ret ret;

	if (lzma_stream_decoder(&strm, 1u << 30, 0) != LZMA_OK) {
		free(out);
		return NULL;
	}
	strm.next_in = in;
	strm.avail_in = inlen;
	strm.next_out = out;
	strm.avail_out = cap;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
			goto fail;
		if (strm.avail_out == 0) {
			size_t used = cap;

			if (cap >= MINIDEBUG_MAX)
				goto fail;
			cap *= 2;
			out = xrealloc(out, cap);
			strm.next_out = out + used;
			strm.avail_out = cap - used;
		} else if (ret == LZMA_BUF_ERROR) {
			goto fail;	/* truncated input */
		}
	}
	*outlen = cap - strm.avail_out;
	lzma_end(&strm);
	return out;
fail:
	lzma_end(&strm);
	free(out);
	return NULL;
}

/* MiniDebugInfo: the .symtab of an ELF compressed into .gnu_debugdata. */
static size_t add_minidebuginfo(struct symtab *t, Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(e, ".gnu_debugdata", &sh);
	Elf_Data *d;
	uint8_t *img;
	size_t len, added = 0;
	Elf *inner;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return 0;
	img = unxz(d->d_buf, d->d_size, &len);
	if (!img)
		return 0;
	inner = elf_memory((char *)img, len);
	if (inner && elf_kind(inner) == ELF_K_ELF) {
		added = add_symbols(t, inner, SHT_SYMTAB);
		add_barriers(t, inner);
	}
	elf_end(inner);
	free(img);
	return added;
}

static size_t add_debugfile(struct symtab *t, Elf *e, const char *root, const char *path)
{
	int fd = debugfile__open(e, root, path);
	size_t added = 0;
	Elf *d;

	if (fd < 0)
		return 0;
	d = elf_begin(fd, ELF_C_READ, NULL);
	if (d && elf_kind(d) == ELF_K_ELF) {
		added = add_symbols(t, d, SHT_SYMTAB);
		add_barriers(t, d);
	}
	elf_end(d);
	close(fd);
	return added;
}

/* Reads a file range into a new buffer; NULL on a short read. */
static uint8_t *read_range(int fd, uint64_t off, uint64_t len)
{
	uint8_t *buf;

	if (len == 0 || len > GO_SCAN_MAX)
		return NULL;
	buf = xmalloc(len);
	if (io__pread_all(fd, buf, len, off) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The start of Go's text for a pclntab found without section headers, when its header
 * does not say (Go 1.26 writes textStart 0): runtime.moduledata begins with a pointer to
 * the pclntab, then six slices and findfunctab, then minpc, maxpc and text (the layout of
 * Go 1.16 and later). Returns 0 when no such record is found. */
static uint64_t go_text_start(const struct elf_symbols *es, int fd, uint64_t pclntab_vaddr)
{
	uint64_t found = 0;

	for (size_t i = 0; i < es->nr_segs && !found; i++) {
		const struct elf_segment *s = &es->segs[i];
		uint8_t *buf = read_range(fd, s->offset, s->filesz);

		for (size_t off = 0; buf && off + 24 * 8 <= s->filesz; off += 8) {
			uint64_t w[23];

			memcpy(&w[0], buf + off, 8);
			if (w[0] != pclntab_vaddr)
				continue;
			memcpy(w, buf + off, sizeof(w));
			if (w[20] && w[20] == w[22] && w[21] > w[20]) {	/* minpc, maxpc, text */
				found = w[20];
				break;
			}
		}
		free(buf);
	}
	return found;
}

/* Go: .gopclntab by section, or by scanning read-only segments when sections are gone. */
static size_t add_gopclntab(struct elf_symbols *es, Elf *e, int fd, size_t shnum)
{
	GElf_Shdr sh, text;
	Elf_Scn *scn;
	Elf_Data *d;
	size_t i;
	int n;

	if (shnum > 1) {
		scn = find_section(e, ".gopclntab", &sh);
		if (!scn)	/* where PIE and shared-library builds put it */
			scn = find_section(e, ".data.rel.ro.gopclntab", &sh);
		if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			return 0;
		uint64_t text_start = find_section(e, ".text", &text) ? text.sh_addr : 0;
		Elf_Scn *mod = find_section(e, ".go.module", &text);
		Elf_Data *md = mod && text.sh_type != SHT_NOBITS ? elf_getdata(mod, NULL) : NULL;

		/* Go 1.26 keeps the text start in moduledata only; it is not .text's start in
		 * an externally linked (cgo) binary, whose .text begins with the C start files */
		if (md && md->d_buf && md->d_size >= 23 * 8) {
			uint64_t w;

			memcpy(&w, (const uint8_t *)md->d_buf + 22 * 8, 8);
			if (w)
				text_start = w;
		}
		n = gopclntab__load(d->d_buf, d->d_size, text_start, &es->tab);
		return n > 0 ? (size_t)n : 0;
	}
	if (fd < 0)
		return 0;
	for (i = 0; i < es->nr_segs; i++) {
		const struct elf_segment *s = &es->segs[i];
		uint8_t *buf = read_range(fd, s->offset, s->filesz);
		ssize_t at;

		if (!buf)
			continue;
		/* other read-only data can look like a header: try each candidate in turn */
		for (size_t pos = 0; pos < s->filesz; pos += (size_t)at + 4) {
			at = gopclntab__scan(buf + pos, s->filesz - pos);
			if (at < 0)
				break;
			uint64_t vaddr = s->vaddr + pos + (size_t)at;

			n = gopclntab__load(buf + pos + at, s->filesz - pos - (size_t)at,
					    go_text_start(es, fd, vaddr), &es->tab);
			if (n > 0) {
				free(buf);
				return (size_t)n;
			}
		}
		free(buf);
	}
	return 0;
}

static int load_segments(struct elf_symbols *es, Elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) < 0)
		return -EINVAL;
	for (i = 0; i < n && i < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		es->segs = xrealloc(es->segs, (es->nr_segs + 1) * sizeof(*es->segs));
		es->segs[es->nr_segs++] = (struct elf_segment){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	return 0;
}

static int load(struct elf_symbols *es, Elf *e, int fd, const char *root, const char *path,
		char *err, size_t errlen)
{
	const void *id;
	ssize_t idlen;
	size_t shnum = 0;

	if (!e || elf_kind(e) != ELF_K_ELF) {
		int en = elf_errno();

		errmsg(err, errlen, "%s", en ? elf_errmsg(en) : "not an ELF file");
		elf_symbols_release(es);
		return en ? -EINVAL : -ENOEXEC;
	}
	if (gelf_getclass(e) == ELFCLASSNONE || load_segments(es, e) < 0) {
		int en = elf_errno();

		errmsg(err, errlen, "%s", en ? elf_errmsg(en) : "invalid ELF header");
		elf_symbols_release(es);
		return -EINVAL;
	}
	idlen = dwelf_elf_gnu_build_id(e, &id);
	if (idlen > 0 && (size_t)idlen <= sizeof(es->build_id)) {
		memcpy(es->build_id, id, (size_t)idlen);
		es->build_id_len = (size_t)idlen;
	}
	if (elf_getshdrnum(e, &shnum) < 0)
		shnum = 0;
	if (add_symbols(&es->tab, e, SHT_SYMTAB))
		es->sources |= ELF_SRC_SYMTAB;
	if (add_symbols(&es->tab, e, SHT_DYNSYM))
		es->sources |= ELF_SRC_DYNSYM;
	if (!(es->sources & ELF_SRC_SYMTAB) && fd >= 0 && add_debugfile(&es->tab, e, root, path))
		es->sources |= ELF_SRC_DEBUGFILE;
	if (!(es->sources & (ELF_SRC_SYMTAB | ELF_SRC_DEBUGFILE)) && add_minidebuginfo(&es->tab, e))
		es->sources |= ELF_SRC_MINIDEBUG;
	if (!(es->sources & (ELF_SRC_SYMTAB | ELF_SRC_DEBUGFILE)) &&
	    add_gopclntab(es, e, fd, shnum))
		es->sources |= ELF_SRC_GOPCLNTAB;
	add_plt(&es->tab, e);
	add_barriers(&es->tab, e);
	symtab__finish(&es->tab, SYMTAB_FIRST_WINS, 0);
	if (shnum > 1) {
		int n = goinline__from_elf(e, es->segs, es->nr_segs, &es->inl);

		es->go = n >= 0 || (es->sources & ELF_SRC_GOPCLNTAB);
		if (n > 0)
			symtab__finish(&es->inl, SYMTAB_FIRST_WINS, 0);
	} else {
		es->go = es->sources & ELF_SRC_GOPCLNTAB;
	}
	return 0;
}

static uint64_t header_uint(const uint8_t *p, size_t n, bool big)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

/* Classifies a file of size bytes by its first got (<= EHDR_MAX) bytes d, as the contract
 * of elf_symbols__load says and libelf alone does not: libelf calls an empty file an
 * error and an ELF identification followed by a short header "not ELF", and opens a file
 * whose section header table lies past its end (counts of PN_XNUM and 0, which say the
 * real count is in section 0, are not checked here). Returns 0, -ENOEXEC (not ELF: no magic,
 * class, byte order or version 1) or -EINVAL (a corrupt ELF file), with a message. */
#define EHDR_MAX sizeof(Elf64_Ehdr)
static int check_header(const uint8_t *d, size_t got, uint64_t size, char *err,
			size_t errlen)
{
	bool is64, big;
	uint64_t phoff, phnum, phsize, shoff, shnum, shsize;

	if (got < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) ||
	    (d[EI_CLASS] != ELFCLASS32 && d[EI_CLASS] != ELFCLASS64) ||
	    (d[EI_DATA] != ELFDATA2LSB && d[EI_DATA] != ELFDATA2MSB) ||
	    d[EI_VERSION] != EV_CURRENT) {
		errmsg(err, errlen, "not an ELF file");
		return -ENOEXEC;
	}
	is64 = d[EI_CLASS] == ELFCLASS64;
	big = d[EI_DATA] == ELFDATA2MSB;
	if (got < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		errmsg(err, errlen, "truncated ELF header");
		return -EINVAL;
	}
	phoff = is64 ? header_uint(d + 0x20, 8, big) : header_uint(d + 0x1c, 4, big);
	phnum = header_uint(d + (is64 ? 0x38 : 0x2c), 2, big);
	phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if (phnum && phnum != PN_XNUM && (phoff >= size || (size - phoff) / phsize < phnum)) {
		errmsg(err, errlen, "program headers lie past the end of the file");
		return -EINVAL;
	}
	shoff = is64 ? header_uint(d + 0x28, 8, big) : header_uint(d + 0x20, 4, big);
	shnum = header_uint(d + (is64 ? 0x3c : 0x30), 2, big);
	shsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (shnum && (shoff >= size || (size - shoff) / shsize < shnum)) {
		errmsg(err, errlen, "section headers lie past the end of the file");
		return -EINVAL;
	}
	return 0;
}

int elf_symbols__load(struct elf_symbols *es, int fd, const char *root, const char *path,
		      char *err, size_t errlen)
{
	uint8_t hdr[EHDR_MAX];
	struct stat st;
	size_t got;
	Elf *e;
	int ret;

	elf_version(EV_CURRENT);
	elf_symbols_release(es);
	if (fstat(fd, &st)) {
		errmsg(err, errlen, "%s", strerror(errno));
		return -EINVAL;
	}
	got = (uint64_t)st.st_size < sizeof(hdr) ? (size_t)st.st_size : sizeof(hdr);
	if (got && io__pread_all(fd, hdr, got, 0))
		got = 0;
	ret = check_header(hdr, got, (uint64_t)st.st_size, err, errlen);
	if (ret)
		return ret;
	elf_errno();	/* a stale error would make load() call a non-ELF file corrupt */
	/* ELF_C_READ reads the sections we ask for with pread: a file truncated under us
	 * gives a read error, not the SIGBUS a mapping would. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	ret = load(es, e, fd, root ? root : "", path, err, errlen);
	elf_end(e);
	return ret;
}

int elf_symbols__load_image(struct elf_symbols *es, const void *image, size_t size,
			    char *err, size_t errlen)
{
	char *copy;
	Elf *e;
	int ret;

	elf_version(EV_CURRENT);
	elf_symbols_release(es);
	if (!image || !size) {
		errmsg(err, errlen, "empty image");
		return -EINVAL;
	}
	ret = check_header(image, size < EHDR_MAX ? size : EHDR_MAX, size, err, errlen);
	if (ret)
		return ret;
	copy = xmalloc(size);
	memcpy(copy, image, size);
	elf_errno();
	e = elf_memory(copy, size);
	ret = load(es, e, -1, "", NULL, err, errlen);
	elf_end(e);
	free(copy);
	return ret;
}

/* The vaddr of file offset off (off itself when no segment holds it). */
static uint64_t vaddr_of(const struct elf_symbols *es, uint64_t off)
{
	for (size_t i = 0; i < es->nr_segs; i++) {
		const struct elf_segment *s = &es->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz)
			return off - s->offset + s->vaddr;
	}
	return off;
}

const char *elf_symbols__inlined(const struct elf_symbols *es, uint64_t off)
{
	if (!es->inl.nr)
		return NULL;
	return symtab__find(&es->inl, vaddr_of(es, off), NULL);
}

const char *elf_symbols__find(const struct elf_symbols *es, uint64_t off, uint64_t *vaddr)
{
	uint64_t va = off;
	size_t i;

	for (i = 0; i < es->nr_segs; i++) {
		const struct elf_segment *s = &es->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			va = off - s->offset + s->vaddr;
			break;
		}
	}
	if (vaddr)
		*vaddr = va;
	return symtab__find(&es->tab, va, NULL);
}

size_t elf_symbols__memory(const struct elf_symbols *es)
{
	return sizeof(*es) + symtab__memory(&es->tab) + symtab__memory(&es->inl) +
	       es->nr_segs * sizeof(*es->segs);
}

int elf__build_id(int fd, uint8_t *out, size_t max)
{
	const void *id;
	ssize_t n;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -EINVAL;
	}
	n = dwelf_elf_gnu_build_id(e, &id);
	if (n > 0 && (size_t)n <= max)
		memcpy(out, id, (size_t)n);
	elf_end(e);
	return n > 0 && (size_t)n <= max ? (int)n : -ENOENT;
}
