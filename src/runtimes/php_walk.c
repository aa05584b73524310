/* Reading the PHP stack of a process (see php_walk__stack in php_proc.h): the chain of
 * zend_execute_data from executor_globals.current_execute_data, then every frame's
 * function and current opline in one batch, checked against a second read of
 * current_execute_data and the newest frame. */
#include "runtimes/php_proc.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

struct ed {
	uint64_t addr;
	uint8_t buf[PHP_ED_READ];
};

struct walk {
	struct ed ed[PHP_MAX_STEPS];	/* newest first */
	int steps;
	bool truncated;
};

/* The chain of the previous sample, read again in one call with current_execute_data.
 * Returns true when it is still the whole stack. */
static bool read_remembered(struct runtime_proc *rp, struct walk *w)
{
	const struct php_layout *l = &rp->l;
	struct iovec local[PHP_CHAIN + 1], remote[PHP_CHAIN + 1];
	uint64_t cur = 0;
	uint32_t n = rp->nr_chain;
	size_t want = sizeof(cur) + (size_t)n * PHP_ED_READ;

	if (!n)
		return false;
	local[0] = (struct iovec){ &cur, sizeof(cur) };
	remote[0] = (struct iovec){ (void *)(uintptr_t)rp->eg_cur, sizeof(cur) };
	for (uint32_t j = 0; j < n; j++) {
		local[j + 1] = (struct iovec){ w->ed[j].buf, PHP_ED_READ };
		remote[j + 1] = (struct iovec){ (void *)(uintptr_t)rp->chain[j], PHP_ED_READ };
	}
	if (process_vm_readv(rp->pid, local, n + 1, remote, n + 1, 0) != (ssize_t)want ||
	    cur != rp->chain[0])
		return false;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t prev = php_rd64(w->ed[j].buf, l->ed_prev);
		if (prev != (j + 1 < n ? rp->chain[j + 1] : 0))
			return false;	/* moved, or deeper than the chain remembered */
		w->ed[j].addr = rp->chain[j];
	}
	w->steps = (int)n;
	return true;
}

/* Reads the chain frame by frame. Returns 0 or a negative errno (current_execute_data
 * unreadable: the process is gone or has exec'd). */
static int read_chain(struct runtime_proc *rp, struct walk *w)
{
	const struct php_layout *l = &rp->l;
	uint64_t ed;
	ssize_t n = php_read(rp->pid, rp->eg_cur, &ed, sizeof(ed));

	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof(ed))
		return -EFAULT;
	while (ed && w->steps < PHP_MAX_STEPS) {
		struct ed *e = &w->ed[w->steps];
		if (php_read(rp->pid, ed, e->buf, PHP_ED_READ) != PHP_ED_READ) {
			w->truncated = true;
			return 0;
		}
		e->addr = ed;
		w->steps++;
		ed = php_rd64(e->buf, l->ed_prev);
		for (int j = 0; ed && j < w->steps; j++)
			if (w->ed[j].addr == ed)
				ed = 0, w->truncated = true;	/* a cycle: torn reads */
	}
	if (ed)
		w->truncated = true;
	return 0;
}

static void remember(struct runtime_proc *rp, const struct walk *w)
{
	rp->nr_chain = 0;
	if (w->truncated || w->steps > PHP_CHAIN)
		return;
	for (int j = 0; j < w->steps; j++)
		rp->chain[j] = w->ed[j].addr;
	rp->nr_chain = (uint32_t)w->steps;
}

struct frame_read {
	uint64_t func, opline;
	uint32_t type_info;
	uint8_t fn[PHP_FN_READ];
	size_t fn_len;
	uint32_t lineno;
	bool have_lineno;
};

/* Reads each kept frame's function and opline lineno, with current_execute_data and the
 * newest frame again, in one call. Returns 0, or -EAGAIN when the newest frame is no
 * longer the one walked. */
