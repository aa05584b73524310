/* The Node.js runtime reader (see runtime.h, node_proc.h): the JavaScript frames of a
 * sampled node thread, read out of the process with process_vm_readv from V8's own
 * objects, laid out as the binary's v8dbg_* postmortem symbols say; nothing is injected,
 * no port is opened. node_walk.c finds the frames, this file keeps the functions,
 * scripts and optimized code objects seen, to name them after the process is gone:
 * `alpha (/srv/app.js:12)_[js]`, the functions TurboFan inlined included, with the line
 * an optimized frame is at; an interpreted frame has no line yet (`name (file)_[js]`).
 * The frames are interleaved after the native entry frames (Builtins_JSEntry). */
#include "runtimes/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/node_maps.h"
#include "runtimes/node_proc.h"
#include "util/strbuf.h"

#define MAX_FNS 200000		/* functions remembered per process */
#define MAX_CODES 20000		/* optimized code objects remembered */
#define MAX_POSITIONS 65536	/* source positions read per code object */
#define MAX_INLINED 4096	/* inlined functions read per code object */
#define MAX_REREADS 3		/* of a code object whose inlining table was unread */
#define MAX_NAME 256
#define MAX_SOURCE (8u << 20)	/* bytes of a script's source scanned for line ends */
#define MAX_LINE_ENDS (1u << 20)
#define SCOPE_READ 2048		/* bytes of a ScopeInfo read for the name */
#define PATH_MAX_JS 1024	/* bytes of a script name kept */

/* Whether the reader reads frames: --nodejs-mode auto (or enabled). In perf mode the JIT
 * frames are named from the perf map node writes (the symbolizer reads it), as gProfiler
 * does; in attach-maps mode from the perf map kiln has node write (node_maps.h); the
 * reader stays off. Set once by start(), before any attach. */
static bool reader_on = true;

struct runtime_collector {
	struct node_maps *maps;		/* attach-maps mode */
};

static struct runtime_collector *node_start(const struct runtime_env *env)
{
	struct runtime_collector *c = xcalloc(1, sizeof(*c));
	bool maps = env->mode && !strcmp(env->mode, "attach-maps");

	reader_on = !env->mode || (strcmp(env->mode, "perf") && !maps);
	if (maps)
		c->maps = node_maps__start(NULL);	/* NULL: logged */
	return c;
}

static void node_seen(struct runtime_collector *c, pid_t pid)
{
	node_maps__note(c->maps, pid);
}

static void node_stop(struct runtime_collector *c)
{
	if (c)
		node_maps__stop(c->maps);
	free(c);
}

static struct runtime_proc *node_attach(const struct proc_ref *p, char *skip_reason)
{
	if (!reader_on)
		return NULL;
	struct runtime_proc *rp = xcalloc(1, sizeof(*rp));

	rp->pid = p->pid;
	if (nd_attach__find(rp, p, skip_reason) < 0) {
		free(rp);
		return NULL;
	}
	rp->fn_by_sfi = hashmap__new();
	rp->script_by_addr = hashmap__new();
	rp->code_by_addr = hashmap__new();
	rp->code_by_pc = hashmap__new();
	rp->bc_by_addr = hashmap__new();
	return rp;
}

void nd_code_free(struct nd_code *c)
{
	if (!c)
		return;
	free(c->pc_off);
	free(c->pos);
	free(c->inl_fn);
	free(c->inl_pos);
	free(c->lit_fn);
	free(c);
}

