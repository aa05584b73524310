/* A binary's CFI as a lazily compiled row table (see table.h). At first use the FDEs of
 * every source are listed and merged into one sorted index, with the same precedence the
 * sources always had; a lookup finds the FDE by binary search, compiles its rows with
 * fde_compile() the first time, merges equal neighbours, and appends them to the table's
 * growing row arrays with their rules deduplicated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "unwind/fde.h"
#include "unwind/gotab.h"
#include "unwind/table.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define FP_SAMPLE 256	/* FDEs looked at to decide whether a binary keeps frame pointers */
#define ROWS_MAX ((1u << 28) - 1)	/* rows kept of one FDE (a real one has a few dozen) */
#define RULE_ID_BYTES 64	/* a rule's entry in rule_ids, about */
#define LIBDW_FDE_BYTES 96	/* what libdw caches per FDE it has parsed, about */

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (n && strcmp(n, name) == 0)
			return shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0 ? NULL : scn;
	}
	return NULL;
}

bool unwind_elf_has_section(Elf *elf, const char *name)
{
	return find_section(elf, name) != NULL;
}

/* The header fields that identify a CFI section (before any decompression). */
static void section_id(Elf_Scn *scn, struct unwind_section *s)
{
	GElf_Shdr sh;

	memset(s, 0, sizeof(*s));
	if (scn && gelf_getshdr(scn, &sh)) {
		s->addr = sh.sh_addr;
		s->offset = sh.sh_offset;
		s->size = sh.sh_size;
	}
}

static bool overlaps(const struct fde_list *l, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = l->n;	/* l is sorted by lo */

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (l->v[mid].lo < hi)
			a = mid + 1;
		else
			b = mid;
	}
	return a > 0 && l->v[a - 1].hi > lo;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

#define RUNS_MAX 16	/* sorted runs merged without qsort */

/* The end of the sorted run of v that starts at i. */
static size_t run_end(const char *v, size_t i, size_t n, size_t size,
		      int (*cmp)(const void *, const void *))
{
	while (++i < n && cmp(v + (i - 1) * size, v + i * size) <= 0)
		;
	return i;
}

/* Sorts v stably. The lists sorted here are a few sorted runs (the FDEs of each source in
 * address order, then the PLT stubs): those are merged, run after run, in O(n log runs);
 * anything else goes to qsort. */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	size_t runs[RUNS_MAX + 1], nruns = 0;
	char *a = v, *tmp;

	for (size_t i = 0; i < n; i = runs[nruns - 1]) {
		if (nruns == RUNS_MAX) {
			qsort(v, n, size, cmp);
			return;
		}
		runs[nruns++] = run_end(a, i, n, size, cmp);
	}
	if (nruns <= 1)
		return;
	tmp = xmalloc(n * size);
	while (nruns > 1) {	/* merge runs 0 and 1 into tmp, then back */
		size_t mid = runs[0], end = runs[1], i = 0, j = mid, k = 0;

		while (i < mid && j < end) {
			const char *x = a + (cmp(a + j * size, a + i * size) < 0 ? j++ : i++) * size;

			memcpy(tmp + k++ * size, x, size);
		}
		memcpy(tmp + k * size, a + i * size, (mid - i) * size);
		k += mid - i;
		memcpy(tmp + k * size, a + j * size, (end - j) * size);
		memcpy(a, tmp, end * size);
		memmove(runs, runs + 1, --nruns * sizeof(runs[0]));
	}
	free(tmp);
}

static int read_loads(struct unwind_table *t, Elf *elf)
{
	size_t n;
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    gelf_getclass(elf) != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	t->base = UINT64_MAX;
	for (size_t i = 0; i < n && t->nloads < (int)(sizeof(t->loads) / sizeof(t->loads[0])); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		t->loads[t->nloads].offset = ph.p_offset;
		t->loads[t->nloads].vaddr = ph.p_vaddr;
		t->loads[t->nloads].filesz = ph.p_filesz;
		t->nloads++;
		if (ph.p_vaddr < t->base)
			t->base = ph.p_vaddr;
	}
	if (t->nloads == 0)
		t->base = 0;
	return 0;
}

