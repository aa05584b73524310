/* Reading one thread's Python frames (see py_walk__stack in python_proc.h).
 *
 * Every read is a process_vm_readv system call, and on a virtual machine each costs
 * microseconds, so a sample makes few of them: frames already seen by the previous
 * sample of the thread (the chain) are read in one batch and kept as long as they still
 * link to each other; new frames are read one by one. A last batch reads the thread
 * state, the newest frame and every frame's code object again: the stack is kept only
 * when the thread is still where it was, and the code objects are checked against the
 * cache in the same call. */
#include "runtimes/python_proc.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#define FR_MAX 128	/* largest frame read of any layout */
#define CO_MAX 512	/* largest code object window */
#define TS_MAX 512

struct walk {
	uint64_t cframe;		/* 3.11/3.12: the _PyCFrame read, else 0 */
	uint64_t newest;		/* the thread's current frame */
	uint64_t addr[PY_MAX_STEPS];	/* the frames visited, newest first */
	uint8_t buf[PY_MAX_STEPS][FR_MAX];
	int steps;
};

/* The newest frame of the thread whose state is ts; 0 when it runs no Python. */
static uint64_t current_frame(struct runtime_proc *rp, const uint8_t *ts, uint64_t *cframe)
{
	const struct py_layout *l = &rp->l;
	uint64_t f = py_rd64(ts, l->ts_frame);
	*cframe = 0;
	if (l->cframe_current == PY_NO_FIELD || !f)
		return f;
	uint8_t cf[16];
	*cframe = f;
	if (py_read_all(rp->pid, f, cf, sizeof(cf)) < 0)
		return 0;
	return py_rd64(cf, l->cframe_current);
}

/* Reads the frames of the previous sample's chain from chain[k] on, in one call, into
 * w from step w->steps. Returns how many were read and still link to each other. */
static int read_chain(struct runtime_proc *rp, const struct py_thread *pt, uint32_t k, struct walk *w)
{
	size_t len = rp->l.fr_read;
	int m = (int)(pt->nr_chain - k), at = w->steps;
	struct iovec local[PY_CHAIN], remote[PY_CHAIN];
	if (m > PY_MAX_STEPS - at)
		m = PY_MAX_STEPS - at;
	for (int j = 0; j < m; j++) {
		local[j] = (struct iovec){ w->buf[at + j], len };
		remote[j] = (struct iovec){ (void *)(uintptr_t)pt->chain[k + j], len };
	}
	ssize_t got = process_vm_readv(rp->pid, local, (unsigned long)m, remote, (unsigned long)m, 0);
	int full = got < 0 ? 0 : (int)((size_t)got / len), j;
	for (j = 0; j < full; j++) {
		if (j > 0 && py_rd64(w->buf[at + j - 1], rp->l.fr_back) != pt->chain[k + j])
			break;
		w->addr[at + j] = pt->chain[k + j];
	}
	return j;
}

/* Visits the frames from w->newest to the oldest (or the step limit). Returns true
 * when the whole chain was read. */
static bool visit(struct runtime_proc *rp, const struct py_thread *pt, struct walk *w)
{
	const struct py_layout *l = &rp->l;
	uint64_t f = w->newest;
	uint32_t hint = 0;
	w->steps = 0;
	while (f && w->steps < PY_MAX_STEPS) {
		uint32_t k = hint;
		while (k < pt->nr_chain && pt->chain[k] != f)
			k++;
		int got = 0;
		if (k < pt->nr_chain && pt->nr_chain - k > 1)
			got = read_chain(rp, pt, k, w);
		if (got > 0) {
			hint = k + (uint32_t)got;
		} else {
			if (py_read_all(rp->pid, f, w->buf[w->steps], l->fr_read) < 0)
				return false;
			w->addr[w->steps] = f;
			got = 1;
		}
		w->steps += got;
		f = py_rd64(w->buf[w->steps - 1], l->fr_back);
	}
	return f == 0;
}