static void node_detach(struct runtime_proc *rp)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	if (!rp)
		return;
	while (hashmap__next(rp->code_by_addr, &it, &key, &len, &v))
		nd_code_free(v);
	hashmap__free(rp->code_by_addr);
	hashmap__free(rp->code_by_pc);
	for (struct hashmap_iter i = HASHMAP_ITER_INIT; hashmap__next(rp->bc_by_addr, &i, &key, &len,
								      &v);)
		nd_code_free(v);
	hashmap__free(rp->bc_by_addr);
	hashmap__free(rp->fn_by_sfi);
	hashmap__free(rp->script_by_addr);
	for (size_t i = 0; i < rp->nr_fns; i++) {
		free(rp->fns[i]->name);
		free(rp->fns[i]->file);
		free(rp->fns[i]);
	}
	free(rp->fns);
	for (size_t i = 0; i < rp->nr_scripts; i++)
		free(rp->scripts[i].ends);
	free(rp->scripts);
	free(rp);
}

/* The name a ScopeInfo holds for its function, or NULL. */
static char *scope_name(struct runtime_proc *rp, uint64_t si)
{
	uint8_t b[SCOPE_READ];
	size_t got = 0;

	/* as much as can be read of it, up to SCOPE_READ */
	for (size_t len = SCOPE_READ; len >= 64 && !got; len /= 2)
		if (nd_read(rp->pid, nd_untag(si), b, len) == 0)
			got = len;
	int off = got ? nd_scope_name_slot(&rp->l, b, got) : -1;
	/* the locals are followed by a class's variable (if any), the function variable
	 * (name, slot; an anonymous function's name is empty) and the name V8 inferred
	 * for an anonymous function ("Module._load"): the first name that is not empty */
	for (int k = 0; off >= 0 && k < 4 && (size_t)off + 8 * (size_t)k + 8 <= got; k++) {
		uint64_t v = nd_rd64(b, (size_t)off + 8 * (size_t)k);
		int t = nd_instance_type(rp, v);
		if (t < 0 || t >= rp->l.t_first_nonstring)
			continue;
		char *s = nd_read_string(rp, v, MAX_NAME);
		if (s && s[0])
			return s;
		free(s);
	}
	return NULL;
}

static char *fn_name(struct runtime_proc *rp, uint64_t v)
{
	int t = nd_instance_type(rp, v);
	char *s = NULL;

	if (t >= 0 && t < rp->l.t_first_nonstring)
		s = nd_read_string(rp, v, MAX_NAME);
	else if (t == rp->l.t_scope_info)
		s = scope_name(rp, v);
	if (s && s[0])
		return s;
	free(s);
	return xstrdup("(anonymous)");
}

/* The index of the script at address script whose source is source. One that a GC moved
 * there in place of another is read anew: its lines are not the other's. */
static int64_t script_index(struct runtime_proc *rp, uint64_t script, uint64_t source)
{
	void **slot = hashmap__find(rp->script_by_addr, &script, sizeof(script));
	bool created;

	if (slot) {
		struct nd_script *s = &rp->scripts[(uintptr_t)*slot - 1];
		if (s->source != source) {
			free(s->ends);
			*s = (struct nd_script){ .addr = script, .source = source };
		}
		return (int64_t)(uintptr_t)*slot - 1;
	}
	if (rp->nr_scripts == rp->alloc_scripts) {
		rp->alloc_scripts = rp->alloc_scripts ? rp->alloc_scripts * 2 : 32;
		rp->scripts = xrealloc(rp->scripts, rp->alloc_scripts * sizeof(*rp->scripts));
	}
	rp->scripts[rp->nr_scripts++] = (struct nd_script){ .addr = script, .source = source };
	slot = hashmap__insert(rp->script_by_addr, &script, sizeof(script), &created);
	*slot = (void *)(uintptr_t)rp->nr_scripts;
	return (int64_t)rp->nr_scripts - 1;
}

