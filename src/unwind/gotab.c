/* Go unwind rows from .gopclntab (see gotab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "symbols/gofunc.h"
#include "unwind/gotab.h"

static Elf_Data *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0) {
			Elf_Data *d;

			if (sh->sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
				return NULL;
			return d;
		}
	}
	return NULL;
}

bool unwind_go_binary(Elf *elf)
{
	GElf_Shdr sh;

	return section(elf, ".gopclntab", &sh) || section(elf, ".data.rel.ro.gopclntab", &sh) ||
	       section(elf, ".go.buildinfo", &sh);
}

/* Where Go 1.18+ function entries start when the header does not say (Go 1.26 keeps it
 * in moduledata only, and a PIE's header is relocated at run time): moduledata's text
 * (.go.module, Go 1.26+), else the start of .text. */
static uint64_t text_start(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Data *d = section(elf, ".go.module", &sh);
	uint64_t v = 0;

	if (d && d->d_size >= 23 * 8)
		memcpy(&v, (const char *)d->d_buf + 22 * 8, 8);
	if (!v && section(elf, ".text", &sh))
		v = sh.sh_addr;
	return v;
}

/* The runtime functions whose frames end a stack: those flagged TOPFRAME (goexit,
 * mstart, rt0_go; by name before Go 1.17, which has no flag byte), and the two that run
 * their callee on the g0 stack with nothing above it (mcall, which the runtime's own
 * traceback also treats as a top frame, and morestack). */
static bool top_frame(const struct gofunc *f)
{
	static const char *const names[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go",
					     "runtime.mcall", "runtime.morestack", NULL };

	if (f->flag & GOFUNC_TOPFRAME)
		return true;
	for (const char *const *n = names; *n; n++)
		if (strcmp(f->name, *n) == 0)
			return true;
	return false;
}

static bool sp_write(const struct gofunc *f)
{
	static const char *const names[] = { "runtime.gogo", "runtime.systemstack",
					     "runtime.asmcgocall", "runtime.asmcgocall_no_g",
					     "runtime.cgocallback", NULL };

	if (f->flag & GOFUNC_SPWRITE)
		return true;
	for (const char *const *n = names; *n; n++)
		if (strcmp(f->name, *n) == 0)
			return true;
	return false;
}

/* Compiles function f's rows into rv (emptied first). */
static void rows_of(const struct gofunc_tab *t, const struct gofunc *f, uint64_t base,
		    struct fde_rows *rv)
{
	struct unwind_rule r = { .cfa = CFA_BAD, .rbp = RBP_LOST };
	struct gopcvalue it;
	uint64_t lo, hi, covered = f->entry;
	int32_t v;

	rv->n = 0;
	if (top_frame(f)) {
		r.cfa = CFA_END;
		fde_rows_push(rv, (uint32_t)(f->entry - base), &r);
		return;
	}
	if (!strcmp(f->name, "runtime.asmcgocall")) {
		r.cfa = CFA_GO_SWITCH;
		fde_rows_push(rv, (uint32_t)(f->entry - base), &r);
		return;
	}
	if (sp_write(f) || !gopcvalue_init(&it, t, f, f->pcsp)) {
		fde_rows_push(rv, (uint32_t)(f->entry - base), &r);
		return;
	}
	while (gopcvalue_next(&it, &lo, &hi, &v)) {
		if (hi == lo)
			continue;
		if (v < 0 || v > (1 << 30)) {
			r = (struct unwind_rule){ .cfa = CFA_BAD, .rbp = RBP_LOST };
		} else {
			r = (struct unwind_rule){ .off = v + 8, .cfa = CFA_RSP, .rbp = RBP_GO };
		}
		fde_rows_push(rv, (uint32_t)(lo - base), &r);
		covered = hi;
	}
	if (covered < f->end) {	/* a table that ends early (padding, or malformed) */
		r = (struct unwind_rule){ .cfa = CFA_BAD, .rbp = RBP_LOST };
		fde_rows_push(rv, (uint32_t)(covered - base), &r);
	}
}

int unwind_go_rows(Elf *elf, uint64_t base, unwind_go_fn emit, void *ctx)
{
	GElf_Shdr sh;
	Elf_Data *d = section(elf, ".gopclntab", &sh);
	struct gofunc_tab t;
	struct fde_rows rv = { 0 };
	uint64_t prev_end = 0;
	int n = 0;

	if (!d)
		d = section(elf, ".data.rel.ro.gopclntab", &sh);
	if (!d || gofunc_tab_init(&t, d->d_buf, d->d_size, text_start(elf)) != 0)
		return -ENOENT;
	for (uint64_t i = 0; i < t.nfunc; i++) {
		struct gofunc f;

		if (gofunc_tab__func(&t, i, &f) != 0 || f.entry < prev_end)
			break;	/* out of order: the rest cannot be trusted */
		prev_end = f.end;
		if (f.end == f.entry || f.entry < base || f.end - base > UINT32_MAX)
			continue;
		rows_of(&t, &f, base, &rv);
		emit(ctx, f.entry, f.end, &rv);
		n++;
	}
	free(rv.v);
	return n;
}