/* Turns the visited frames into raw frames, newest first, with activation marks. */
static int decode(const struct runtime_proc *rp, const struct walk *w, struct py_raw_frame *raw,
		  int max, bool *truncated)
{
	const struct py_layout *l = &rp->l;
	int n = 0;
	for (int i = 0; i < w->steps; i++) {
		const uint8_t *fr = w->buf[i];
		if (l->frame_kind == PY_FRAME_312 && fr[l->fr_owner] == PY_OWNED_BY_CSTACK) {
			if (n > 0)
				raw[n - 1].flags |= RT_FRAME_ENTRY;
			continue;
		}
		if (n == max) {
			*truncated = true;
			return n;
		}
		struct py_raw_frame *r = &raw[n++];
		r->code = py_rd64(fr, l->fr_code);
		r->flags = 0;
		if (l->frame_kind == PY_FRAME_OBJECT) {
			int32_t lasti;
			memcpy(&lasti, fr + l->fr_instr, 4);
			r->instr = (uint64_t)(int64_t)lasti;
			r->flags = RT_FRAME_ENTRY;
		} else {
			r->instr = py_rd64(fr, l->fr_instr);
			if (l->frame_kind == PY_FRAME_311 && fr[l->fr_is_entry])
				r->flags = RT_FRAME_ENTRY;
		}
	}
	if (n > 0 && !*truncated)
		raw[n - 1].flags |= RT_FRAME_ENTRY;	/* the outermost frame of the thread */
	return n;
}

/* Reads the thread state, its _PyCFrame, the newest frame and every code object again
 * in one call. Returns the number of frames (from the newest) whose code object is
 * valid, or -EAGAIN when the thread has moved on. */
static int confirm(struct runtime_proc *rp, const struct py_thread *pt, const struct walk *w,
		   struct py_raw_frame *raw, int n)
{
	const struct py_layout *l = &rp->l;
	uint8_t co[PY_MAX_FRAMES][CO_MAX];	/* 64 KiB: on the stack, so that walks of
						 * several threads or sessions never share it */
	uint8_t ts[TS_MAX], cf[16], fr[FR_MAX];
	struct iovec local[PY_MAX_FRAMES + 3], remote[PY_MAX_FRAMES + 3];
	unsigned long k = 0;
	size_t want = 0;
#define IOV(buf, addr, len) do { local[k] = (struct iovec){ (buf), (len) }; \
	remote[k++] = (struct iovec){ (void *)(uintptr_t)(addr), (len) }; want += (len); } while (0)
	IOV(ts, pt->tstate, l->ts_read);
	if (w->cframe)
		IOV(cf, w->cframe, sizeof(cf));
	if (w->newest)
		IOV(fr, w->newest, l->fr_read);
	for (int i = 0; i < n; i++)
		IOV(co[i], raw[i].code, l->co_read);
#undef IOV
	if (w->newest && !w->steps)
		return -EAGAIN;	/* the newest frame was not readable: nothing to check it by */
	ssize_t got = process_vm_readv(rp->pid, local, k, remote, k, 0);
	if (got < (ssize_t)(want - (size_t)n * l->co_read))
		return -EAGAIN;	/* the thread state or the newest frame is gone */
	uint64_t ident = py_rd64(ts, l->ts_native_tid != PY_NO_FIELD ? l->ts_native_tid : l->ts_thread_id);
	uint64_t now = py_rd64(ts, l->ts_frame);
	if (ident != pt->ident || (w->cframe && now != w->cframe))
		return -EAGAIN;
	if (w->cframe)
		now = py_rd64(cf, l->cframe_current);
	if (now != w->newest)
		return -EAGAIN;
	if (w->newest && (py_rd64(fr, l->fr_code) != py_rd64(w->buf[0], l->fr_code) ||
			  py_rd64(fr, l->fr_back) != py_rd64(w->buf[0], l->fr_back)))
		return -EAGAIN;
	int full = (int)(((size_t)got - (want - (size_t)n * l->co_read)) / l->co_read);
	for (int i = 0; i < n; i++) {
		/* a failed iovec stops the batch: read the others one by one */
		if (i >= full && py_read_all(rp->pid, raw[i].code, co[i], l->co_read) < 0)
			return i;
		int64_t idx = py_code_index(rp, raw[i].code, co[i]);
		if (idx < 0)
			return i;
		raw[i].index = (uint32_t)idx;
	}
	return n;
}

