/* Go inline trees (see goinline.h). The tree node of each version:
 *   1.12-1.19, 20 bytes: parent i16, funcID u8, pad, file i32, line i32, func_ i32 (name
 *     offset in funcnametab), parentPc i32
 *   1.20+,     16 bytes: funcID u8, pad[3], nameOff i32, parentPc i32, startLine i32
 * At a pc: ix = pcdata[InlTreeIndex](pc); while ix >= 0, tree[ix] is inlined there (the
 * innermost first), and the pc of its call site is entry + tree[ix].parentPc. */
#include "symbols/goinline.h"

#include <errno.h>
#include <string.h>

#include <gelf.h>

#include "symbols/elf.h"
#include "symbols/gofunc.h"
#include "util/strbuf.h"

#define MAX_DEPTH 32	/* inlining deeper than this is a malformed tree */
#define MAX_RANGES 4096	/* of one function's inline index table */

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* The names inlined at pc of f, outermost first, into sb. Returns false when the tree is
 * malformed. */
static bool chain(const struct gofunc_tab *t, const struct gofunc *f, uint32_t idx_tab,
		  uint64_t tree, int32_t ix, goinline_view_fn view, void *ctx, struct strbuf *sb)
{
	const char *names[MAX_DEPTH];
	size_t lens[MAX_DEPTH];
	int n = 0;
	size_t node = t->version >= 120 ? 16 : 20;

	while (ix >= 0) {
		const uint8_t *p = view(ctx, tree + (uint64_t)ix * node, node);
		int32_t nameoff, parent_pc;

		if (!p || n == MAX_DEPTH)
			return false;
		nameoff = t->version >= 120 ? le32(p + 4) : le32(p + 12);
		parent_pc = t->version >= 120 ? le32(p + 8) : le32(p + 16);
		if (nameoff < 0 || parent_pc < 0 || t->names + (uint64_t)nameoff >= t->size)
			return false;
		const char *s = (const char *)t->data + t->names + nameoff;
		const char *end = memchr(s, '\0', t->size - t->names - (uint64_t)nameoff);

		if (!end || end == s)
			return false;
		names[n] = s;
		lens[n++] = (size_t)(end - s);
		int32_t next;

		if (gofunc_tab__value(t, f, idx_tab, f->entry + (uint64_t)parent_pc, &next) != 0)
			next = -1;
		if (next >= ix)	/* parents come first in the tree: a cycle otherwise */
			return false;
		ix = next;
	}
	strbuf_reset(sb);
	while (n--) {
		strbuf_add(sb, names[n], lens[n]);
		strbuf_addch(sb, '\n');
	}
	return true;
}

int goinline__load(const uint8_t *data, size_t size, uint64_t text_start, uint64_t gofunc,
		   goinline_view_fn view, void *ctx, struct symtab *t)
{
	struct gofunc_tab g;
	struct strbuf sb = STRBUF_INIT;
	int added = 0;

	if (gofunc_tab_init(&g, data, size, text_start) != 0)
		return -EINVAL;
	if (g.version >= 118 && !gofunc)
		return 0;	/* moduledata not found (or relocated at run time): no trees */
	for (uint64_t i = 0; i < g.nfunc; i++) {
		struct gofunc f;
		uint64_t tree, lo, hi;
		uint32_t idx_tab;
		struct gopcvalue it;
		int32_t ix;
		size_t first = t->nr, ranges = 0;
		int ok = 0;

		if (gofunc_tab__func(&g, i, &f) != 0 ||
		    !(idx_tab = gofunc_tab__pcdata(&g, &f, GOFUNC_PCDATA_INLTREE)) ||
		    !gofunc_tab__funcdata(&g, &f, gofunc_tab__inltree_funcdata(&g), &tree))
			continue;
		if (g.version >= 118) {
			if (tree == UINT32_MAX)
				continue;
			tree += gofunc;
		}
		if (!tree || !gopcvalue_init(&it, &g, &f, idx_tab))
			continue;
		while (gopcvalue_next(&it, &lo, &hi, &ix)) {
			if (ix < 0 || hi == lo)
				continue;
			if (++ranges > MAX_RANGES ||
			    !chain(&g, &f, idx_tab, tree, ix, view, ctx, &sb)) {
				symtab__rollback(t, first);	/* this function's tree is bad */
				added -= ok;
				break;
			}
			symtab__add(t, lo, hi - lo, sb.buf, sb.len);
			ok++;
			added++;
		}
	}
	strbuf_release(&sb);
	return added;
}

