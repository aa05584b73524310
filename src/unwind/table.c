/* Compiles a binary's CFI into a sorted row table (see table.h). For every FDE, libdw's
 * dwarf_cfi_addrframe() gives the frame state of one row and the pc range it covers;
 * each state is reduced to a CFA rule and an rbp rule, then rows are sorted, the gaps
 * between FDEs marked CFA_NONE, and equal neighbours merged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "unwind/fde.h"
#include "unwind/table.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define FP_SAMPLE 256	/* FDEs looked at to decide whether a binary keeps frame pointers */

/* A row while the table is built. */
struct unwind_row {
	uint32_t pc;		/* first vaddr of the row, minus the table's base */
	struct unwind_rule rule;
};

struct row_vec {
	struct unwind_row *v;
	size_t n, alloc;
};

/* An offset(N) rule as libdw gives it: DW_OP_call_frame_cfa [DW_OP_plus_uconst N]. */
static bool cfa_offset_rule(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/* The expression binutils emits for .plt entries:
 * breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus. */
static bool plt_rule(const Dwarf_Op *ops, size_t nops, int64_t *off, int *threshold)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 ||
	    ops[1].number != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	*off = (int64_t)ops[0].number;
	*threshold = ops[4].atom - DW_OP_lit0;
	return true;
}

/* A register saved by DW_CFA_expression at rsp + N, as libdw gives it:
 * DW_OP_call_frame_cfa (pushed per the DWARF rules, unused); DW_OP_breg7 N. */
static bool rsp_slot(Dwarf_Frame *f, int reg, int64_t *slot)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(f, reg, mem, &ops, &nops) != 0 || nops != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_breg7)
		return false;
	*slot = (int64_t)ops[1].number;
	return true;
}

/* glibc's x86_64 signal trampoline: CFA = *(rsp + N), rip at rsp + N + 8, rbp at rsp + K
 * (the sigcontext the kernel pushed). */
static bool signal_rule(Dwarf_Frame *f, struct unwind_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t rip, rbp;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops != 2 || ops[0].atom != DW_OP_breg7 ||
	    ops[1].atom != DW_OP_deref)
		return false;
	int64_t rsp = (int64_t)ops[0].number;
	if (rsp < 0 || rsp > 4096 || !rsp_slot(f, REG_RA, &rip) || rip != rsp + 8 ||
	    !rsp_slot(f, REG_RBP, &rbp) || rbp < 0 || rbp > 4096)
		return false;
	r->cfa = CFA_SIGNAL;
	r->off = (int32_t)rsp;
	r->aux = (int16_t)rbp;
	r->rbp = RBP_AT_CFA;
	return true;
}

/* Reduces one frame state to a row. */
static void classify(Dwarf_Frame *f, bool signal, struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	int thr;

	r->cfa = CFA_BAD;
	r->rbp = RBP_LOST;
	r->off = 0;
	r->aux = 0;
	if (signal && signal_rule(f, r))
		return;
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		if (ops)	/* undefined: the outermost frame */
			r->cfa = CFA_END;
		return;
	}
	if (!cfa_offset_rule(ops, nops, &off) || off != -8)
		return;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return;
	if (nops == 1 && (ops[0].atom == DW_OP_bregx || ops[0].atom == DW_OP_breg6 ||
			  ops[0].atom == DW_OP_breg7)) {
		uint64_t reg = ops[0].atom == DW_OP_bregx ? ops[0].number
							   : (uint64_t)(ops[0].atom - DW_OP_breg0);
		off = (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number);
		if ((reg != REG_RSP && reg != REG_RBP) || off < INT32_MIN || off > INT32_MAX)
			return;
		r->cfa = reg == REG_RSP ? CFA_RSP : CFA_RBP;
		r->off = (int32_t)off;
	} else if (plt_rule(ops, nops, &off, &thr) && off >= 0 && off <= INT32_MAX) {
		r->cfa = CFA_PLT;
		r->off = (int32_t)off;
		r->aux = (int16_t)thr;
		return;		/* PLT code never touches rbp */
	} else {
		return;
	}
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) != 0)
		return;
	if (nops == 0 && !ops)
		r->rbp = RBP_SAME;
	else if (cfa_offset_rule(ops, nops, &off) && off >= INT16_MIN && off <= INT16_MAX) {
		r->rbp = RBP_AT_CFA;
		r->aux = (int16_t)off;
	}
}

static void push_row(struct row_vec *rv, uint64_t pc_rel, const struct unwind_rule *r)
{
	if (rv->n == rv->alloc) {
		rv->alloc = rv->alloc ? 2 * rv->alloc : 1024;
		rv->v = xrealloc(rv->v, rv->alloc * sizeof(*rv->v));
	}
	rv->v[rv->n].rule = *r;
	rv->v[rv->n].pc = (uint32_t)pc_rel;
	rv->n++;
}