int py_walk__stack(struct runtime_proc *rp, struct py_thread *pt, const uint8_t *ts,
		   struct py_raw_frame *raw, int max, bool *truncated)
{
	struct walk w;	/* 34 KiB of scratch, on the stack: reentrant */
	const struct py_layout *l = &rp->l;
	if (l->fr_read > FR_MAX || l->co_read > CO_MAX || l->ts_read > TS_MAX)
		return -ENOTSUP;
	if (max > PY_MAX_FRAMES)
		max = PY_MAX_FRAMES;
	*truncated = false;
	w.newest = current_frame(rp, ts, &w.cframe);
	bool whole = visit(rp, pt, &w);
	int n = decode(rp, &w, raw, max, truncated);
	*truncated |= !whole;
	int valid = confirm(rp, pt, &w, raw, n);
	if (valid < 0)
		return valid;
	if (valid < n) {
		n = valid;
		*truncated = true;
	}
	pt->nr_chain = (uint32_t)(w.steps < PY_CHAIN ? w.steps : PY_CHAIN);
	memcpy(pt->chain, w.addr, pt->nr_chain * sizeof(*pt->chain));
	pt->cframe = w.cframe;
	return n;
}

int py_walk__fast(struct runtime_proc *rp, struct py_thread *pt, struct py_raw_frame *raw, int max,
		  bool *truncated)
{
	struct walk w;	/* on the stack, as in py_walk__stack */
	const struct py_layout *l = &rp->l;
	uint8_t ts[TS_MAX], cf[16];
	struct iovec local[PY_CHAIN + 2], remote[PY_CHAIN + 2];
	unsigned long k = 0;
	size_t want = 0;
	bool has_cframe = l->cframe_current != PY_NO_FIELD;
	if (!pt->nr_chain || (has_cframe && !pt->cframe) || l->fr_read > FR_MAX || l->ts_read > TS_MAX)
		return -EAGAIN;
#define IOV(buf, addr, len) do { local[k] = (struct iovec){ (buf), (len) }; \
	remote[k++] = (struct iovec){ (void *)(uintptr_t)(addr), (len) }; want += (len); } while (0)
	IOV(ts, pt->tstate, l->ts_read);
	if (has_cframe)
		IOV(cf, pt->cframe, sizeof(cf));
	for (uint32_t j = 0; j < pt->nr_chain; j++)
		IOV(w.buf[j], pt->chain[j], l->fr_read);
#undef IOV
	if (process_vm_readv(rp->pid, local, k, remote, k, 0) != (ssize_t)want)
		return -EAGAIN;
	uint64_t ident = py_rd64(ts, l->ts_native_tid != PY_NO_FIELD ? l->ts_native_tid : l->ts_thread_id);
	uint64_t now = py_rd64(ts, l->ts_frame);
	if (ident != pt->ident || now != (has_cframe ? pt->cframe : pt->chain[0]) ||
	    (has_cframe && py_rd64(cf, l->cframe_current) != pt->chain[0]))
		return -EAGAIN;
	for (uint32_t j = 0; j < pt->nr_chain; j++) {
		uint64_t back = py_rd64(w.buf[j], l->fr_back);
		if (back != (j + 1 < pt->nr_chain ? pt->chain[j + 1] : 0))
			return -EAGAIN;	/* moved, or longer than the chain remembered */
		w.addr[j] = pt->chain[j];
	}
	if (max > PY_MAX_FRAMES)
		max = PY_MAX_FRAMES;
	w.steps = (int)pt->nr_chain;
	w.newest = pt->chain[0];
	w.cframe = has_cframe ? pt->cframe : 0;
	*truncated = false;
	int n = decode(rp, &w, raw, max, truncated);
	int valid = confirm(rp, pt, &w, raw, n);
	if (valid < 0)
		return valid;
	if (valid < n) {
		n = valid;
		*truncated = true;
	}
	return n;
}
