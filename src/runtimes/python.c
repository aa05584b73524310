/* The CPython runtime reader (see runtime.h): reads the Python stack of a sampled thread
 * out of the process with process_vm_readv, at the moment of the sample, without
 * stopping it. python_attach.c finds the interpreter, python_thread.c the thread state;
 * this file walks the frames and keeps the code objects it has seen, to name them.
 *
 * python_walk.c reads the frames, newest first, at most PY_MAX_FRAMES. A read that
 * fails (the process exits, execs or moves on while we read) cuts the stack there: the
 * frames read so far are kept, the outermost of them marked RT_FRAME_TRUNCATED; a stack
 * that changed while it was read is read again, at most MAX_ATTEMPTS times. */
#include "runtimes/runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtimes/python_code.h"
#include "runtimes/python_proc.h"
#include "util/strbuf.h"

#define MAX_CODES 200000	/* code objects remembered per process */
#define MAX_TABLE (256 * 1024)	/* longest line table read */
#define STR_READ 640		/* bytes read of a string object */
#define PENDING_TRIES 40	/* looks for a starting interpreter, ... */
#define PENDING_NS 50000000ull	/* ... every 50 ms */
#define MAX_ATTEMPTS 3		/* walks of a stack that changed while read */

/* Is the process's executable named python* (python3.11, python2.7, ...)? */
static bool exe_is_python(pid_t pid)
{
	char link[64], target[512];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	const char *base = strrchr(target, '/');
	return strncmp(base ? base + 1 : target, "python", 6) == 0;
}

/* Looks again for the interpreter of a process attached while it started. Returns
 * true once found. */
static bool resolve_pending(struct runtime_proc *rp)
{
	uint64_t now = py_now_ns();
	if (now - rp->last_try_ns < PENDING_NS)
		return false;
	rp->last_try_ns = now;
	char reason[128] = "";
	struct proc_ref p = { rp->pid, rp->nspid };
	int err = py_attach__find(rp, &p, reason);
	if (err == 0)
		rp->pending = 0;
	else if (err != -ENOENT || --rp->pending == 0)
		rp->pending = -1;	/* none after all, or a CPython this reader cannot read */
	return err == 0;
}

static struct runtime_proc *python_attach(const struct proc_ref *p, char *skip_reason)
{
	struct runtime_proc *rp = xcalloc(1, sizeof(*rp));
	rp->pid = p->pid;
	rp->nspid = p->nspid ? p->nspid : p->pid;
	rp->pthread_tid_off = -1;
	int err = py_attach__find(rp, p, skip_reason);
	if (err == -ENOENT && exe_is_python(p->pid)) {
		/* sampled before the loader mapped libpython: look again at sample time */
		rp->pending = PENDING_TRIES;
		rp->last_try_ns = py_now_ns();
	} else if (err < 0) {
		free(rp);
		return NULL;
	}
	rp->threads = hashmap__new();
	rp->code_by_addr = hashmap__new();
	return rp;
}

static void code_free(struct py_code *c)
{
	if (!c)
		return;
	free(c->func);
	free(c->path);
	free(c->tab);
	free(c);
}

static void python_detach(struct runtime_proc *rp)
{
	if (!rp)
		return;
	py_thread__clear(rp);
	hashmap__free(rp->threads);
	hashmap__free(rp->code_by_addr);
	for (size_t i = 0; i < rp->nr_codes; i++)
		code_free(rp->codes[i]);
	free(rp->codes);
	free(rp);
}

