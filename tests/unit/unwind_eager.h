/* The eager table compiler kiln used before FDEs were compiled lazily, kept as the oracle
 * of the lazy one: every FDE of every source compiled up front (with the same
 * fde_compile()), a CFA_NONE row at each FDE's end, rows sorted with the real row winning
 * at a shared pc, equal neighbours merged. Test code only. */
#ifndef KILN_TEST_UNWIND_EAGER_H
#define KILN_TEST_UNWIND_EAGER_H

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/fde.h"
#include "unwind/table.h"
#include "util/strbuf.h"

struct eager_table {
	uint64_t base;
	struct fde_rows rows;	/* sorted, merged */
	bool has_cfi;
};

static inline Elf_Scn *eager_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0)
			return sh.sh_type == SHT_NOBITS || sh.sh_size == 0 ? NULL : scn;
	}
	return NULL;
}

static inline bool eager_overlaps(const struct fde_list *l, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < l->n; i++)	/* slow and obviously right */
		if (l->v[i].lo < hi && l->v[i].hi > lo)
			return true;
	return false;
}

static inline void eager_fde(struct eager_table *t, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi)
{
	struct unwind_rule none = { .cfa = CFA_NONE };

	if (lo < t->base || hi - t->base > UINT32_MAX)
		return;
	fde_compile(cfi, t->base, lo, hi, &t->rows);
	fde_rows_push(&t->rows, (uint32_t)(hi - t->base), &none);
}

static inline int eager_row_cmp(const void *a, const void *b)
{
	const struct fde_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return (y->rule.cfa == CFA_NONE) - (x->rule.cfa == CFA_NONE);	/* the gap marker first */
}

/* Builds the eager table of src (its base from t, a table listed from the same src).
 * Returns the number of rows. */
static inline size_t eager_build(struct eager_table *e, const struct unwind_table *t,
				 const struct unwind_sources *src, const struct unwind_cfi *cfi)
{
	struct fde_list eh = { 0 }, df = { 0 }, dbg = { 0 };
	Elf_Scn *scn;

	memset(e, 0, sizeof(*e));
	e->base = t->base;
	e->has_cfi = cfi->eh || cfi->df || cfi->dbg;
	if (cfi->eh && (scn = eager_section(src->elf, ".eh_frame")))
		fde_list_add(&eh, src->elf, scn, true);
	if (cfi->df && (scn = eager_section(src->elf, ".debug_frame")))
		fde_list_add(&df, src->elf, scn, false);
	if (cfi->dbg && (scn = eager_section(src->debug, ".debug_frame")))
		fde_list_add(&dbg, src->debug, scn, false);
	for (size_t i = 0; i < eh.n; i++)
		eager_fde(e, cfi->eh, eh.v[i].lo, eh.v[i].hi);
	for (size_t i = 0; i < df.n; i++)
		if (!eager_overlaps(&eh, df.v[i].lo, df.v[i].hi))
			eager_fde(e, cfi->df, df.v[i].lo, df.v[i].hi);
	for (size_t i = 0; i < dbg.n; i++)
		if (!eager_overlaps(eh.n ? &eh : &df, dbg.v[i].lo, dbg.v[i].hi))
			eager_fde(e, cfi->dbg, dbg.v[i].lo, dbg.v[i].hi);
	const char *plt[] = { ".plt.got", ".plt.sec" };
	for (size_t i = 0; e->has_cfi && i < 2; i++) {
		GElf_Shdr sh;
		struct unwind_rule r = { .off = 8, .cfa = CFA_RSP, .rbp = RBP_SAME };
		struct unwind_rule none = { .cfa = CFA_NONE };

		scn = eager_section(src->elf, plt[i]);
		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_addr < e->base ||
		    sh.sh_addr + sh.sh_size - e->base > UINT32_MAX ||
		    eager_overlaps(&eh, sh.sh_addr, sh.sh_addr + sh.sh_size))
			continue;
		fde_rows_push(&e->rows, (uint32_t)(sh.sh_addr - e->base), &r);
		fde_rows_push(&e->rows, (uint32_t)(sh.sh_addr + sh.sh_size - e->base), &none);
	}
	qsort(e->rows.v, e->rows.n, sizeof(*e->rows.v), eager_row_cmp);
	size_t out = 0;
	for (size_t i = 0; i < e->rows.n; i++) {	/* the last row at each pc, merged */
		if (i + 1 < e->rows.n && e->rows.v[i + 1].pc == e->rows.v[i].pc)
			continue;
		if (out > 0 && memcmp(&e->rows.v[out - 1].rule, &e->rows.v[i].rule,
				      sizeof(struct unwind_rule)) == 0)
			continue;
		e->rows.v[out++] = e->rows.v[i];
	}
	e->rows.n = out;
	fde_list_release(&eh);
	fde_list_release(&df);
	fde_list_release(&dbg);
	return out;
}

/* The eager lookup: the rule of the last row at or before vaddr, NULL for a gap. */
static inline const struct unwind_rule *eager_find(const struct eager_table *e, uint64_t vaddr)
{
	size_t a = 0, b = e->rows.n;

	if (e->rows.n == 0 || vaddr < e->base || vaddr - e->base > UINT32_MAX)
		return NULL;
	uint32_t pc = (uint32_t)(vaddr - e->base);

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (e->rows.v[mid].pc <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || e->rows.v[a - 1].rule.cfa == CFA_NONE)
		return NULL;
	return &e->rows.v[a - 1].rule;
}

static inline void eager_release(struct eager_table *e)
{
	free(e->rows.v);
	memset(e, 0, sizeof(*e));
}

#endif
