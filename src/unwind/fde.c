/* Lists the pc range of every FDE of a .eh_frame or .debug_frame section, and compiles
 * one FDE into rows. libdw finds the frame state at a given pc but has no call that lists
 * the FDEs, so the listing walks the section with dwarf_next_cfi() and decodes each FDE's
 * initial_location per its CIE. Compiling asks dwarf_cfi_addrframe() for the frame state
 * of each row and reduces it to a CFA rule and an rbp rule. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "unwind/fde.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define CLASSIFY_ROWS 16	/* rows looked at to classify an FDE */
#define ENC_OMIT 0xff
#define ENC_BAD 0xfe

static uint64_t read_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t read_sleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Reads a value of DW_EH_PE format (enc & 0x0f). Returns false when it does not fit. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v)
{
	size_t size;
	const uint8_t *q = *p;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	case DW_EH_PE_uleb128: *v = read_uleb(p, end); return *p <= end;
	case DW_EH_PE_sleb128: *v = (uint64_t)read_sleb(p, end); return *p <= end;
	default: return false;
	}
	if ((size_t)(end - q) < size)
		return false;
	if (size == 8) {
		memcpy(v, q, 8);
	} else if (size == 4) {
		uint32_t x;
		memcpy(&x, q, 4);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		uint16_t x;
		memcpy(&x, q, 2);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	*p = q + size;
	return true;
}

/* The FDE pointer encoding a CIE declares with its 'R' augmentation. */
static uint8_t cie_encoding(const Dwarf_CIE *cie, bool eh_frame)
{
	const char *aug = cie->augmentation ? cie->augmentation : "";
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	uint8_t enc = DW_EH_PE_absptr;

	if (!eh_frame || aug[0] != 'z')
		return aug[0] == '\0' ? DW_EH_PE_absptr : ENC_BAD;
	if (!p)
		return ENC_BAD;
	for (const char *c = aug + 1; *c; c++) {
		if (*c == 'L') {
			p++;
		} else if (*c == 'R') {
			if (p >= end)
				return ENC_BAD;
			enc = *p++;
		} else if (*c == 'P') {
			uint64_t ignored;

			if (p >= end)
				return ENC_BAD;
			uint8_t penc = *p++;
			if (!read_encoded(&p, end, penc & 0x0f, &ignored))
				return ENC_BAD;
		} else if (*c != 'S' && *c != 'B') {
			break;	/* unknown: 'R' usually came first */
		}
		if (p > end)
			return ENC_BAD;
	}
	return enc;
}

static void push(struct fde_list *l, uint64_t lo, uint64_t hi)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 256;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n].lo = lo;
	l->v[l->n].hi = hi;
	l->n++;
}

/* What listing one section needs: its data, where it is loaded, and its CIEs' encodings. */
struct fde_scan {
	const unsigned char *ident;
	Elf_Data *data;
	uint64_t addr;
	bool eh_frame;
	struct hashmap *cies;	/* CIE offset -> encoding + 1 */
	Dwarf_Off last_cie;	/* the CIE met last (most FDEs of a section share one) */
	uint8_t last_enc;
	bool have_last;
};

/* The section scn of elf as s reads it. Returns 0 or a negative errno. */
static int scan_init(struct fde_scan *s, Elf *elf, Elf_Scn *scn, bool eh_frame)
{
	GElf_Shdr shdr;

	memset(s, 0, sizeof(*s));
	s->ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!s->ident || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return -EINVAL;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EINVAL;
	s->data = elf_getdata(scn, NULL);
	if (!s->data || !s->data->d_buf || s->data->d_size == 0)
		return -ENODATA;
	s->addr = shdr.sh_addr;
	s->eh_frame = eh_frame;
	s->cies = hashmap__new();
	return 0;
}