/* Compiles the rows of one FDE [lo, hi). Returns true when the FDE sets up an rbp frame
 * (push rbp; mov rsp, rbp: CFA = rbp + 16 with rbp saved at CFA - 16). */
static bool compile_fde(Dwarf_CFI *cfi, uint64_t base, uint64_t lo, uint64_t hi,
			struct row_vec *rv)
{
	uint64_t pc = lo;
	bool fp = false;
	struct unwind_rule r;

	if (lo < base || hi - base > UINT32_MAX)
		return false;
	while (pc < hi) {
		Dwarf_Frame *f;
		Dwarf_Addr start, end;
		bool signal = false;

		if (dwarf_cfi_addrframe(cfi, pc, &f) != 0)
			break;
		if (dwarf_frame_info(f, &start, &end, &signal) < 0) {
			free(f);
			break;
		}
		classify(f, signal, &r);
		free(f);
		if (r.cfa == CFA_RBP && r.off == 16 && r.rbp == RBP_AT_CFA && r.aux == -16)
			fp = true;
		if (rv)
			push_row(rv, pc - base, &r);
		if (end <= pc)
			break;
		pc = end;
	}
	if (rv) {
		memset(&r, 0, sizeof(r));
		r.cfa = CFA_NONE;
		push_row(rv, hi - base, &r);
	}
	return fp;
}

static int row_cmp(const void *a, const void *b)
{
	const struct unwind_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* at one pc, a gap marker sorts first so that the real row wins */
	return (y->rule.cfa == CFA_NONE) - (x->rule.cfa == CFA_NONE);
}

static bool rule_same(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa == b->cfa && a->rbp == b->rbp && a->off == b->off && a->aux == b->aux;
}

/* Sorts rows, keeps the last row at each pc, merges neighbours with the same rule, and
 * stores them into t as pcs plus indexes into a deduplicated rule array. */
static void finish_rows(struct unwind_table *t, struct row_vec *rv)
{
	size_t out = 0;
	struct hashmap *seen;

	if (rv->n == 0)
		return;
	/* FDEs are compiled in address order, so rows usually come sorted already */
	for (size_t i = 1; i < rv->n; i++)
		if (row_cmp(&rv->v[i - 1], &rv->v[i]) > 0) {
			qsort(rv->v, rv->n, sizeof(*rv->v), row_cmp);
			break;
		}
	for (size_t i = 0; i < rv->n; i++) {
		if (i + 1 < rv->n && rv->v[i + 1].pc == rv->v[i].pc)
			continue;
		if (out > 0 && rule_same(&rv->v[out - 1].rule, &rv->v[i].rule))
			continue;
		rv->v[out++] = rv->v[i];
	}
	t->pcs = xmalloc(out * sizeof(*t->pcs));
	t->rule_of = xmalloc(out * sizeof(*t->rule_of));
	seen = hashmap__new();
	for (size_t i = 0; i < out; i++) {
		struct unwind_rule *r = &rv->v[i].rule;
		bool created;
		void **slot;

		if (t->nrules >= UINT16_MAX) {	/* never seen: degrade, do not fail */
			r->cfa = CFA_BAD;
			r->off = r->aux = 0;
			r->rbp = RBP_LOST;
		}
		slot = hashmap__insert(seen, r, sizeof(*r), &created);
		if (created) {
			t->rules = xrealloc(t->rules, (t->nrules + 1) * sizeof(*t->rules));
			t->rules[t->nrules] = *r;
			*slot = (void *)(uintptr_t)t->nrules++;
		}
		t->pcs[i] = rv->v[i].pc;
		t->rule_of[i] = (uint16_t)(uintptr_t)*slot;
	}
	hashmap__free(seen);
	t->nrows = out;
}

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

/* Compiles the FDEs of list l read through cfi; with skip, those overlapping skip. */
static void compile_list(struct unwind_table *t, Dwarf_CFI *cfi, const struct fde_list *l,
			 const struct fde_list *skip, struct row_vec *rv)
{
	for (size_t i = 0; i < l->n; i++)
		if (!skip || !overlaps(skip, l->v[i].lo, l->v[i].hi))
			compile_fde(cfi, t->base, l->v[i].lo, l->v[i].hi, rv);
}

/* Decides whether the code keeps frame pointers from an even sample of its FDEs. */
static void classify_fp(struct unwind_table *t, Dwarf_CFI *cfi, const struct fde_list *l)
{
	size_t step = l->n > FP_SAMPLE ? l->n / FP_SAMPLE : 1;

	for (size_t i = 0; i < l->n; i += step) {
		t->nfdes++;
		if (compile_fde(cfi, t->base, l->v[i].lo, l->v[i].hi, NULL))
			t->fp_fdes++;
	}
	if (t->nfdes >= 8 && t->fp_fdes * 10 >= t->nfdes * 6)
		t->fp_built = true;
}

