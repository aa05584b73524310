/* The unwinder: walks one sampled user stack (see unwind.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"
#include "util/strbuf.h"

struct unwinder {
	enum unwind_mode mode;
	uint64_t cache_bytes;
};

struct unwinder *unwinder__new(enum unwind_mode mode, uint64_t cache_bytes)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->mode = mode;
	u->cache_bytes = cache_bytes;
	return u;
}

void unwinder__free(struct unwinder *u)
{
	free(u);
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

int unwinder__unwind(struct unwinder *u, const struct proc_ref *p,
		     const struct unwind_sample *sample, unwind_find_mapping_fn find, void *ctx,
		     uint64_t *pcs, int max, bool *truncated)
{
	if (!u || !sample || !pcs || max < 1 || (sample->stack_len && !sample->stack))
		return -EINVAL;
	int n = 0;
	uint64_t bp = sample->regs.bp, prev = sample->regs.sp;

	pcs[n++] = sample->regs.ip;
	*truncated = false;
	while (n < max) {
		uint64_t next_bp, ra;

		if (bp == 0)
			return n;	/* the ABI's outermost frame */
		if ((bp & 7) || bp < prev || !stack_read(sample, bp, &next_bp) ||
		    !stack_read(sample, bp + 8, &ra))
			break;
		if (ra == 0)
			return n;
		pcs[n++] = ra;
		if (next_bp != 0 && next_bp <= bp)
			break;
		prev = bp + 16;
		bp = next_bp;
	}
	*truncated = true;
	return n;
}