/* Decides whether the code keeps frame pointers from an even sample of its FDEs. */
static void classify_fp(struct unwind_table *t, Dwarf_CFI *cfi, const struct fde_list *l)
{
	size_t step = l->n > FP_SAMPLE ? l->n / FP_SAMPLE : 1;

	for (size_t i = 0; i < l->n; i += step) {
		t->nfdes++;
		if (fde_compile(cfi, t->base, l->v[i].lo, l->v[i].hi, NULL))
			t->fp_fdes++;
	}
	if (t->nfdes >= 8 && t->fp_fdes * 10 >= t->nfdes * 6)
		t->fp_built = true;
}

/* Opens the .debug_frame of elf as *dw's CFI, when it is the section s identifies (with
 * l: lists its FDEs into l and records s). Returns NULL when there is none or it differs. */
static Dwarf_CFI *debug_frame(Elf *elf, struct fde_list *l, Dwarf **dw, struct unwind_section *s)
{
	Elf_Scn *scn = find_section(elf, ".debug_frame");
	struct unwind_section now;
	Dwarf_CFI *cfi;

	*dw = NULL;
	section_id(scn, &now);
	if (!scn || (l ? fde_list_add(l, elf, scn, false) <= 0 : memcmp(&now, s, sizeof(now)) != 0))
		return NULL;
	*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	cfi = *dw ? dwarf_getcfi(*dw) : NULL;
	if (!cfi) {
		if (l)
			fde_list_release(l);
		if (*dw)
			dwarf_end(*dw);
		*dw = NULL;
		return NULL;
	}
	if (l) {
		*s = now;
		sort(l->v, l->n, sizeof(*l->v), range_cmp);
	}
	return cfi;
}

static bool rule_same(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa == b->cfa && a->rbp == b->rbp && a->off == b->off && a->aux == b->aux;
}

/* The index of rule r in t->rules, added when new. */
static uint16_t rule_id(struct unwind_table *t, struct unwind_rule r)
{
	bool created;
	void **slot;

	if (!t->rule_ids)
		t->rule_ids = hashmap__new();
	slot = hashmap__find(t->rule_ids, &r, sizeof(r));
	if (slot)
		return (uint16_t)(uintptr_t)*slot;
	if (t->nrules >= UINT16_MAX) {	/* never seen: degrade, do not fail */
		r = (struct unwind_rule){ .cfa = CFA_BAD, .rbp = RBP_LOST };
		slot = hashmap__find(t->rule_ids, &r, sizeof(r));
		if (slot)
			return (uint16_t)(uintptr_t)*slot;
	}
	slot = hashmap__insert(t->rule_ids, &r, sizeof(r), &created);
	t->rules = xrealloc(t->rules, (t->nrules + 1) * sizeof(*t->rules));
	t->rules[t->nrules] = r;
	*slot = (void *)(uintptr_t)t->nrules;
	return (uint16_t)t->nrules++;
}


/* Appends rows rv as FDE f's, equal neighbours merged, and marks f compiled. */
static void append_rows(struct unwind_table *t, struct unwind_fde *f, const struct fde_rows *rv)
{
	size_t n = 0;

	f->first = (uint32_t)t->nrows;
	for (size_t i = 0; i < rv->n && n < ROWS_MAX; i++) {
		if (n > 0 && rule_same(&t->rules[t->rule_of[t->nrows - 1]], &rv->v[i].rule))
			continue;
		if (t->nrows == t->rows_alloc) {
			t->rows_alloc = t->rows_alloc ? 2 * t->rows_alloc : 256;
			t->pcs = xrealloc(t->pcs, t->rows_alloc * sizeof(*t->pcs));
			t->rule_of = xrealloc(t->rule_of, t->rows_alloc * sizeof(*t->rule_of));
		}
		t->pcs[t->nrows] = rv->v[i].pc;
		t->rule_of[t->nrows] = rule_id(t, rv->v[i].rule);
		t->nrows++;
		n++;
	}
	f->nrows = n;
	f->compiled = 1;
	t->compiled++;
}

/* Compiles FDE f from cfi and appends its rows. */
static void compile(struct unwind_table *t, struct unwind_fde *f, const struct unwind_cfi *cfi)
{
	struct fde_rows rv = { 0 };
	Dwarf_CFI *c = f->src == SRC_EH ? cfi->eh : f->src == SRC_DF ? cfi->df
		     : f->src == SRC_DBG ? cfi->dbg : NULL;

	if (f->src == SRC_PLT) {
		struct unwind_rule r = { .off = 8, .cfa = CFA_RSP, .rbp = RBP_SAME };

		fde_rows_push(&rv, f->lo, &r);
	} else if (c) {
		fde_compile(c, t->base, t->base + f->lo, t->base + f->hi, &rv);
	}
	append_rows(t, f, &rv);
	free(rv.v);
}