int32_t nd_fn_index(struct runtime_proc *rp, uint64_t sfi, const uint8_t *hdr)
{
	const struct nd_layout *l = &rp->l;
	uint8_t own[ND_SFI_READ];
	const uint8_t *b = hdr ? hdr : own;
	void **slot = hashmap__find(rp->fn_by_sfi, &sfi, sizeof(sfi));

	if (!nd_is_heap(sfi) || (!hdr && nd_read(rp->pid, nd_untag(sfi), own, sizeof(own)) < 0))
		return -1;
	uint64_t nos = nd_rd64(b, (size_t)l->sfi_name_or_scope_info);
	uint64_t script = nd_rd64(b, (size_t)l->sfi_script_or_debug_info);
	if (slot) {
		struct nd_fn *f = rp->fns[(uintptr_t)*slot - 1];
		if (f->name_or_scope == nos && f->script == script)
			return (int32_t)((uintptr_t)*slot - 1);
	}
	if (rp->nr_fns >= MAX_FNS || nd_instance_type(rp, sfi) != l->t_sfi)
		return -1;
	/* A name that is neither a string nor a ScopeInfo was read mid-move (a compacting
	 * GC): no frame rather than a wrong one, and nothing cached, so it is read again. */
	int nt = nd_instance_type(rp, nos);
	if (nd_is_heap(nos) && !(nt >= 0 && nt < l->t_first_nonstring) && nt != l->t_scope_info)
		return -1;
	struct nd_fn *f = xcalloc(1, sizeof(*f));
	f->sfi = sfi;
	f->name_or_scope = nos;
	f->script = script;
	f->name = fn_name(rp, nos);
	f->script_index = -1;
	uint8_t sh[64];		/* the layout's Script fields are in its first 64 bytes */
	if (nd_instance_type(rp, script) == l->t_script &&
	    nd_read(rp->pid, nd_untag(script), sh, sizeof(sh)) == 0) {
		f->file = nd_read_string(rp, nd_rd64(sh, (size_t)l->script_name), PATH_MAX_JS);
		f->script_index = script_index(rp, script, nd_rd64(sh, (size_t)l->script_source));
	}
	if (!f->file && (f->script_index >= 0 || !strcmp(f->name, "(anonymous)"))) {
		/* a script without a readable name (moved under the read; eval'd code too), or
		 * neither a name nor a script: no frame rather than a nameless one */
		free(f->name);
		free(f);
		return -1;
	}
	if (!f->file)
		f->file = xstrdup("");
	if (rp->nr_fns == rp->alloc_fns) {
		rp->alloc_fns = rp->alloc_fns ? rp->alloc_fns * 2 : 256;
		rp->fns = xrealloc(rp->fns, rp->alloc_fns * sizeof(*rp->fns));
	}
	rp->fns[rp->nr_fns++] = f;
	bool created;
	slot = hashmap__insert(rp->fn_by_sfi, &sfi, sizeof(sfi), &created);
	*slot = (void *)(uintptr_t)rp->nr_fns;
	return (int32_t)rp->nr_fns - 1;
}

/* Reads a script's line ends: its line_ends array when V8 has made it, else from its
 * source. */
static void load_lines(struct runtime_proc *rp, struct nd_script *s)
{
	const struct nd_layout *l = &rp->l;
	uint8_t hdr[64];
	uint64_t le, src;

	s->tried = true;
	if (nd_read(rp->pid, nd_untag(s->addr), hdr, sizeof(hdr)) < 0)
		return;
	le = nd_rd64(hdr, (size_t)l->script_line_ends);
	src = nd_rd64(hdr, (size_t)l->script_source);
	if (nd_instance_type(rp, le) == l->t_fixed_array) {
		uint64_t len;
		if (nd_read(rp->pid, nd_untag(le) + (uint64_t)l->fa_length, &len, 8) == 0 &&
		    nd_is_smi(len) && nd_smi(len) > 0 && (uint32_t)nd_smi(len) <= MAX_LINE_ENDS) {
			uint32_t n = (uint32_t)nd_smi(len);
			uint64_t *raw = xmalloc(n * sizeof(*raw));
			if (nd_read(rp->pid, nd_untag(le) + (uint64_t)l->fa_data, raw,
				    n * sizeof(*raw)) == 0) {
				s->ends = xmalloc(n * sizeof(*s->ends));
				for (uint32_t i = 0; i < n; i++)
					s->ends[i] = (uint32_t)nd_smi(raw[i]);
				s->nr_ends = n;
			}
			free(raw);
			if (s->ends)
				return;
		}
	}
	char *text = nd_read_string(rp, src, MAX_SOURCE);
	if (!text)
		return;
	size_t len = strlen(text), n = 0;
	s->ends = xmalloc((len + 1) * sizeof(*s->ends));
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			s->ends[n++] = (uint32_t)i;
	s->ends[n++] = (uint32_t)len;	/* V8's last line ends at the source's end */
	s->nr_ends = (uint32_t)n;
	free(text);
}

