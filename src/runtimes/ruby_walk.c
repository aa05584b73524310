/* Reading one execution context's control frames (see ruby_proc.h).
 *
 * The frames are rb_control_frame_t records that grow down from the end of the VM stack:
 * ec->cfp is the newest, and the oldest real frame sits just above the dummy frame the
 * thread starts with. Each frame's ep[0] holds its kind and flags: a C function frame
 * (VM_FRAME_MAGIC_CFUNC) finds its method entry at ep[-2]; a frame with an instruction
 * sequence has cfp->iseq and a pc; dummy and C-block frames are left out. A frame
 * flagged VM_FRAME_FLAG_FINISH was pushed by a vm_exec call from C, so it starts a new
 * activation of the interpreter loop (rb_vm_exec) in the native stack: it is marked
 * RT_FRAME_ENTRY, as is the oldest frame.
 *
 * Everything is read in batches (one system call for the frames, one for their ep
 * words, read as one range of the VM stack, one for the iseqs with their bodies) and
 * checked: the stack must end where
 * the VM stack does, every pointer is bounded, and ec->cfp is read again at the end; a
 * stack that moved meanwhile is read again, at most MAX_ATTEMPTS times. */
#include "runtimes/ruby_proc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTEMPTS 3
#define MAX_VM_STACK (64ull << 20)	/* bytes: far above any thread's VM stack */
#define MAX_ISEQ_WORDS (1u << 26)	/* instructions of one iseq, VALUEs */
#define NO_FRAME UINT64_MAX		/* a frame left out */
#define EP_WINDOW (64 * 1024)		/* bytes of VM stack read at once for the ep words */

struct raw {
	uint64_t cfp_iseq, pc, ep;
	uint64_t flags, me;		/* ep[0], ep[-2] */
};

/* Reads the frames of ec once, newest first, into raw[0..max), from the head of ec (its
 * first RB_EC_READ bytes, read now when head is NULL). Returns their number (*more set
 * when older ones were left out), or -EAGAIN when ec->cfp moved while read. */
static int read_frames(struct runtime_proc *rp, uint64_t ec, const uint8_t *head,
		       struct raw *raw, int max, bool *more)
{
	const struct rb_layout *l = &rp->l;
	uint8_t e[RB_EC_READ];
	struct rb_span spans[RB_MAX_FRAMES + 2];
	uint8_t eps[RB_MAX_FRAMES * 24];
	uint64_t again = 0;

	if (head)
		memcpy(e, head, sizeof(e));
	else if (rb_read_all(rp->pid, ec, e, sizeof(e)) < 0)
		return -EFAULT;
	uint64_t stack = rb_rd64(e, l->ec_vm_stack), words = rb_rd64(e, l->ec_vm_stack_size);
	uint64_t cfp = rb_rd64(e, l->ec_cfp);
	if (!stack || words == 0 || words > MAX_VM_STACK / 8)
		return -EINVAL;
	uint64_t end = stack + words * 8 - l->cfp_size;	/* the thread's dummy frame */
	if (cfp < stack || cfp > end || (end - cfp) % l->cfp_size)
		return -EINVAL;
	uint64_t total = (end - cfp) / l->cfp_size;
	int n = total > (uint64_t)max ? max : (int)total;
	*more = total > (uint64_t)n;
	if (n == 0)
		return 0;
	uint8_t *cf = xmalloc((size_t)n * l->cfp_size);
	int err = rb_read_all(rp->pid, cfp, cf, (size_t)n * l->cfp_size);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; err == 0 && i < n; i++) {
		const uint8_t *c = cf + (size_t)i * l->cfp_size;
		raw[i].pc = rb_rd64(c, l->cfp_pc);
		raw[i].cfp_iseq = rb_rd64(c, l->cfp_iseq);
		raw[i].ep = rb_rd64(c, l->cfp_ep);
		if (raw[i].ep >= stack + 16 && raw[i].ep < cfp) {	/* on the VM stack */
			lo = raw[i].ep - 16 < lo ? raw[i].ep - 16 : lo;
			hi = raw[i].ep + 8 > hi ? raw[i].ep + 8 : hi;
		}
	}
	free(cf);
	if (err < 0)
		return err;
	/* the ep words of the frames whose environment is on the VM stack (most) in one
	 * range, the others (escaped to the heap) one by one; ec->cfp again after them, in
	 * the same system call */
	bool window = hi > lo && hi - lo <= EP_WINDOW;
	uint8_t *win = window ? xmalloc(hi - lo) : NULL;
	size_t ns = 0, slot[RB_MAX_FRAMES];
	if (window)
		spans[ns++] = (struct rb_span){ lo, hi - lo, win };
	for (int i = 0; i < n; i++) {
		slot[i] = SIZE_MAX;
		if (window && raw[i].ep >= lo + 16 && raw[i].ep + 8 <= hi)
			continue;
		slot[i] = ns;
		spans[ns++] = (struct rb_span){ raw[i].ep >= 16 ? raw[i].ep - 16 : 0, 24, eps + i * 24 };
	}
	spans[ns] = (struct rb_span){ ec + l->ec_cfp, 8, &again };
	size_t got = rb_read_spans(rp->pid, spans, ns + 1);
	int ok = 0;
	for (int i = 0; i < n; i++) {
		bool read = slot[i] == SIZE_MAX ? got > 0 : got > slot[i];
		const uint8_t *e24 = slot[i] == SIZE_MAX ? win + (raw[i].ep - 16 - lo) : eps + i * 24;
		if (!read)
			break;	/* an unreadable frame: keep the newer ones */
		raw[i].me = rb_rd64(e24, 0);
		raw[i].flags = rb_rd64(e24, 16);
		ok++;
	}
	free(win);
	if (got <= ns || ok < n) {
		n = ok;
		*more = true;
		if (rb_read_all(rp->pid, ec + l->ec_cfp, &again, 8) < 0)
			return -EFAULT;
	}
	return again == cfp ? n : -EAGAIN;
}

