/* The CRuby runtime reader (see runtime.h): reads the Ruby stack of a sampled thread out
 * of the process with process_vm_readv, at the moment of the sample, without stopping
 * it. ruby_attach.c finds the interpreter, ruby_thread.c the thread's execution context,
 * ruby_walk.c its control frames; this file keeps the instruction sequences and C
 * functions seen, to name them after the process is gone:
 * `method (file.rb:12)_[rb]` for Ruby code, `name (cfunc)_[rb]` for a C function called
 * from Ruby (named through the interpreter's global symbol table, `(unknown cfunc)` when
 * it cannot be found). The frames are interleaved after the native rb_vm_exec frames. */
#include "runtimes/runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/ruby_proc.h"
#include "util/strbuf.h"

#define MAX_ISEQS 200000	/* instruction sequences remembered per process */
#define MAX_LINES 400000	/* (iseq, position) -> line entries remembered */
#define MAX_CFUNCS 50000	/* C function names remembered */
#define MAX_UNNAMED 1000	/* C functions whose name could not be read, tried again */

static struct runtime_proc *ruby_attach(const struct proc_ref *p, char *skip_reason)
{
	struct runtime_proc *rp = xcalloc(1, sizeof(*rp));

	rp->pid = p->pid;
	rp->nspid = p->nspid ? p->nspid : p->pid;
	if (rb_attach__find(rp, p, skip_reason) < 0) {
		free(rp);
		return NULL;
	}
	rp->threads = hashmap__new();
	rp->iseq_by_addr = hashmap__new();
	rp->line_cache = hashmap__new();
	rp->cfunc_by_id = hashmap__new();
	return rp;
}

static void ruby_detach(struct runtime_proc *rp)
{
	if (!rp)
		return;
	rb_thread__clear(rp);
	hashmap__free(rp->threads);
	hashmap__free(rp->iseq_by_addr);
	hashmap__free(rp->line_cache);
	hashmap__free(rp->cfunc_by_id);
	for (size_t i = 0; i < rp->nr_iseqs; i++) {
		free(rp->iseqs[i]->name);
		free(rp->iseqs[i]->path);
		free(rp->iseqs[i]);
	}
	free(rp->iseqs);
	for (size_t i = 0; i < rp->nr_cfuncs; i++)
		free(rp->cfuncs[i]);
	free(rp->cfuncs);
	free(rp);
}

/* The file of an iseq: pathobj is a String, or an Array [path, realpath]. */
static char *read_path(struct runtime_proc *rp, uint64_t pathobj)
{
	char *s = rb_read_string(rp, pathobj);
	uint64_t first;

	if (!s && rb_read_array_entry(rp, pathobj, 0, &first) == 0)
		s = rb_read_string(rp, first);
	return s;
}

static void fingerprint(const struct rb_layout *l, const uint8_t *b, struct rb_iseq_info *f)
{
	f->pathobj = rb_rd64(b, l->body_pathobj);
	f->label = rb_rd64(b, l->body_label);
	f->encoded = rb_rd64(b, l->body_encoded);
	f->ii_body = rb_rd64(b, l->body_ii_body);
	f->succ = rb_rd64(b, l->body_succ);
	memcpy(&f->ii_size, b + l->body_ii_size, 4);
}

static bool same(const struct rb_iseq_info *a, const struct rb_iseq_info *b)
{
	return a->pathobj == b->pathobj && a->label == b->label && a->encoded == b->encoded &&
	       a->ii_body == b->ii_body && a->succ == b->succ && a->ii_size == b->ii_size;
}

int64_t rb_iseq_index(struct runtime_proc *rp, uint64_t iseq, uint64_t body, const uint8_t *b)
{
	struct rb_iseq_info f = { .iseq = iseq, .body = body };
	void **slot = hashmap__find(rp->iseq_by_addr, &iseq, sizeof(iseq));

	fingerprint(&rp->l, b, &f);
	if (slot) {
		size_t i = (size_t)(uintptr_t)*slot - 1;
		if (rp->iseqs[i]->body == body && same(rp->iseqs[i], &f))
			return (int64_t)i;
	}
	if (rp->nr_iseqs >= MAX_ISEQS || f.ii_size == 0 || f.ii_size > (1u << 24))
		return -1;
	f.name = rb_read_string(rp, f.label);
	f.path = f.name ? read_path(rp, f.pathobj) : NULL;
	if (!f.path) {
		free(f.name);
		return -1;
	}
	if (rp->nr_iseqs == rp->alloc_iseqs) {
		rp->alloc_iseqs = rp->alloc_iseqs ? rp->alloc_iseqs * 2 : 256;
		rp->iseqs = xrealloc(rp->iseqs, rp->alloc_iseqs * sizeof(*rp->iseqs));
	}
	struct rb_iseq_info *c = xmalloc(sizeof(*c));
	*c = f;
	rp->iseqs[rp->nr_iseqs++] = c;
	bool created;
	slot = hashmap__insert(rp->iseq_by_addr, &iseq, sizeof(iseq), &created);
	*slot = (void *)(uintptr_t)rp->nr_iseqs;
	return (int64_t)rp->nr_iseqs - 1;
}