uint32_t nd_fn_line(struct runtime_proc *rp, int32_t i, int32_t off)
{
	if (i < 0 || (size_t)i >= rp->nr_fns || rp->fns[i]->script_index < 0 || off < 0)
		return 0;
	struct nd_script *s = &rp->scripts[rp->fns[i]->script_index];
	if (!s->tried)
		load_lines(rp, s);
	return nd_line_of(s->ends, s->nr_ends, off);
}

/* The data of ByteArray or FixedArray v: its length (smi) and the bytes read. */
static uint8_t *read_array(struct runtime_proc *rp, uint64_t v, size_t unit, size_t max,
			   uint32_t *nr)
{
	uint64_t len;

	*nr = 0;
	if (!nd_is_heap(v) || nd_read(rp->pid, nd_untag(v) + (uint64_t)rp->l.fa_length, &len, 8) < 0 ||
	    !nd_is_smi(len) || nd_smi(len) <= 0)
		return NULL;
	size_t n = (size_t)nd_smi(len);
	n = n < max ? n : max;
	uint8_t *b = xmalloc(n * unit);
	if (nd_read(rp->pid, nd_untag(v) + (uint64_t)rp->l.fa_data, b, n * unit) < 0) {
		free(b);
		return NULL;
	}
	*nr = (uint32_t)n;
	return b;
}

/* Sets what tells code c from other code a GC put at its address: hdr is its header. */
static void code_identity(const struct nd_layout *l, struct nd_code *c, uint64_t code,
			  const uint8_t *hdr)
{
	c->code = code;
	c->entry = nd_code_entry(l, code, hdr);
	memcpy(&c->size, hdr + l->code_size, 4);
	c->positions = nd_rd64(hdr, (size_t)l->code_positions);
	c->deopt = nd_rd64(hdr, (size_t)l->code_deopt_data);
}

/* Whether the code at address code (header hdr) is the one c was read of. After a GC that
 * moved its tables (--stress-compaction) it is read again, which is right too. */
static bool code_same(const struct nd_layout *l, const struct nd_code *c, uint64_t code,
		      const uint8_t *hdr)
{
	struct nd_code now;

	code_identity(l, &now, code, hdr);
	return c->entry == now.entry && c->size == now.size && c->positions == now.positions &&
	       c->deopt == now.deopt;
}

/* The function of the deoptimization data's slot v (through its wrapper in 13.6), 0 when
 * it cannot be read. */
static uint64_t deopt_fn(struct runtime_proc *rp, uint64_t v)
{
	int at = rp->l.deopt_sfi_wrapper;

	if (nd_is_heap(v) && at >= 0 && nd_read(rp->pid, nd_untag(v) + (uint64_t)at, &v, 8) < 0)
		return 0;
	return nd_is_heap(v) ? v : 0;
}

static struct nd_code *code_read(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr)
{
	const struct nd_layout *l = &rp->l;
	uint32_t nr, nr_deopt;
	struct nd_code *c = xcalloc(1, sizeof(*c));