/* The ids of the C function frames of raw[0..n) (the others are left alone): their
 * method entries (ep[-2]) and method definitions are read in two batches, the name
 * looked up by the definition's original_id. */
static void cfuncs(struct runtime_proc *rp, const struct raw *raw, int n, uint64_t *ids)
{
	uint64_t addrs[RB_MAX_FRAMES], defs[RB_MAX_FRAMES];
	uint8_t me[RB_MAX_FRAMES * 40], def[RB_MAX_FRAMES * 40];
	int idx[RB_MAX_FRAMES];
	size_t k = 0, got, nd = 0;

	for (int i = 0; i < n; i++)
		if ((raw[i].flags & RB_FRAME_MAGIC_MASK) == RB_FRAME_MAGIC_CFUNC && raw[i].me) {
			idx[k] = i;
			addrs[k++] = raw[i].me;
		} else if ((raw[i].flags & RB_FRAME_MAGIC_MASK) == RB_FRAME_MAGIC_CFUNC) {
			ids[i] = RB_CFUNC_ID | rb_cfunc_index(rp, 0);
		}
	got = rb_read_many(rp->pid, addrs, k, 40, me);
	for (size_t j = 0; j < got; j++) {
		uint64_t flags = rb_rd64(me, j * 40);
		bool ment = (flags & RB_T_MASK) == RB_T_IMEMO && ((flags >> 12) & 0xf) == RB_IMEMO_MENT;
		defs[j] = ment ? rb_rd64(me, j * 40 + rp->l.me_def) : 0;
	}
	/* the definitions, in runs of the readable ones */
	for (size_t j = 0; j < got; j += nd + 1) {
		nd = 0;
		while (j + nd < got && defs[j + nd])
			nd++;
		size_t ok = rb_read_many(rp->pid, defs + j, nd, 40, def + j * 40);
		for (size_t m = ok; m < nd; m++)
			defs[j + m] = 0;
	}
	for (size_t j = 0; j < k; j++) {
		const uint8_t *d = def + j * 40;
		uint64_t id = j < got && defs[j] && (d[0] & 0xf) == RB_METHOD_TYPE_CFUNC
			      ? rb_rd64(d, rp->l.def_original_id) : 0;
		ids[idx[j]] = RB_CFUNC_ID | rb_cfunc_index(rp, id);
	}
}

/* Names the frames of raw[0..n): frame ids and lines into ids and lines (newest
 * first), NO_FRAME for frames left out. */