static Elf_Data *section(Elf *e, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, sh) || !(name = elf_strptr(e, shstrndx, sh->sh_name)) ||
		    strcmp(name, want) != 0)
			continue;
		if (sh->sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			return NULL;
		return d;
	}
	return NULL;
}

struct seg_view {
	Elf *e;
	const struct elf_segment *segs;
	size_t n;
	const uint8_t *data[16];	/* each segment's bytes, read on first use */
};

static const uint8_t *view_segment(void *ctx, uint64_t vaddr, size_t len)
{
	struct seg_view *v = ctx;

	for (size_t i = 0; i < v->n && i < 16; i++) {
		const struct elf_segment *s = &v->segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz || s->filesz - (vaddr - s->vaddr) < len)
			continue;
		if (!v->data[i]) {
			Elf_Data *d = elf_getdata_rawchunk(v->e, (int64_t)s->offset, s->filesz, ELF_T_BYTE);

			if (!d || !d->d_buf)
				return NULL;
			v->data[i] = d->d_buf;	/* freed by elf_end() */
		}
		return v->data[i] + (vaddr - s->vaddr);
	}
	return NULL;
}

/* moduledata's words (at least 41) of the pclntab at pcvaddr: the .go.module section, or
 * a record in .noptrdata that starts with a pointer to the pclntab and holds minpc ==
 * text (as the runtime lays it out since Go 1.16). */
static const uint64_t *moduledata(Elf *e, uint64_t pcvaddr, uint64_t *copy)
{
	GElf_Shdr sh;
	Elf_Data *d = section(e, ".go.module", &sh);

	if (d && d->d_size >= 41 * 8) {
		memcpy(copy, d->d_buf, 41 * 8);
		return copy;
	}
	d = section(e, ".noptrdata", &sh);
	for (size_t off = 0; d && off + 41 * 8 <= d->d_size; off += 8) {
		memcpy(copy, (const uint8_t *)d->d_buf + off, 8);
		if (copy[0] != pcvaddr)
			continue;
		memcpy(copy, (const uint8_t *)d->d_buf + off, 41 * 8);
		if (copy[20] && copy[20] == copy[22] && copy[21] > copy[20])
			return copy;
	}
	return NULL;
}

int goinline__from_elf(Elf *e, const struct elf_segment *segs, size_t nr_segs, struct symtab *t)
{
	GElf_Shdr sh, text;
	Elf_Data *d = section(e, ".gopclntab", &sh);
	struct seg_view v = { e, segs, nr_segs, { 0 } };
	struct gofunc_tab g;
	uint64_t md[41], gofunc = 0, text_start = 0;
	const uint64_t *w;
	int n;

	if (!d)
		d = section(e, ".data.rel.ro.gopclntab", &sh);
	if (!d)
		return -ENOENT;
	if (section(e, ".text", &text))
		text_start = text.sh_addr;
	w = moduledata(e, sh.sh_addr, md);
	if (w && w[22])
		text_start = w[22];
	if (gofunc_tab_init(&g, d->d_buf, d->d_size, text_start) != 0)
		return 0;
	if (g.version >= 118) {
		if (!w)
			return 0;
		gofunc = w[g.version >= 120 ? 40 : 38];
	}
	n = goinline__load(d->d_buf, d->d_size, text_start, gofunc, view_segment, &v, t);
	return n > 0 ? n : 0;
}