static void add_fde(struct unwind_table *t, size_t *alloc, uint64_t lo, uint64_t hi, int src)
{
	if (lo < t->base || hi <= lo || hi - t->base > UINT32_MAX)
		return;	/* rows are 32-bit offsets from base */
	if (t->nfde == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		t->fdes = xrealloc(t->fdes, *alloc * sizeof(*t->fdes));
	}
	t->fdes[t->nfde++] = (struct unwind_fde){ .lo = (uint32_t)(lo - t->base),
						  .hi = (uint32_t)(hi - t->base), .src = src };
}

struct go_ctx {
	struct unwind_table *t;
	size_t *alloc;
	struct fde_list ranges;	/* the Go functions', sorted */
};

/* A Go function with its rows (unwind_go_fn). */
static void go_fde(void *ctx, uint64_t lo, uint64_t hi, const struct fde_rows *rv)
{
	struct go_ctx *g = ctx;
	size_t n = g->t->nfde;

	add_fde(g->t, g->alloc, lo, hi, SRC_GO);
	if (g->t->nfde == n)
		return;
	append_rows(g->t, &g->t->fdes[n], rv);
	if (g->ranges.n == g->ranges.alloc) {
		g->ranges.alloc = g->ranges.alloc ? 2 * g->ranges.alloc : 256;
		g->ranges.v = xrealloc(g->ranges.v, g->ranges.alloc * sizeof(*g->ranges.v));
	}
	g->ranges.v[g->ranges.n++] = (struct fde_range){ lo, hi };
}

static int fde_cmp(const void *a, const void *b)
{
	const struct unwind_fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->src > y->src) - (x->src < y->src);
}

/* The sorted index of every FDE that gives rows: .eh_frame's; .debug_frame's where no
 * .eh_frame FDE is; the debug file's where none of the binary's is; and .plt.got and
 * .plt.sec, one-instruction stubs (jmp *GOT) that binutils gives no FDE: a sample there
 * has its return address at rsp, as at any function's entry. */
static void build_index(struct unwind_table *t, Elf *elf, const struct unwind_cfi *cfi,
			const struct fde_list *eh, const struct fde_list *df,
			const struct fde_list *dbg)
{
	const char *plt[] = { ".plt.got", ".plt.sec" };
	size_t alloc = eh->n + df->n + dbg->n + 2;
	struct go_ctx g = { t, &alloc, { 0 } };

	t->fdes = xmalloc(alloc * sizeof(*t->fdes));
	if (t->go && unwind_go_rows(elf, t->base, go_fde, &g) <= 0)
		t->go = false;
	for (size_t i = 0; i < eh->n; i++)
		if (!overlaps(&g.ranges, eh->v[i].lo, eh->v[i].hi))
			add_fde(t, &alloc, eh->v[i].lo, eh->v[i].hi, SRC_EH);
	for (size_t i = 0; cfi->df && i < df->n; i++)
		if (!overlaps(eh, df->v[i].lo, df->v[i].hi) &&
		    !overlaps(&g.ranges, df->v[i].lo, df->v[i].hi))
			add_fde(t, &alloc, df->v[i].lo, df->v[i].hi, SRC_DF);
	for (size_t i = 0; cfi->dbg && i < dbg->n; i++)
		if (!overlaps(eh->n ? eh : df, dbg->v[i].lo, dbg->v[i].hi) &&
		    !overlaps(&g.ranges, dbg->v[i].lo, dbg->v[i].hi))
			add_fde(t, &alloc, dbg->v[i].lo, dbg->v[i].hi, SRC_DBG);
	for (size_t i = 0; t->has_cfi && i < sizeof(plt) / sizeof(plt[0]); i++) {
		Elf_Scn *scn = find_section(elf, plt[i]);
		GElf_Shdr sh;

		if (scn && gelf_getshdr(scn, &sh) && sh.sh_addr + sh.sh_size > sh.sh_addr &&
		    !overlaps(eh, sh.sh_addr, sh.sh_addr + sh.sh_size))
			add_fde(t, &alloc, sh.sh_addr, sh.sh_addr + sh.sh_size, SRC_PLT);
	}
	fde_list_release(&g.ranges);
	if (t->nfde)
		sort(t->fdes, t->nfde, sizeof(*t->fdes), fde_cmp);
	if (t->nfde == 0) {
		free(t->fdes);
		t->fdes = NULL;
	} else {
		t->fdes = xrealloc(t->fdes, t->nfde * sizeof(*t->fdes));
	}
}

