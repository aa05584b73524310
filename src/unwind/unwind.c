/* The unwinder: walks one sampled user stack (see unwind.h).
 *
 * Each frame is stepped by one of three methods:
 *   CFI: the binary's table (its FDE compiled on first use) gives the CFA (rsp/rbp + offset, or the PLT rule);
 *        the return address is at CFA-8 and the caller's rbp is unchanged or saved
 *        at CFA+off.
 *   Go:  the function's pcsp table (.gopclntab) gives the SP delta at the pc: the return
 *        address is at rsp + delta, exact in frameless leaves, prologues and epilogues;
 *        the rows look like CFI rows (CFA = rsp + delta + 8), in both modes.
 *   FP:  the frame-pointer chain: [rbp] is the caller's rbp, [rbp+8] the return address.
 * dwarf mode uses CFI for every file-backed binary that has CFI, and frame pointers only
 * for code without any (JIT and anonymous memory, binaries without CFI). smart mode
 * walks the callers in -fno-omit-frame-pointer binaries by frame pointers without
 * compiling their rows, but the leaf frame by CFI (a leaf without a frame of its own
 * would hide its caller), and falls back to frame pointers where CFI is missing or
 * unsupported. Every read is checked against the stack copy; the walk only moves up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "unwind/cache.h"
#include "unwind/unwind.h"
#include "util/strbuf.h"

#define DEFAULT_CACHE_BYTES (32ull << 20)
#define USER_TOP 0x800000000000ull	/* x86_64 user addresses are below this */
#define FAR_MAX (64u << 10)	/* bytes of a goroutine's stack read past a cgo call */

struct unwinder {
	enum unwind_mode mode;
	struct unwind_cache *cache;
	bool far_wanted;	/* the last step failed at a Go cgo call's stack switch */
	uint8_t far[FAR_MAX];
};

struct frame {
	uint64_t pc, sp, bp;
	bool bp_ok;	/* bp holds this frame's rbp */
	bool exact;	/* pc was interrupted (leaf, signal), not a return address */
};

enum step { STEP_OK, STEP_END, STEP_FAIL };

struct unwinder *unwinder__new(enum unwind_mode mode, uint64_t cache_bytes)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->mode = mode;
	u->cache = unwind_cache__new(cache_bytes ? cache_bytes : DEFAULT_CACHE_BYTES,
				     mode == UNWIND_DWARF);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	unwind_cache__free(u->cache);
	free(u);
}

uint64_t unwinder__memory(const struct unwinder *u)
{
	return sizeof(*u) + unwind_cache__bytes(u->cache);
}

/* Reads the 8 bytes at addr from the stack copy. Returns false when they are outside it. */
static bool stack_read(const struct unwind_sample *s, uint64_t addr, uint64_t *val)
{
	if (addr < s->regs.sp || addr - s->regs.sp > s->stack_len ||
	    s->stack_len - (addr - s->regs.sp) < 8)
		return false;
	memcpy(val, s->stack + (addr - s->regs.sp), 8);
	return true;
}

static enum step step_fp(const struct unwind_sample *s, struct frame *f)
{
	uint64_t saved_bp, ra;

	if (!f->bp_ok)
		return STEP_FAIL;
	if (f->bp == 0)
		return STEP_END;	/* the ABI's outermost frame */
	if ((f->bp & 7) || f->bp < f->sp || !stack_read(s, f->bp, &saved_bp) ||
	    !stack_read(s, f->bp + 8, &ra))
		return STEP_FAIL;
	if (ra == 0)
		return STEP_END;
	if (ra >= USER_TOP)
		return STEP_FAIL;
	f->sp = f->bp + 16;
	f->bp = saved_bp;
	f->pc = ra;
	f->exact = false;
	return STEP_OK;
}

/* Out of a signal frame: the kernel's sigcontext holds the interrupted registers. */
static enum step step_signal(const struct unwind_sample *s, const struct unwind_rule *r,
			     struct frame *f)
{
	uint64_t sp, ip, bp;

	if (!stack_read(s, f->sp + (uint64_t)r->off, &sp) ||
	    !stack_read(s, f->sp + (uint64_t)r->off + 8, &ip) || sp <= f->sp || ip >= USER_TOP)
		return STEP_FAIL;
	f->bp_ok = stack_read(s, f->sp + (uint64_t)r->aux, &bp) && (f->bp = bp, true);
	f->sp = sp;
	f->pc = ip;
	f->exact = true;
	return ip ? STEP_OK : STEP_END;
}

static enum step step_cfi(const struct unwind_sample *s, const struct unwind_rule *r,
			  struct frame *f)
{
	uint64_t cfa, ra, bp;