/* The .debug_frame of elf: its FDEs into l, its CFI into *dw (end it with dwarf_end). */
static Dwarf_CFI *debug_frame(Elf *elf, struct fde_list *l, Dwarf **dw)
{
	Elf_Scn *scn = find_section(elf, ".debug_frame");
	Dwarf_CFI *cfi;

	*dw = NULL;
	if (!scn || fde_list_add(l, elf, scn, false) <= 0)
		return NULL;
	*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	cfi = *dw ? dwarf_getcfi(*dw) : NULL;
	if (!cfi) {
		fde_list_release(l);
		if (*dw)
			dwarf_end(*dw);
		*dw = NULL;
		return NULL;
	}
	qsort(l->v, l->n, sizeof(*l->v), range_cmp);
	return cfi;
}

/* .plt.got and .plt.sec hold one-instruction stubs (jmp *GOT) that binutils gives no
 * FDE: a sample there has its return address at rsp, as at any function's entry. */
static void plt_rows(struct unwind_table *t, Elf *elf, const struct fde_list *eh,
		     struct row_vec *rv)
{
	const char *names[] = { ".plt.got", ".plt.sec" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Elf_Scn *scn = find_section(elf, names[i]);
		GElf_Shdr sh;
		struct unwind_rule r = { .off = 8, .cfa = CFA_RSP, .rbp = RBP_SAME };

		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_addr < t->base ||
		    sh.sh_addr + sh.sh_size - t->base > UINT32_MAX ||
		    overlaps(eh, sh.sh_addr, sh.sh_addr + sh.sh_size))
			continue;
		push_row(rv, sh.sh_addr - t->base, &r);
		r = (struct unwind_rule){ .cfa = CFA_NONE };
		push_row(rv, sh.sh_addr + sh.sh_size - t->base, &r);
	}
}

int unwind_table_build(struct unwind_table *t, const struct unwind_sources *src)
{
	struct fde_list eh = { 0 }, df = { 0 }, dbg = { 0 };
	struct row_vec rv = { 0 };
	Dwarf_CFI *eh_cfi = NULL, *df_cfi = NULL, *dbg_cfi = NULL;
	Dwarf *df_dw = NULL, *dbg_dw = NULL;
	Elf_Scn *scn;
	int err;

	memset(t, 0, sizeof(*t));
	err = read_loads(t, src->elf);
	if (err)
		return err;
	bool go = find_section(src->elf, ".gopclntab") || find_section(src->elf, ".go.buildinfo");

	scn = find_section(src->elf, ".eh_frame");
	if (scn && fde_list_add(&eh, src->elf, scn, true) > 0)
		eh_cfi = dwarf_getcfi_elf(src->elf);
	if (!eh_cfi)
		fde_list_release(&eh);
	if (eh.n)
		qsort(eh.v, eh.n, sizeof(*eh.v), range_cmp);
	df_cfi = debug_frame(src->elf, &df, &df_dw);
	if (src->debug && src->debug != src->elf)
		dbg_cfi = debug_frame(src->debug, &dbg, &dbg_dw);
	t->has_cfi = eh_cfi || df_cfi || dbg_cfi;

	if (go)
		t->fp_built = true;
	else if (eh_cfi)
		classify_fp(t, eh_cfi, &eh);
	else if (df_cfi)
		classify_fp(t, df_cfi, &df);
	if (!t->fp_built || src->rows_if_fp) {
		if (eh_cfi)
			compile_list(t, eh_cfi, &eh, NULL, &rv);
		if (df_cfi)
			compile_list(t, df_cfi, &df, &eh, &rv);
		if (dbg_cfi)
			compile_list(t, dbg_cfi, &dbg, eh.n ? &eh : &df, &rv);
		if (t->has_cfi)
			plt_rows(t, src->elf, &eh, &rv);
		finish_rows(t, &rv);
		free(rv.v);
	}
	if (eh_cfi)
		dwarf_cfi_end(eh_cfi);
	if (df_dw)
		dwarf_end(df_dw);
	if (dbg_dw)
		dwarf_end(dbg_dw);
	fde_list_release(&eh);
	fde_list_release(&df);
	fde_list_release(&dbg);
	return 0;
}

void unwind_table_release(struct unwind_table *t)
{
	free(t->pcs);
	free(t->rule_of);
	free(t->rules);
	memset(t, 0, sizeof(*t));
}

size_t unwind_table_bytes(const struct unwind_table *t)
{
	return sizeof(*t) + t->nrows * (sizeof(*t->pcs) + sizeof(*t->rule_of)) +
	       t->nrules * sizeof(*t->rules);
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

const struct unwind_rule *unwind_table_find(const struct unwind_table *t, uint64_t vaddr)
{
	size_t a = 0, b = t->nrows;

	if (t->nrows == 0 || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	uint32_t pc = (uint32_t)(vaddr - t->base);

	while (a < b) {	/* first row with pc > target */
		size_t mid = a + (b - a) / 2;

		if (t->pcs[mid] <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || t->rules[t->rule_of[a - 1]].cfa == CFA_NONE)
		return NULL;
	return &t->rules[t->rule_of[a - 1]];
}