/* Reads the string object at addr into a new C string, or NULL. */
static char *read_string(struct runtime_proc *rp, uint64_t addr)
{
	uint8_t buf[STR_READ];
	ssize_t n = py_read(rp->pid, addr, buf, sizeof(buf));
	if (n <= 0)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	if (py_code__string(&rp->l, buf, (size_t)n, rp->str_type, &sb) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* Reads the line table (a bytes object) at addr. */
static int read_table(struct runtime_proc *rp, uint64_t addr, struct py_code *c)
{
	uint8_t head[64];
	uint64_t size;
	size_t off;
	int err = py_read_all(rp->pid, addr, head, rp->l.str_data);
	if (err == 0)
		err = py_code__bytes(&rp->l, head, rp->l.str_data, rp->bytes_type, &size, &off);
	if (err < 0 || size > MAX_TABLE)
		return err < 0 ? err : -E2BIG;
	c->tab = xmalloc(size ? size : 1);
	c->tab_len = (uint32_t)size;
	return size ? py_read_all(rp->pid, addr + off, c->tab, size) : 0;
}

/* Builds a cache entry from the first co_read bytes of the code object at addr. */
static struct py_code *code_load(struct runtime_proc *rp, uint64_t addr, const uint8_t *co)
{
	const struct py_layout *l = &rp->l;
	struct py_code *c = xcalloc(1, sizeof(*c));
	c->addr = addr;
	c->type = py_rd64(co, 8);
	c->name = py_rd64(co, l->co_name);
	c->qualname = l->co_qualname != PY_NO_FIELD ? py_rd64(co, l->co_qualname) : 0;
	c->file = py_rd64(co, l->co_filename);
	c->lines = py_rd64(co, l->co_lines);
	memcpy(&c->firstlineno, co + l->co_firstlineno, 4);
	if (rp->code_type && c->type != rp->code_type)
		goto fail;
	c->func = read_string(rp, c->qualname ? c->qualname : c->name);
	c->path = read_string(rp, c->file);
	if (!c->func || !c->path || read_table(rp, c->lines, c) < 0)
		goto fail;
	return c;
fail:
	code_free(c);
	return NULL;
}

/* Does the cached entry still describe the code object whose bytes are co? */
static bool code_same(const struct runtime_proc *rp, const struct py_code *c, const uint8_t *co)
{
	const struct py_layout *l = &rp->l;
	int32_t first;
	memcpy(&first, co + l->co_firstlineno, 4);
	return c->type == py_rd64(co, 8) && c->name == py_rd64(co, l->co_name) &&
	       c->file == py_rd64(co, l->co_filename) && c->lines == py_rd64(co, l->co_lines) &&
	       (l->co_qualname == PY_NO_FIELD || c->qualname == py_rd64(co, l->co_qualname)) &&
	       c->firstlineno == first;
}

int64_t py_code_index(struct runtime_proc *rp, uint64_t addr, const uint8_t *co)
{
	void **slot = hashmap__find(rp->code_by_addr, &addr, sizeof(addr));
	if (slot) {
		size_t i = (size_t)(uintptr_t)*slot - 1;
		if (code_same(rp, rp->codes[i], co))
			return (int64_t)i;
	}
	if (rp->nr_codes >= MAX_CODES)
		return -1;
	struct py_code *c = code_load(rp, addr, co);
	if (!c)
		return -1;
	if (rp->nr_codes == rp->alloc_codes) {
		rp->alloc_codes = rp->alloc_codes ? rp->alloc_codes * 2 : 256;
		rp->codes = xrealloc(rp->codes, rp->alloc_codes * sizeof(*rp->codes));
	}
	rp->codes[rp->nr_codes++] = c;
	bool created;
	slot = hashmap__insert(rp->code_by_addr, &addr, sizeof(addr), &created);
	*slot = (void *)(uintptr_t)rp->nr_codes;
	return (int64_t)rp->nr_codes - 1;
}

/* The byte offset of the frame's instruction in its code object, -1 before the first. */
static int64_t instr_offset(const struct runtime_proc *rp, const struct py_raw_frame *r)
{
	const struct py_layout *l = &rp->l;
	if (l->lasti_units)
		return (int64_t)r->instr < 0 ? -1 : (int64_t)r->instr * l->lasti_units;
	uint64_t start = r->code + l->co_code;
	if (r->instr < start)
		return -1;
	return r->instr - start > (1u << 28) ? -2 : (int64_t)(r->instr - start);
}

static int python_sample(struct runtime_proc *rp, pid_t tid, struct rt_frame *frames, int max)
{
	uint8_t ts[512];
	struct py_raw_frame raw[PY_MAX_FRAMES];
	struct py_thread *pt;
	bool truncated = false;
	int n = -EAGAIN;
	if (!rp || max <= 0)
		return 0;
	if (rp->pending && (rp->pending < 0 || !resolve_pending(rp)))
		return 0;
	pt = py_thread__find(rp, tid);
	if (pt)
		n = py_walk__fast(rp, pt, raw, max, &truncated);
	for (int attempt = 0; attempt < MAX_ATTEMPTS && n == -EAGAIN; attempt++) {
		int err = py_thread__state(rp, tid, ts, &pt);
		if (err < 0)
			return err == -ESRCH ? 0 : err;
		n = py_walk__stack(rp, pt, ts, raw, max, &truncated);
	}
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct py_raw_frame *r = &raw[n - 1 - i];
		const struct py_code *c = rp->codes[r->index];
		int64_t off = instr_offset(rp, r);
		int line = off < -1 ? -1 : py_code__line(rp->l.line_kind, c->tab, c->tab_len, c->firstlineno, off);
		frames[i].id = r->index;
		frames[i].aux = line > 0 ? (uint32_t)line : 0;
		frames[i].flags = r->flags;
	}
	if (truncated && n > 0)
		frames[0].flags |= RT_FRAME_TRUNCATED;
	return n;
}

static void python_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	if (!rp || f->id >= rp->nr_codes) {
		strbuf_addstr(out, "(unknown)_[p]");
		return;
	}
	const struct py_code *c = rp->codes[f->id];
	if (f->aux)
		strbuf_addf(out, "%s (%s:%u)_[p]", c->func, c->path, f->aux);
	else
		strbuf_addf(out, "%s (%s)_[p]", c->func, c->path);
}

static const char *const python_interp_symbols[] = {
	"_PyEval_EvalFrameDefault", "PyEval_EvalFrameEx", NULL,
};

static bool python_likely(const char *path)
{
	const char *base = strrchr(path, '/');

	return strstr(base ? base + 1 : path, "python") != NULL;
}

const struct runtime_ops python_runtime = {
	.name = "python",
	.merge = RUNTIME_INTERLEAVE,
	.interp_symbols = python_interp_symbols,
	.attach = python_attach,
	.likely = python_likely,
	.sample = python_sample,
	.frame_name = python_name,
	.detach = python_detach,
};