	if (r->cfa == CFA_SIGNAL)
		return step_signal(s, r, f);
	switch (r->cfa) {
	case CFA_RSP:
		cfa = f->sp + (uint64_t)(int64_t)r->off;
		break;
	case CFA_RBP:
		if (!f->bp_ok)
			return STEP_FAIL;
		cfa = f->bp + (uint64_t)(int64_t)r->off;
		break;
	case CFA_PLT:
		cfa = f->sp + (uint64_t)(int64_t)r->off + ((f->pc & 15) >= (uint64_t)r->aux ? 8 : 0);
		break;
	default:
		return STEP_FAIL;
	}
	if (cfa <= f->sp || !stack_read(s, cfa - 8, &ra))
		return STEP_FAIL;
	if (r->rbp == RBP_AT_CFA)
		f->bp_ok = stack_read(s, cfa + (uint64_t)(int64_t)r->aux, &bp) && (f->bp = bp, true);
	else if (r->rbp == RBP_LOST)
		f->bp_ok = false;
	else if (r->rbp == RBP_GO && f->bp_ok && f->bp == cfa - 16)
		f->bp_ok = stack_read(s, cfa - 16, &bp) && (f->bp = bp, true);
	f->sp = cfa;
	f->pc = ra;
	f->exact = false;
	if (ra == 0)
		return STEP_END;
	return ra < USER_TOP ? STEP_OK : STEP_FAIL;
}

/* Steps frame f, whose code is at lookup (pc, or pc-1 for a return address), to its
 * caller. leaf: f was interrupted (the sample's own frame, or one below a signal frame). */
static enum step step(struct unwinder *u, const struct proc_ref *p,
		      const struct unwind_sample *s, unwind_find_mapping_fn find, void *ctx,
		      struct frame *f, uint64_t lookup, bool leaf)
{
	const struct mapping *m = find ? find(ctx, lookup) : NULL;
	const struct unwind_table *t;
	const struct unwind_rule *r = NULL;
	uint64_t va;
	bool smart = u->mode == UNWIND_SMART;

	if (!m)	/* JIT code the process table has not seen yet: only for the leaf */
		return leaf ? step_fp(s, f) : STEP_FAIL;
	t = unwind_cache__get(u->cache, p, m);
	if (!t)	/* anonymous or JIT memory, or an unreadable binary */
		return step_fp(s, f);
	/* smart: frame pointers serve the callers in a binary that keeps them, but not its
	 * leaf, which may have no frame yet (or none at all); Go is unwound by pcsp */
	if (smart && t->fp_built && !t->go && !leaf)
		return step_fp(s, f);
	if (unwind_table_vaddr(t, mapping__file_offset(m, lookup), &va))
		r = unwind_cache__find(u->cache, t, p, m, va);
	if (r && r->cfa == CFA_END)
		return STEP_END;
	if (r && r->cfa == CFA_GO_SWITCH) {
		enum step st = step_fp(s, f);

		u->far_wanted = st == STEP_FAIL && f->bp_ok && f->bp && !(f->bp & 7);
		return st;
	}
	if (r && r->cfa != CFA_BAD)
		return step_cfi(s, r, f);
	if (smart || !t->has_cfi || t->fp_built)
		return step_fp(s, f);
	return STEP_FAIL;
}

/* Reads up to FAR_MAX bytes of process p from addr (stopping at the first page it cannot
 * read) into u->far as the sample far. Returns false when not even a frame could be read. */
static bool read_far(struct unwinder *u, const struct proc_ref *p, uint64_t addr,
		     struct unwind_sample *far)
{
	size_t got = 0;

	/* one call: the kernel stops at the first page it cannot read and says how much it
	 * copied; a second one from there only confirms the fault */
	while (got < FAR_MAX) {
		struct iovec local = { u->far + got, FAR_MAX - got };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), FAR_MAX - got };
		ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < 16)
		return false;
	memset(far, 0, sizeof(*far));
	far->regs.sp = addr;
	far->stack = u->far;
	far->stack_len = got;
	return true;
}

int unwinder__unwind(struct unwinder *u, const struct proc_ref *p,
		     const struct unwind_sample *sample, unwind_find_mapping_fn find, void *ctx,
		     uint64_t *pcs, int max, bool *truncated)
{
	if (!u || !p || !sample || !pcs || max < 1 || !truncated ||
	    (sample->stack_len && !sample->stack))
		return -EINVAL;
	struct frame f = { sample->regs.ip, sample->regs.sp, sample->regs.bp, true, true };
	int n = 0;
	enum step st = STEP_OK;

	const struct unwind_sample *cur = sample;
	struct unwind_sample far;
	bool far_used = false;

	pcs[n++] = f.pc;
	while (n < max) {
		uint64_t lookup = f.exact ? f.pc : f.pc - 1;

		u->far_wanted = false;
		st = step(u, p, cur, find, ctx, &f, lookup, f.exact);
		if (st == STEP_FAIL && u->far_wanted && !far_used) {
			/* C called from Go runs on the g0 stack, which the copy holds; the Go
			 * frames that called it are on the goroutine's stack, where rbp points:
			 * read that from the process (the goroutine is blocked in the call) */
			far_used = true;
			if (read_far(u, p, f.bp, &far)) {
				cur = &far;
				f.sp = f.bp;
				st = step_fp(cur, &f);
			}
		}
		if (st != STEP_OK)
			break;
		pcs[n++] = f.pc;
	}
	*truncated = st != STEP_END;
	return n;
}