int unwind_table_init(struct unwind_table *t, const struct unwind_sources *src,
		      struct unwind_cfi *cfi)
{
	struct fde_list eh = { 0 }, df = { 0 }, dbg = { 0 };
	Elf_Scn *scn;
	int err;

	memset(t, 0, sizeof(*t));
	memset(cfi, 0, sizeof(*cfi));
	err = read_loads(t, src->elf);
	if (err)
		return err;
	bool go = unwind_go_binary(src->elf);

	scn = find_section(src->elf, ".eh_frame");
	section_id(scn, &t->secs[SRC_EH]);
	if (scn && fde_list_add_sorted(&eh, src->elf, scn, find_section(src->elf, ".eh_frame_hdr"),
				       &t->eh_by_table) > 0)
		cfi->eh = dwarf_getcfi_elf(src->elf);
	if (!cfi->eh) {
		fde_list_release(&eh);
		memset(&t->secs[SRC_EH], 0, sizeof(t->secs[SRC_EH]));
		t->eh_by_table = false;
	}
	if (eh.n)
		sort(eh.v, eh.n, sizeof(*eh.v), range_cmp);
	cfi->df = debug_frame(src->elf, &df, &cfi->df_dw, &t->secs[SRC_DF]);
	if (src->debug && src->debug != src->elf)
		cfi->dbg = debug_frame(src->debug, &dbg, &cfi->dbg_dw, &t->secs[SRC_DBG]);
	t->has_cfi = cfi->eh || cfi->df || cfi->dbg;

	if (go)
		t->fp_built = t->go = true;
	else if (src->fp_known != UNWIND_FP_UNKNOWN)
		t->fp_built = src->fp_known == UNWIND_FP_YES;
	else if (cfi->eh)
		classify_fp(t, cfi->eh, &eh);
	else if (cfi->df)
		classify_fp(t, cfi->df, &df);
	/* an fp_built binary's FDEs are listed too: smart mode unwinds its leaf frames by CFI */
	build_index(t, src->elf, cfi, &eh, &df, &dbg);
	fde_list_release(&eh);
	fde_list_release(&df);
	fde_list_release(&dbg);
	if (t->compiled == t->nfde)
		unwind_cfi_close(cfi);	/* nothing will be compiled */
	return 0;
}

int unwind_cfi_open(struct unwind_cfi *cfi, const struct unwind_table *t,
		    const struct unwind_sources *src)
{
	struct unwind_table now = { 0 };
	struct unwind_section eh;

	memset(cfi, 0, sizeof(*cfi));
	if (read_loads(&now, src->elf) != 0 || now.base != t->base || now.nloads != t->nloads ||
	    memcmp(now.loads, t->loads, sizeof(now.loads)) != 0)
		return -ESTALE;
	if (t->secs[SRC_EH].size) {
		Elf_Scn *scn = find_section(src->elf, ".eh_frame");

		section_id(scn, &eh);
		if (memcmp(&eh, &t->secs[SRC_EH], sizeof(eh)) == 0)
			cfi->eh = dwarf_getcfi_elf(src->elf);
		if (!cfi->eh)
			goto stale;
	}
	struct unwind_section df = t->secs[SRC_DF], dbg = t->secs[SRC_DBG];

	if (df.size && !(cfi->df = debug_frame(src->elf, NULL, &cfi->df_dw, &df)))
		goto stale;
	if (dbg.size && (!src->debug ||
			 !(cfi->dbg = debug_frame(src->debug, NULL, &cfi->dbg_dw, &dbg))))
		goto stale;
	return 0;
stale:
	unwind_cfi_close(cfi);
	return -ESTALE;
}

/* The size of dw's .debug_frame when libelf decompressed it into memory (it differs from
 * the size on file s recorded), else 0. */
