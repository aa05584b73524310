/* DWARF inline subroutines (see dwinline.h). A binary is keyed by its build-id, else by
 * device, inode and path; a binary without usable debug info is remembered as such. */
#include "symbols/dwinline.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/binary.h"
#include "symbols/debugfile.h"
#include "symbols/demangle.h"
#include "util/hashmap.h"

#define MAX_OPEN 16
#define MAX_NONE 4096	/* binaries remembered as having no debug info */
#define MAX_DEBUG_INFO (256ull << 20)	/* larger .debug_info is not opened */
#define KEY_MAX (MAPPING_BUILD_ID_MAX + 4096)
/* A binary whose lookups cost more than this on average, once they have taken a second,
 * gets no more (huge compile units): symbolizing must not stall a session's end. */
#define SLOW_NS 500000ull
#define BUDGET_NS 1000000000ull

struct dwfile {
	char key[KEY_MAX];
	size_t keylen;
	int fd;			/* the file the debug info is read from, or -1 */
	Elf *elf;
	Dwarf *dw;		/* NULL: no usable debug info */
	uint64_t used;		/* last lookup, for the LRU */
	uint64_t lookups, ns;	/* lookups made and the CPU time they took */
};

struct dwinline {
	struct dwfile files[MAX_OPEN];
	size_t n;
	uint64_t clock;
	struct hashmap *none;	/* keys of binaries without debug info */
};

struct dwinline *dwinline__new(void)
{
	struct dwinline *d = xcalloc(1, sizeof(*d));

	d->none = hashmap__new();
	return d;
}

static void close_file(struct dwfile *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

void dwinline__free(struct dwinline *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		close_file(&d->files[i]);
	hashmap__free(d->none);
	free(d);
}

static size_t make_key(const struct mapping *m, char *key)
{
	if (m->build_id_len) {
		key[0] = 'B';
		memcpy(key + 1, m->build_id, m->build_id_len);
		return 1 + (size_t)m->build_id_len;
	}
	int n = snprintf(key, KEY_MAX, "I%u:%u:%llu:%s", m->maj, m->min,
			 (unsigned long long)m->ino, m->path ? m->path : "");
	return n < 0 ? 0 : (size_t)n >= KEY_MAX ? KEY_MAX - 1 : (size_t)n;
}

/* The size of elf's .debug_info (0 when none). */
static uint64_t debug_info_size(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".debug_info") && sh.sh_type != SHT_NOBITS)
			return sh.sh_size;
	}
	return 0;
}

/* Opens the debug info of m's binary into f: the binary's own, else its debug file. */
static void open_file(struct dwfile *f, const struct proc_ref *p, const struct mapping *m)
{
	char root[64];
	int fd = binary__open(p, m), dfd;
	Elf *elf;

	f->fd = -1;
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	/* ELF_C_READ: sections are read with pread, so a file truncated under us gives a
	 * read error, never SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !debug_info_size(elf)) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
		dfd = debugfile__open(elf, root, m->path);
		elf_end(elf);
		close(fd);
		fd = dfd;
		elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	}
	uint64_t size = elf && elf_kind(elf) == ELF_K_ELF ? debug_info_size(elf) : 0;

	if (!size || size > MAX_DEBUG_INFO) {
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		return;
	}
	f->fd = fd;
	f->elf = elf;
	f->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

static struct dwfile *get(struct dwinline *d, const struct proc_ref *p, const struct mapping *m)
{
	char key[KEY_MAX];
	size_t keylen = make_key(m, key), lru = 0;

	d->clock++;
	if (hashmap__find(d->none, key, keylen))
		return NULL;
	for (size_t i = 0; i < d->n; i++) {
		if (d->files[i].keylen == keylen && !memcmp(d->files[i].key, key, keylen)) {
			d->files[i].used = d->clock;
			return &d->files[i];
		}
		if (d->files[i].used < d->files[lru].used)
			lru = i;
	}
	struct dwfile *f = d->n < MAX_OPEN ? &d->files[d->n++] : &d->files[lru];

	if (f->keylen)
		close_file(f);
	memcpy(f->key, key, keylen);
	f->keylen = keylen;
	f->used = d->clock;
	open_file(f, p, m);
	if (!f->dw) {	/* remembered apart, so that it takes no open slot */
		bool created;

		if (hashmap__count(d->none) >= MAX_NONE)
			hashmap__clear(d->none);
		hashmap__insert(d->none, key, keylen, &created);
		close_file(f);
		if (f == &d->files[d->n - 1])
			d->n--;
		return NULL;
	}
	return f;
}

/* The name of an inlined subroutine: its (or its abstract origin's) linkage name
 * demangled, else its name. */
static bool append_name(Dwarf_Die *die, struct strbuf *out)
{
	Dwarf_Attribute a;
	const char *name;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (name = dwarf_formstring(&a))) {
		demangle__append(name, out);
		return true;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &a) && (name = dwarf_formstring(&a))) {
		strbuf_addstr(out, name);
		return true;
	}
	return false;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Gives up on f's binary when its lookups are too slow (see SLOW_NS). */
static void account(struct dwinline *d, struct dwfile *f, uint64_t t0)
{
	f->lookups++;
	f->ns += cpu_ns() - t0;
	if (f->ns > BUDGET_NS && f->ns / f->lookups > SLOW_NS) {
		bool created;

		hashmap__insert(d->none, f->key, f->keylen, &created);
		close_file(f);
	}
}

int dwinline__find(struct dwinline *d, const struct proc_ref *p, const struct mapping *m,
		   uint64_t vaddr, struct strbuf *out)
{
	struct dwfile *f;
	Dwarf_Die cudie, *scopes = NULL;
	int n, added = 0;
	uint64_t t0 = cpu_ns();

	if (!binary__has_file(m) || !(f = get(d, p, m)) || !f->dw)
		return 0;
	if (!dwarf_addrdie(f->dw, vaddr, &cudie)) {
		account(d, f, t0);
		return 0;
	}
	n = dwarf_getscopes(&cudie, vaddr, &scopes);
	for (int i = n - 1; i >= 0; i--) {	/* innermost first: walk out to in */
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (append_name(&scopes[i], out)) {
			strbuf_addch(out, '\n');
			added++;
		}
	}
	free(scopes);
	account(d, f, t0);
	return added;
}