/* Makes room in l for the FDEs of a section of size bytes (an FDE takes 30-60). */
static void reserve(struct fde_list *l, size_t size)
{
	size_t guess = size / 32 < (1u << 20) ? size / 32 : (1u << 20);

	if (l->alloc - l->n < guess) {
		l->alloc = l->n + guess;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
}

/* The encoding of the CIE at cie_off, read once per CIE. */
static uint8_t cie_enc(struct fde_scan *s, Dwarf_Off cie_off)
{
	void **slot;
	Dwarf_CFI_Entry c;
	Dwarf_Off cnext;
	uintptr_t enc1;
	bool created;

	if (s->have_last && s->last_cie == cie_off)
		return s->last_enc;
	slot = hashmap__find(s->cies, &cie_off, sizeof(cie_off));
	if (slot) {
		enc1 = (uintptr_t)*slot;
		goto out;
	}
	if (dwarf_next_cfi(s->ident, s->data, s->eh_frame, cie_off, &cnext, &c) == 0 &&
	    dwarf_cfi_cie_p(&c))
		enc1 = (uintptr_t)cie_encoding(&c.cie, s->eh_frame) + 1;
	else
		enc1 = ENC_BAD + 1;
	*hashmap__insert(s->cies, &cie_off, sizeof(cie_off), &created) = (void *)enc1;
out:
	s->have_last = true;
	s->last_cie = cie_off;
	s->last_enc = (uint8_t)(enc1 - 1);
	return s->last_enc;
}

/* Decodes the pc range of FDE e into [*lo, *hi). Returns 1, 0 for an empty FDE, -1 for
 * one not understood. */
static int fde_range_of(struct fde_scan *s, const Dwarf_CFI_Entry *e, uint64_t *lo, uint64_t *hi)
{
	uint8_t enc = cie_enc(s, e->fde.CIE_pointer);
	const uint8_t *p = e->fde.start, *end = e->fde.end;
	uint64_t len;
	uint64_t field = s->addr + (uint64_t)(p - (const uint8_t *)s->data->d_buf);

	if (enc == ENC_BAD || enc == ENC_OMIT || (enc & DW_EH_PE_indirect))
		return -1;
	if (!read_encoded(&p, end, enc, lo) || !read_encoded(&p, end, enc & 0x0f, &len))
		return -1;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*lo += field;
	else if ((enc & 0x70) != DW_EH_PE_absptr)
		return -1;	/* datarel/textrel: not used for FDEs on x86_64 */
	if (*lo + len < *lo)
		return -1;
	*hi = *lo + len;
	return len != 0;
}

int fde_list_add(struct fde_list *l, Elf *elf, Elf_Scn *scn, bool eh_frame)
{
	struct fde_scan s;
	int added = 0, err = scan_init(&s, elf, scn, eh_frame);

	if (err)
		return err;
	reserve(l, s.data->d_size);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;

	while (off < s.data->d_size &&
	       dwarf_next_cfi(s.ident, s.data, eh_frame, off, &next, &e) == 0) {
		uint64_t lo, hi;

		if (next <= off)
			break;
		off = next;
		if (dwarf_cfi_cie_p(&e) || fde_range_of(&s, &e, &lo, &hi) <= 0)
			continue;
		push(l, lo, hi);
		added++;
	}
	hashmap__free(s.cies);
	return added;
}

/* The binary search table of .eh_frame_hdr (version 1, a udata4 count, sdata4 entries
 * relative to the section: what GNU ld, gold and lld write) as entries and a count.
 * Returns false when the section is anything else. */
static bool hdr_table(Elf_Scn *hdr, const uint8_t **tab, uint64_t *count, uint64_t *addr)
{
	GElf_Shdr sh;
	Elf_Data *d = gelf_getshdr(hdr, &sh) ? elf_getdata(hdr, NULL) : NULL;
	const uint8_t *p, *end;
	uint64_t ignored;

	if (!d || !d->d_buf || d->d_size < 4)
		return false;
	p = d->d_buf;
	end = p + d->d_size;
	if (p[0] != 1 || p[2] != DW_EH_PE_udata4 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return false;
	const uint8_t *q = p + 4;

	if (p[1] == ENC_OMIT || !read_encoded(&q, end, p[1], &ignored) ||
	    !read_encoded(&q, end, DW_EH_PE_udata4, count) ||
	    (uint64_t)(end - q) / 8 < *count)
		return false;
	*tab = q;
	*addr = sh.sh_addr;
	return true;
}

bool fde_hdr_find(Elf_Scn *hdr, uint64_t vaddr, uint64_t *fde_vaddr)
{
	const uint8_t *tab;
	uint64_t count, hdr_addr, a = 0, b;

	if (!hdr || !hdr_table(hdr, &tab, &count, &hdr_addr))
		return false;
	b = count;
	while (a < b) {	/* the first entry at or after vaddr */
		uint64_t mid = a + (b - a) / 2;
		int32_t loc;

		memcpy(&loc, tab + 8 * mid, 4);
		if (hdr_addr + (uint64_t)(int64_t)loc < vaddr)
			a = mid + 1;
		else
			b = mid;
	}
	int32_t loc, fde;

	if (a == count)
		return false;
	memcpy(&loc, tab + 8 * a, 4);
	memcpy(&fde, tab + 8 * a + 4, 4);
	if (hdr_addr + (uint64_t)(int64_t)loc != vaddr)
		return false;
	*fde_vaddr = hdr_addr + (uint64_t)(int64_t)fde;
	return true;
}

int fde_list_add_sorted(struct fde_list *l, Elf *elf, Elf_Scn *scn, Elf_Scn *hdr,
			bool *by_table)
{
	const uint8_t *tab;
	uint64_t count, hdr_addr;
	struct fde_scan s;
	int added = 0;
	bool ignored;

	if (!by_table)
		by_table = &ignored;
	*by_table = false;
	if (!hdr || !hdr_table(hdr, &tab, &count, &hdr_addr) || count == 0 ||
	    scan_init(&s, elf, scn, true) != 0)
		return fde_list_add(l, elf, scn, true);
	size_t n0 = l->n;

	reserve(l, s.data->d_size);
	for (uint64_t i = 0; i < count; i++) {
		int32_t loc, fde;
		uint64_t lo, hi, off;
		Dwarf_Off next;
		Dwarf_CFI_Entry e;

		memcpy(&loc, tab + 8 * i, 4);
		memcpy(&fde, tab + 8 * i + 4, 4);
		off = hdr_addr + (uint64_t)(int64_t)fde - s.addr;
		if (off >= s.data->d_size ||
		    dwarf_next_cfi(s.ident, s.data, true, off, &next, &e) != 0 ||
		    dwarf_cfi_cie_p(&e))
			goto scan;	/* a table that does not point at FDEs: list them all */
		/* the linker tabulates only FDEs it understood: anything else is a lie */
		int ok = fde_range_of(&s, &e, &lo, &hi);

		if (ok < 0 || lo != hdr_addr + (uint64_t)(int64_t)loc)
			goto scan;
		if (ok == 0)
			continue;
		push(l, lo, hi);
		added++;
	}
	hashmap__free(s.cies);
	*by_table = true;
	return added;
scan:
	hashmap__free(s.cies);
	l->n = n0;
	return fde_list_add(l, elf, scn, true);
}

void fde_list_release(struct fde_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}


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

void fde_rows_push(struct fde_rows *rv, uint32_t pc, const struct unwind_rule *r)
{
	if (rv->n == rv->alloc) {
		rv->alloc = rv->alloc ? 2 * rv->alloc : 64;
		rv->v = xrealloc(rv->v, rv->alloc * sizeof(*rv->v));
	}
	rv->v[rv->n].rule = *r;
	rv->v[rv->n].pc = pc;
	rv->n++;
}

bool fde_compile(Dwarf_CFI *cfi, uint64_t base, uint64_t lo, uint64_t hi, struct fde_rows *rv)
{
	uint64_t pc = lo;
	bool fp = false;
	struct unwind_rule r;
	int rows = 0;

	if (lo < base || hi - base > UINT32_MAX)
		return false;
	/* classifying: a frame pointer is set up in the prologue, within a few rows, and
	 * each row costs libdw a replay of the FDE's program from its start */
	while (pc < hi && (rv || rows++ < CLASSIFY_ROWS)) {
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
		if (r.cfa == CFA_RBP && r.off == 16 && r.rbp == RBP_AT_CFA && r.aux == -16) {
			fp = true;
			if (!rv)
				break;	/* classifying only: the answer is known */
		}
		if (rv)
			fde_rows_push(rv, (uint32_t)(pc - base), &r);
		if (end <= pc)
			break;
		pc = end;
	}
	return fp;
}