static size_t inflated(Dwarf *dw, const struct unwind_section *s)
{
	Elf_Scn *scn = dw ? find_section(dwarf_getelf(dw), ".debug_frame") : NULL;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_size == s->size)
		return 0;
	return sh.sh_size;
}

size_t unwind_cfi_bytes(const struct unwind_cfi *cfi, const struct unwind_table *t)
{
	/* .eh_frame_hdr's search table lets libdw parse only the FDEs asked for; without it
	 * (.debug_frame) libdw parses every FDE up to the one it looks for */
	size_t parsed = cfi->df || cfi->dbg ? t->nfde : t->compiled + t->nfdes;

	if (!cfi->eh && !cfi->df && !cfi->dbg)
		return 0;
	return LIBDW_FDE_BYTES * parsed + inflated(cfi->df_dw, &t->secs[SRC_DF]) +
	       inflated(cfi->dbg_dw, &t->secs[SRC_DBG]);
}

void unwind_cfi_close(struct unwind_cfi *cfi)
{
	if (cfi->eh)
		dwarf_cfi_end(cfi->eh);
	if (cfi->df_dw)
		dwarf_end(cfi->df_dw);
	if (cfi->dbg_dw)
		dwarf_end(cfi->dbg_dw);
	memset(cfi, 0, sizeof(*cfi));
}

/* The FDE of t that covers vaddr, or NULL. */
static struct unwind_fde *fde_at(const struct unwind_table *t, uint64_t vaddr)
{
	size_t a = 0, b = t->nfde;

	if (t->nfde == 0 || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	uint32_t pc = (uint32_t)(vaddr - t->base);

	while (a < b) {	/* first FDE with lo > pc */
		size_t mid = a + (b - a) / 2;

		if (t->fdes[mid].lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || pc >= t->fdes[a - 1].hi)
		return NULL;
	return &t->fdes[a - 1];
}

int unwind_table_eh_entry(const struct unwind_table *t, Elf *elf, uint64_t vaddr, uint64_t *off)
{
	const struct unwind_fde *f = fde_at(t, vaddr);
	uint64_t at;

	if (!f || f->compiled || f->src != SRC_EH)
		return 0;
	if (!fde_hdr_find(find_section(elf, ".eh_frame_hdr"), t->base + f->lo, &at) ||
	    at < t->secs[SRC_EH].addr || at - t->secs[SRC_EH].addr >= t->secs[SRC_EH].size)
		return -1;
	*off = at - t->secs[SRC_EH].addr;
	return 1;
}

const struct unwind_rule *unwind_table_find(struct unwind_table *t, uint64_t vaddr,
					    const struct unwind_cfi *cfi, bool *need_cfi)
{
	struct unwind_fde *f = fde_at(t, vaddr);
	size_t a, b;

	if (!f)
		return NULL;
	uint32_t pc = (uint32_t)(vaddr - t->base);

	if (!f->compiled) {
		if (!cfi) {
			if (need_cfi)
				*need_cfi = true;
			return NULL;
		}
		compile(t, f, cfi);
	}
	a = f->first;
	b = (size_t)f->first + f->nrows;
	while (a < b) {	/* first row with pc > target */
		size_t mid = a + (b - a) / 2;

		if (t->pcs[mid] <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == f->first || t->rules[t->rule_of[a - 1]].cfa == CFA_NONE)
		return NULL;
	return &t->rules[t->rule_of[a - 1]];
}

void unwind_table_release(struct unwind_table *t)
{
	free(t->fdes);
	free(t->pcs);
	free(t->rule_of);
	free(t->rules);
	hashmap__free(t->rule_ids);
	memset(t, 0, sizeof(*t));
}

size_t unwind_table_bytes(const struct unwind_table *t)
{
	return sizeof(*t) + t->nfde * sizeof(*t->fdes) +
	       t->rows_alloc * (sizeof(*t->pcs) + sizeof(*t->rule_of)) +
	       t->nrules * (sizeof(*t->rules) + RULE_ID_BYTES);
}

bool unwind_table_vaddr(const struct unwind_table *t, uint64_t file_off, uint64_t *vaddr)
{
	for (int i = 0; i < t->nloads; i++) {
		const struct unwind_load *l = &t->loads[i];

		if (file_off >= l->offset && file_off - l->offset < l->filesz) {
			*vaddr = file_off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}