	code_identity(l, c, code, hdr);
	uint8_t *b = read_array(rp, nd_rd64(hdr, (size_t)l->code_positions), 1, MAX_POSITIONS * 8,
				&nr);
	if (b) {
		/* an entry takes at least a byte: nr entries at most, not MAX_POSITIONS */
		uint32_t cap = nr < MAX_POSITIONS ? (nr ? nr : 1) : MAX_POSITIONS;

		c->pc_off = xmalloc(cap * sizeof(*c->pc_off));
		c->pos = xmalloc(cap * sizeof(*c->pos));
		c->nr_pos = nd_decode_positions(b, nr, c->pc_off, c->pos, cap);
		free(b);
	}
	uint8_t *d = read_array(rp, nd_rd64(hdr, (size_t)l->code_deopt_data), 8, 16, &nr_deopt);
	c->sfi = d && l->deopt_sfi >= 0 && nr_deopt > (uint32_t)l->deopt_sfi
			 ? deopt_fn(rp, nd_rd64(d, 8 * (size_t)l->deopt_sfi)) : 0;
	if (d && nr_deopt > (uint32_t)l->deopt_inlining_positions) {
		int32_t count = nd_smi(nd_rd64(d, 8 * (size_t)l->deopt_inlined_count));
		uint8_t *lits = count > 0 && count <= MAX_INLINED
					? read_array(rp, nd_rd64(d, 8 * (size_t)l->deopt_literals), 8,
						     (size_t)count, &c->nr_lits)
					: NULL;
		c->lit_fn = xcalloc(c->nr_lits + 1, sizeof(*c->lit_fn));
		for (uint32_t i = 0; i < c->nr_lits; i++)	/* weak references: tag 3 */
			c->lit_fn[i] = nd_fn_index(rp, nd_untag(nd_rd64(lits, 8 * i)) | 1, NULL);
		free(lits);
		uint8_t *ip = read_array(rp, nd_rd64(d, 8 * (size_t)l->deopt_inlining_positions), 1,
					 MAX_INLINED * 16, &nr);
		c->nr_inl = ip ? nr / 16 : 0;
		c->inl_fn = xcalloc(c->nr_inl + 1, sizeof(*c->inl_fn));
		c->inl_pos = xcalloc(c->nr_inl + 1, sizeof(*c->inl_pos));
		for (uint32_t i = 0; i < c->nr_inl; i++) {
			int32_t id;
			memcpy(&id, ip + 16 * i + 8, 4);
			c->inl_pos[i] = nd_rd64(ip, 16 * i);
			c->inl_fn[i] = id >= 0 && (uint32_t)id < c->nr_lits ? c->lit_fn[id] : -1;
		}
		free(ip);
	}
	free(d);
	for (uint32_t i = 0; i < c->nr_pos && !c->unread; i++)
		c->unread = nd_pos_inlining(c->pos[i]) > c->nr_inl;
	return c;
}

struct nd_code *nd_code_get(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr)
{
	void **slot = hashmap__find(rp->code_by_addr, &code, sizeof(code));
	bool created;

	uint8_t unread = 0;
	if (slot) {
		struct nd_code *c = *slot;
		bool same = !c->baseline && code_same(&rp->l, c, code, hdr);
		/* its inlining table unread (a read that failed): read again, a few times */
		if (same && (!c->unread || c->unread >= MAX_REREADS))
			return c;
		unread = same ? c->unread : 0;
		nd_code_free(c);	/* the address holds other code now, or read again */
		hashmap__remove(rp->code_by_addr, &code, sizeof(code));
	}
	if (hashmap__count(rp->code_by_addr) >= MAX_CODES)
		return NULL;
	struct nd_code *c = code_read(rp, code, hdr);
	if (c->unread)
		c->unread = (uint8_t)(unread + 1);
	slot = hashmap__insert(rp->code_by_addr, &code, sizeof(code), &created);
	*slot = c;
	return c;
}