static int read_functions(struct runtime_proc *rp, const struct walk *w, struct frame_read *fr,
			  int n)
{
	const struct php_layout *l = &rp->l;
	struct iovec local[2 + 2 * PHP_MAX_FRAMES], remote[2 + 2 * PHP_MAX_FRAMES];
	int which[2 + 2 * PHP_MAX_FRAMES];	/* frame i: i for its function, -1 - i for its opline */
	uint64_t cur = 0;
	uint8_t leaf[PHP_ED_READ];
	unsigned long k = 0;
	ssize_t got;
	size_t at = 0;

#define IOV(buf, addr, len, w) do { local[k] = (struct iovec){ (buf), (len) }; which[k] = (w); \
	remote[k++] = (struct iovec){ (void *)(uintptr_t)(addr), (len) }; } while (0)
	IOV(&cur, rp->eg_cur, sizeof(cur), 0);
	IOV(leaf, w->ed[0].addr, PHP_ED_READ, 0);
	for (int i = 0; i < n; i++)
		IOV(fr[i].fn, fr[i].func, PHP_FN_READ, i);
	/* after the functions, the oldest first: an internal function's frame (most often the
	 * newest) has no opline of its own, and a stale one that fails to read ends the batch */
	for (int i = n - 1; i >= 0; i--)
		if (fr[i].opline)
			IOV(&fr[i].lineno, fr[i].opline + l->op_lineno, sizeof(fr[i].lineno), -1 - i);
#undef IOV
	got = process_vm_readv(rp->pid, local, k, remote, k, 0);
	if (got < (ssize_t)(sizeof(cur) + PHP_ED_READ) || cur != w->ed[0].addr ||
	    php_rd64(leaf, l->ed_func) != php_rd64(w->ed[0].buf, l->ed_func) ||
	    php_rd64(leaf, l->ed_prev) != php_rd64(w->ed[0].buf, l->ed_prev))
		return -EAGAIN;
	/* which iovecs were filled: a failed one ends the batch (read the rest alone) */
	for (unsigned long j = 0; j < k; j++) {
		bool full = (size_t)got >= at + local[j].iov_len;
		int i = which[j] >= 0 ? which[j] : -1 - which[j];
		at += local[j].iov_len;
		if (j < 2)
			continue;
		if (which[j] >= 0) {
			ssize_t r = full ? (ssize_t)PHP_FN_READ
					 : php_read(rp->pid, fr[i].func, fr[i].fn, PHP_FN_READ);
			fr[i].fn_len = r > 0 ? (size_t)r : 0;
		} else if (fr[i].fn_len && fr[i].fn[l->fn_type] != PHP_INTERNAL_FUNCTION) {
			fr[i].have_lineno = full || php_read(rp->pid, fr[i].opline + l->op_lineno,
							     &fr[i].lineno, 4) == 4;
		}
	}
	return 0;
}

int php_walk__stack(struct runtime_proc *rp, struct rt_frame *frames, int max)
{
	static __thread struct walk w;		/* 15 KiB: per thread, never shared */
	static __thread struct frame_read fr[PHP_MAX_FRAMES];
	const struct php_layout *l = &rp->l;
	int n = 0, err;

	if (max > PHP_MAX_FRAMES)
		max = PHP_MAX_FRAMES;
	w.steps = 0;
	w.truncated = false;
	if (!read_remembered(rp, &w)) {
		w.steps = 0;
		err = read_chain(rp, &w);
		if (err < 0)
			return err;
	}
	remember(rp, &w);
	if (!w.steps)
		return 0;
	/* the frames that run a function, newest first, at most max */
	for (int i = 0; i < w.steps; i++) {
		const uint8_t *b = w.ed[i].buf;
		uint64_t func = php_rd64(b, l->ed_func);
		if (!func)
			continue;
		if (n == max) {
			w.truncated = true;
			break;
		}
		memset(&fr[n], 0, sizeof(fr[n]));
		fr[n].func = func;
		fr[n].opline = php_rd64(b, l->ed_opline);
		fr[n].type_info = php_rd32(b, l->ed_this_type_info);
		n++;
	}
	if (!n)
		return 0;
	err = read_functions(rp, &w, fr, n);
	if (err < 0)
		return err;
	for (int i = 0; i < n; i++) {
		struct rt_frame *f = &frames[n - 1 - i];
		struct php_fn_print p;
		f->id = PHP_UNKNOWN_FN;
		f->aux = 0;
		f->flags = 0;
		if (php_layout__fn_print(l, fr[i].fn, fr[i].fn_len, &p) < 0)
			continue;
		f->id = php_fn_index(rp, fr[i].func, &p);
		f->aux = php_layout__line(&p, fr[i].have_lineno, fr[i].lineno);
		if (p.type != PHP_INTERNAL_FUNCTION && (fr[i].type_info & PHP_CALL_TOP))
			f->flags |= RT_FRAME_ENTRY;
	}
	frames[0].flags |= RT_FRAME_ENTRY;	/* the outermost frame of the thread */
	if (w.truncated)
		frames[0].flags |= RT_FRAME_TRUNCATED;
	return n;
}