/* Reads the line of position pos of iseq c: 0 when unknown. */
static uint32_t read_line(struct runtime_proc *rp, const struct rb_iseq_info *c, uint32_t pos)
{
	const struct rb_layout *l = &rp->l;
	uint8_t tab[80];
	int32_t line = 0;
	int idx = 0;

	if (c->ii_size > 1) {
		size_t off, len;
		rb_layout__succ_span(pos, &off, &len);
		if (!c->succ || rb_read_all(rp->pid, c->succ + off, tab, len) < 0)
			return 0;
		idx = rb_layout__succ_index(tab, len, pos, c->ii_size);
		if (idx < 0)
			return 0;
	}
	if (rb_read_all(rp->pid, c->ii_body + (uint64_t)idx * l->insn_entry_size, &line, 4) < 0 ||
	    line <= 0)
		return 0;
	return (uint32_t)line;
}

uint32_t rb_iseq_line(struct runtime_proc *rp, size_t i, uint32_t pos)
{
	uint64_t key = (uint64_t)i << 32 | pos;
	void **slot = hashmap__find(rp->line_cache, &key, sizeof(key));
	bool created;

	if (slot)
		return (uint32_t)(uintptr_t)*slot - 1;
	uint32_t line = read_line(rp, rp->iseqs[i], pos);
	if (line && hashmap__count(rp->line_cache) < MAX_LINES) {
		slot = hashmap__insert(rp->line_cache, &key, sizeof(key), &created);
		*slot = (void *)(uintptr_t)(line + 1);
	}
	return line;
}

/* The name of method ID id from the global symbol table, or NULL. */
static char *id_name(struct runtime_proc *rp, uint64_t id)
{
	uint8_t syms[24];
	uint64_t serial = id > rp->last_op_id ? id >> 4 : id, page, str;
	uint32_t last_id;

	if (!rp->symbols || !serial || rb_read_all(rp->pid, rp->symbols, syms, sizeof(syms)) < 0)
		return NULL;
	memcpy(&last_id, syms, 4);
	if (serial > last_id)
		return NULL;
	if (rb_read_array_entry(rp, rb_rd64(syms, 16), serial / RB_ID_ENTRY_UNIT, &page) < 0 ||
	    rb_read_array_entry(rp, page, (serial % RB_ID_ENTRY_UNIT) * 2, &str) < 0)
		return NULL;
	return rb_read_string(rp, str);
}

uint64_t rb_cfunc_index(struct runtime_proc *rp, uint64_t id)
{
	char *name = NULL;

	if (rp->nr_cfuncs >= MAX_CFUNCS || !rp->symbols)
		id = 0;		/* full, or no symbol table: every one is the unknown one */
	void **slot = hashmap__find(rp->cfunc_by_id, &id, sizeof(id));
	if (slot)
		return (uint64_t)(uintptr_t)*slot - 1;
	if (id)
		name = id_name(rp, id);
	if (rp->nr_cfuncs == rp->alloc_cfuncs) {
		rp->alloc_cfuncs = rp->alloc_cfuncs ? rp->alloc_cfuncs * 2 : 64;
		rp->cfuncs = xrealloc(rp->cfuncs, rp->alloc_cfuncs * sizeof(*rp->cfuncs));
	}
	rp->cfuncs[rp->nr_cfuncs++] = name;
	/* a name that could not be read (the table was being changed) is tried again at
	 * the next sample, a bounded number of times */
	if (name || !id || ++rp->unnamed > MAX_UNNAMED) {
		bool created;
		slot = hashmap__insert(rp->cfunc_by_id, &id, sizeof(id), &created);
		*slot = (void *)(uintptr_t)rp->nr_cfuncs;
	}
	return rp->nr_cfuncs - 1;
}

static int ruby_sample(struct runtime_proc *rp, pid_t tid, struct rt_frame *frames, int max)
{
	uint8_t head[RB_EC_READ];
	uint64_t ec;
	bool have;

	if (!rp || max <= 0)
		return 0;
	int err = rb_thread__ec(rp, tid, &ec, head, &have);
	if (err < 0)
		return err == -ESRCH ? 0 : err;
	return rb_walk__stack(rp, ec, have ? head : NULL, frames, max);
}

static void ruby_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	if (rp && (f->id & RB_CFUNC_ID)) {
		uint64_t i = f->id & ~RB_CFUNC_ID;
		const char *name = i < rp->nr_cfuncs ? rp->cfuncs[i] : NULL;
		if (name)
			strbuf_addf(out, "%s (cfunc)_[rb]", name);
		else
			strbuf_addstr(out, "(unknown cfunc)_[rb]");
		return;
	}
	if (!rp || f->id >= rp->nr_iseqs) {
		strbuf_addstr(out, "(unknown)_[rb]");
		return;
	}
	const struct rb_iseq_info *c = rp->iseqs[f->id];
	if (f->aux)
		strbuf_addf(out, "%s (%s:%u)_[rb]", c->name, c->path, f->aux);
	else
		strbuf_addf(out, "%s (%s)_[rb]", c->name, c->path);
}

static const char *const ruby_interp_symbols[] = { "rb_vm_exec", NULL };

static bool ruby_likely(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "ruby", 4) == 0 || strncmp(base, "libruby", 7) == 0;
}

const struct runtime_ops ruby_runtime = {
	.name = "ruby",
	.merge = RUNTIME_INTERLEAVE,
	.interp_symbols = ruby_interp_symbols,
	.attach = ruby_attach,
	.likely = ruby_likely,
	.sample = ruby_sample,
	.frame_name = ruby_name,
	.detach = ruby_detach,
};