bool nd_code_of(struct runtime_proc *rp, struct nd_code *c, uint64_t sfi, uint64_t *own)
{
	const struct nd_layout *l = &rp->l;
	uint64_t now;

	if (!c->sfi || c->sfi == sfi)
		return true;	/* unknown, or the one it was read with */
	/* what the deoptimization data holds now: a GC that moved the function updated it,
	 * not what was read of it */
	if (!nd_is_heap(c->deopt) ||
	    nd_read(rp->pid, nd_untag(c->deopt) + (uint64_t)l->fa_data + 8 * (uint64_t)l->deopt_sfi,
		    &now, 8) < 0 || !(now = deopt_fn(rp, now)))
		return true;
	c->sfi = now;
	*own = now;
	return now == sfi;
}

uint32_t nd_bytecode_line(struct runtime_proc *rp, int32_t i, uint64_t ba, const uint8_t *hdr,
			  int32_t off)
{
	uint64_t table = nd_rd64(hdr, (size_t)rp->l.ba_positions), len = nd_rd64(hdr, 8);
	void **slot = hashmap__find(rp->bc_by_addr, &ba, sizeof(ba));
	struct nd_code *c = slot ? *slot : NULL;
	bool created;

	if (off < 0 || !nd_is_heap(table))
		return 0;	/* no table: V8 makes them lazily */
	if (c && (c->entry != table || c->size != (uint32_t)nd_smi(len))) {
		nd_code_free(c);	/* another function's bytecode now */
		hashmap__remove(rp->bc_by_addr, &ba, sizeof(ba));
		c = NULL;
	}
	if (!c) {
		uint32_t nr;
		if (hashmap__count(rp->bc_by_addr) >= MAX_CODES)
			return 0;
		c = xcalloc(1, sizeof(*c));
		c->entry = table;
		c->size = (uint32_t)nd_smi(len);
		uint8_t *b = read_array(rp, table, 1, MAX_POSITIONS * 8, &nr);
		if (b) {
			uint32_t cap = nr < MAX_POSITIONS ? (nr ? nr : 1) : MAX_POSITIONS;

			c->pc_off = xmalloc(cap * sizeof(*c->pc_off));
			c->pos = xmalloc(cap * sizeof(*c->pos));
			c->nr_pos = nd_decode_positions(b, nr, c->pc_off, c->pos, cap);
			free(b);
		}
		slot = hashmap__insert(rp->bc_by_addr, &ba, sizeof(ba), &created);
		*slot = c;
	}
	uint32_t lo = 0, hi = c->nr_pos;
	while (lo < hi) {	/* the last position at or before off */
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->pc_off[mid] <= (uint32_t)off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? nd_fn_line(rp, i, nd_pos_offset(c->pos[lo - 1])) : 0;
}

/* Sparkplug's code at tagged address code: its pc -> bytecode offset table, decoded
 * beside the bytecodes of its BytecodeArray ba (nd_decode_baseline). A table that cannot
 * be read or does not match leaves nr_pos 0: the frame gets no line, never a wrong one. */
static struct nd_code *baseline_read(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr,
				     uint64_t ba, const uint8_t *bah)
{
	const struct nd_layout *l = &rp->l;
	struct nd_code *c = xcalloc(1, sizeof(*c));
	uint64_t len = nd_rd64(bah, (size_t)l->fa_length);
	uint32_t nr;

	code_identity(l, c, code, hdr);
	c->baseline = true;
	c->ba = ba;
	if (!rp->nr_bytecodes || !nd_is_smi(len) || nd_smi(len) <= 0 ||
	    nd_smi(len) > MAX_POSITIONS * 8)
		return c;
	uint32_t nb = (uint32_t)nd_smi(len);
	uint8_t *t = read_array(rp, nd_rd64(hdr, (size_t)l->code_positions), 1, MAX_POSITIONS * 8,
				&nr);
	uint8_t *b = xmalloc(nb);
	if (t && nd_read(rp->pid, nd_untag(ba) + (uint64_t)l->ba_header, b, nb) == 0) {
		c->pc_off = xmalloc((nr + 1) * sizeof(*c->pc_off));
		c->pos = xmalloc((nr + 1) * sizeof(*c->pos));
		c->nr_pos = nd_decode_baseline(t, nr, b, nb, rp->bc_sizes, rp->nr_bytecodes, c->size,
					       c->pc_off, c->pos);
	}
	free(t);
	free(b);
	return c;
}

int32_t nd_baseline_offset(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr, uint64_t ba,
			   const uint8_t *bah, uint32_t off)
{
	void **slot = hashmap__find(rp->code_by_addr, &code, sizeof(code));
	struct nd_code *c = slot ? *slot : NULL;
	bool created;

	if (c && (!c->baseline || !code_same(&rp->l, c, code, hdr))) {
		nd_code_free(c);	/* the address holds other code now */
		hashmap__remove(rp->code_by_addr, &code, sizeof(code));
		c = NULL;
	}
	if (c && c->ba != ba) {
		/* The frame's BytecodeArray slot is not the one the table was decoded beside:
		 * a stale slot of a frame being built (it once gave spinFor hotB's line), or
		 * the array moved by a GC. Only a table that matches these bytecodes too is
		 * taken, in place of the other. */
		struct nd_code *t = baseline_read(rp, code, hdr, ba, bah);
		if (!t->nr_pos) {
			nd_code_free(t);
			return -1;
		}
		nd_code_free(c);
		*slot = c = t;
	}
	if (!c) {
		if (hashmap__count(rp->code_by_addr) >= MAX_CODES)
			return -1;
		c = baseline_read(rp, code, hdr, ba, bah);
		slot = hashmap__insert(rp->code_by_addr, &code, sizeof(code), &created);
		*slot = c;
	}
	uint32_t lo = 0, hi = c->nr_pos;
	while (lo < hi) {	/* the first range that ends past off */
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->pc_off[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_pos ? (int32_t)(int64_t)c->pos[lo] : -1;
}

static int node_sample(struct runtime_proc *rp, pid_t tid, const struct rt_native *n,
		       struct rt_frame *frames, int max)
{
	(void)tid;
	if (!rp || !n || max <= 0)
		return 0;
	return nd_walk(rp, n, frames, max);
}

static void node_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	if (!rp || f->id >= rp->nr_fns) {
		strbuf_addstr(out, "(unknown)_[js]");
		return;
	}
	const struct nd_fn *fn = rp->fns[f->id];
	if (f->aux)
		strbuf_addf(out, "%s (%s:%u)_[js]", fn->name, fn->file, f->aux);
	else if (fn->file[0])
		strbuf_addf(out, "%s (%s)_[js]", fn->name, fn->file);
	else
		strbuf_addf(out, "%s_[js]", fn->name);
}

static const char *const node_interp_symbols[] = { "Builtins_JSEntry", "Builtins_JSConstructEntry",
						   "Builtins_JSRunMicrotasksEntry", NULL };

/* The native frames of V8's JavaScript code: the JIT's (anonymous memory, or named by a
 * perf map) and the builtins that run or call JavaScript; named C++ code (a native
 * addon, zlib) stays. */
static bool node_hidden(const char *name)
{
	static const char *const prefixes[] = { "(anon+", "(unknown+", "[anon", "JS:", "LazyCompile:",
						"Function:", "Builtins_JS", "Builtins_Interpreter",
						"Builtins_Call", "Builtins_Construct", "Builtins_Baseline",
						"Builtins_ArgumentsAdaptor", NULL };

	for (const char *const *p = prefixes; *p; p++)
		if (!strncmp(name, *p, strlen(*p)))
			return true;
	return false;
}

const struct runtime_ops node_runtime = {
	.name = "nodejs",
	.merge = RUNTIME_INTERLEAVE,
	.interp_symbols = node_interp_symbols,
	.native_hidden = node_hidden,
	.attach = node_attach,
	.likely = nd_attach__is_node_file,
	.sample_native = node_sample,
	.frame_name = node_name,
	.detach = node_detach,
	.start = node_start,
	.seen = node_seen,
	.stop = node_stop,
};