static void resolve(struct runtime_proc *rp, const struct raw *raw, int n, uint64_t *ids,
		    uint32_t *lines)
{
	const struct rb_layout *l = &rp->l;
	uint64_t addrs[RB_MAX_FRAMES];
	uint8_t iseqs[RB_MAX_FRAMES * 24];
	uint8_t *bodies = xmalloc((size_t)RB_MAX_FRAMES * l->body_read);
	int idx[RB_MAX_FRAMES];
	size_t k = 0;

	cfuncs(rp, raw, n, ids);
	for (int i = 0; i < n; i++) {
		uint64_t magic = raw[i].flags & RB_FRAME_MAGIC_MASK;
		lines[i] = 0;
		if (magic == RB_FRAME_MAGIC_CFUNC)
			continue;
		ids[i] = NO_FRAME;
		if ((raw[i].flags & 1) && magic != RB_FRAME_MAGIC_DUMMY &&
			   magic != RB_FRAME_MAGIC_IFUNC && raw[i].cfp_iseq && raw[i].pc) {
			idx[k] = i;
			addrs[k++] = raw[i].cfp_iseq;
		}
	}
	/* the iseqs, and in the same system call the bodies they had when last seen */
	struct rb_span *spans = xmalloc((2 * k + 1) * sizeof(*spans));
	uint64_t guess[RB_MAX_FRAMES];
	size_t ns = k;
	for (size_t j = 0; j < k; j++) {
		void **slot = hashmap__find(rp->iseq_by_addr, &addrs[j], sizeof(addrs[j]));
		guess[j] = slot ? rp->iseqs[(uintptr_t)*slot - 1]->body : 0;
		spans[j] = (struct rb_span){ addrs[j], 24, iseqs + j * 24 };
	}
	for (size_t j = 0; j < k; j++)
		if (guess[j])
			spans[ns++] = (struct rb_span){ guess[j], l->body_read, bodies + j * l->body_read };
	size_t done = rb_read_spans(rp->pid, spans, ns);
	size_t got = done < k ? done : k;
	bool have[RB_MAX_FRAMES] = { false };
	for (size_t j = 0, m = k; j < k; j++)
		if (guess[j])
			have[j] = m++ < done;
	free(spans);
	for (size_t j = 0; j < got; j++) {
		uint64_t flags = rb_rd64(iseqs, j * 24);
		bool is_iseq = (flags & RB_T_MASK) == RB_T_IMEMO && ((flags >> 12) & 0xf) == 7;
		addrs[j] = is_iseq ? rb_rd64(iseqs, j * 24 + l->iseq_body) : 0;
		have[j] &= addrs[j] == guess[j];
	}
	/* the bodies not read yet; an unreadable one is skipped, the reads go on after it */
	struct rb_span more[RB_MAX_FRAMES];
	size_t which[RB_MAX_FRAMES], nm = 0;
	for (size_t j = 0; j < got; j++)
		if (addrs[j] && !have[j]) {
			which[nm] = j;
			more[nm++] = (struct rb_span){ addrs[j], l->body_read, bodies + j * l->body_read };
		}
	for (size_t from = 0; from < nm;) {
		size_t ok = rb_read_spans(rp->pid, more + from, nm - from);
		for (size_t m = 0; m < ok; m++)
			have[which[from + m]] = true;
		from += ok + 1;
	}
	for (size_t j = 0; j < got; j++) {
		if (!have[j] || !addrs[j])
			continue;
		const uint8_t *b = bodies + j * l->body_read;
		int i = idx[j];
		int64_t id = rb_iseq_index(rp, raw[i].cfp_iseq, addrs[j], b);
		uint64_t enc = rb_rd64(b, l->body_encoded);
		if (id < 0 || raw[i].pc < enc || (raw[i].pc - enc) / 8 > MAX_ISEQ_WORDS)
			continue;
		uint32_t pos = (uint32_t)((raw[i].pc - enc) / 8);
		ids[i] = (uint64_t)id;
		lines[i] = rb_iseq_line(rp, (size_t)id, pos ? pos - 1 : 0);
	}
	free(bodies);
}

int rb_walk__stack(struct runtime_proc *rp, uint64_t ec, const uint8_t *head,
		   struct rt_frame *frames, int max)
{
	struct raw raw[RB_MAX_FRAMES];
	uint64_t ids[RB_MAX_FRAMES];
	uint32_t lines[RB_MAX_FRAMES];
	bool more = false;
	int n = -EAGAIN;

	if (max > RB_MAX_FRAMES)
		max = RB_MAX_FRAMES;
	for (int attempt = 0; attempt < MAX_ATTEMPTS && n == -EAGAIN; attempt++)
		n = read_frames(rp, ec, attempt ? NULL : head, raw, max, &more);
	if (n <= 0)
		return n;
	resolve(rp, raw, n, ids, lines);
	/* root first; FINISH flags (also of frames left out) mark the entry frames */
	int out = 0;
	bool entry = true;
	for (int i = n - 1; i >= 0; i--) {
		if (raw[i].flags & RB_FRAME_FLAG_FINISH)
			entry = true;
		if (ids[i] == NO_FRAME)
			continue;
		frames[out].id = ids[i];
		frames[out].aux = lines[i];
		frames[out].flags = entry ? RT_FRAME_ENTRY : 0;
		entry = false;
		out++;
	}
	if (more && out > 0)
		frames[0].flags |= RT_FRAME_TRUNCATED;
	return out;
}
