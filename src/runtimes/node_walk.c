/* The JavaScript frames of one sample (see node_proc.h). V8's JIT code and builtins keep
 * frame pointers, and each JavaScript frame holds, below its frame pointer, its context
 * and the JSFunction it runs (an interpreted one also its BytecodeArray and bytecode
 * offset); a frame V8 made for itself holds a frame type marker instead (a small even
 * number): the entry frames (Builtins_JSEntry) start each activation of JavaScript from
 * C++. The native unwinder has already walked the stack; each of its return addresses
 * was read from the slot just above its callee's saved frame pointer, so the frame
 * pointer of every frame is found by looking the return addresses up in the stack copy.
 * Only frames that run V8 code (anonymous executable memory, the embedded builtins) are
 * looked at, and a frame is taken as JavaScript only when its function slot holds an
 * object whose map says JSFunction: a garbage slot gives no frame, never a wrong one.
 * An optimized frame is expanded into the functions inlined at its pc. */
#include "runtimes/node_proc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_NATIVE 512		/* native frames looked at */
#define JSF_READ ND_JSF_READ
#define CODE_READ ND_CODE_READ
#define CODE_ALIGN 64		/* of instruction streams */
#define CODE_CHUNK 4096		/* bytes of code space read at a time, looking for one */
#define CODE_SCAN (64u << 10)	/* how far back from a pc its stream's start may be */
#define MAX_PCS 65536		/* pcs whose code object is remembered */

enum raw_kind { RAW_ENTRY, RAW_JS };

struct raw {
	enum raw_kind kind;
	bool leaf, blob;	/* blob: its pc is in the embedded builtins */
	uint64_t pc, fn, ba;	/* ba: an interpreted frame's BytecodeArray, else 0 */
	uint64_t fp;
	int32_t bo;		/* and its bytecode offset */
	uint8_t jsf[JSF_READ], map[16], sfi[ND_SFI_READ], code[CODE_READ], bah[ND_BA_READ];
};

static bool in_copy(const struct rt_native *n, uint64_t addr)
{
	return addr >= n->sp && addr - n->sp < n->stack_len && n->stack_len - (addr - n->sp) >= 8;
}

/* The word at stack address addr: from the copy, else (a deep stack) from the process. */
static bool stack_word(struct runtime_proc *rp, const struct rt_native *n, uint64_t addr,
		       uint64_t *out)
{
	if (in_copy(n, addr)) {
		memcpy(out, n->stack + (addr - n->sp), 8);
		return true;
	}
	return addr > n->sp && nd_read(rp->pid, addr, out, 8) == 0;
}

/* The file and offset of the mapping of process pid that holds addr: 0, or -ENOENT. */
static int file_of(pid_t pid, uint64_t addr, uint64_t *ino, uint64_t *off)
{
	char path[64], line[512];
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (err && fgets(line, sizeof(line), fp)) {
		uint64_t start, end, pgoff, inode;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %" SCNu64, &start,
			   &end, &pgoff, &inode) == 4 && addr >= start && addr < end && inode) {
			*ino = inode;
			*off = pgoff + (addr - start);
			err = 0;
		}
	}
	fclose(fp);
	return err;
}

static void load_blob(struct runtime_proc *rp)
{
	uint64_t b;
	uint32_t s;	/* V8 keeps the size as a uint32_t */

	if (rp->blob || !rp->blob_var)
		return;
	if (nd_read(rp->pid, rp->blob_var, &b, 8) == 0 &&
	    nd_read(rp->pid, rp->blob_size_var, &s, 4) == 0 && b && s) {
		rp->blob = b;
		rp->blob_size = s;
		if (file_of(rp->pid, b, &rp->blob_ino, &rp->blob_off) < 0)
			rp->blob_ino = 0;
	}
}

/* Whether native frame i runs an embedded builtin: in the blob, or in a copy of it that V8
 * mapped from the same file elsewhere. */
static bool in_blob(const struct runtime_proc *rp, const struct rt_native *n, uint32_t i)
{
	uint64_t pc = n->pcs[i];

	if (rp->blob && pc >= rp->blob && pc - rp->blob < rp->blob_size)
		return true;
	const struct mapping *m = n->maps ? n->maps[i] : NULL;
	if (!m || !rp->blob_ino || m->ino != rp->blob_ino || pc < m->start || pc >= m->end)
		return false;
	uint64_t off = mapping__file_offset(m, pc);
	return off >= rp->blob_off && off - rp->blob_off < rp->blob_size;
}

/* Whether native frame i runs V8 code: the builtins, or executable memory no file
 * backs (the JIT's code space). */
static bool v8_code(const struct runtime_proc *rp, const struct rt_native *n, uint32_t i)
{
	if (in_blob(rp, n, i))
		return true;
	const struct mapping *m = n->maps ? n->maps[i] : NULL;
	if (!m || !m->path)
		return true;	/* unknown yet: code the JIT has just made */
	if (!strncmp(m->path, "//anon", 6))
		return true;
	return m->path[0] != '/' && strncmp(m->path, "[vdso", 5) && strncmp(m->path, "[vsys", 5);
}

/* Classifies native frame i, whose frame pointer is fp. */
static bool classify(struct runtime_proc *rp, const struct rt_native *n, uint64_t fp,
		     struct raw *r)
{
	const struct nd_layout *l = &rp->l;
	uint64_t ctx, fn;

	if (!stack_word(rp, n, fp + (uint64_t)(int64_t)l->fp_context, &ctx) ||
	    !stack_word(rp, n, fp + (uint64_t)(int64_t)l->fp_function, &fn))
		return false;
	if (nd_is_smi(ctx) && ctx < 1024) {	/* a frame type marker */
		int64_t type = (int64_t)(ctx >> 1);
		r->kind = RAW_ENTRY;
		return type == l->ft_entry || type == l->ft_construct_entry;
	}
	if (!nd_is_heap(ctx) || !nd_is_heap(fn))
		return false;
	r->kind = RAW_JS;
	r->fn = fn;
	r->ba = 0;
	uint64_t ba, bo;
	if (stack_word(rp, n, fp + (uint64_t)(int64_t)l->fp_bytecode_array, &ba) &&
	    stack_word(rp, n, fp + (uint64_t)(int64_t)l->fp_bytecode_offset, &bo) &&
	    nd_is_heap(ba) && (nd_is_smi(bo) || nd_is_heap(bo))) {
		r->ba = ba;
		/* the slot holds the offset from the tagged array's address; a baseline
		 * frame keeps its feedback vector there, and its offset comes from the pc */
		r->bo = nd_is_smi(bo) ? nd_smi(bo) - (l->ba_header - 1) : -1;
	}
	return true;
}

/* Reads the objects of the JavaScript frames, two system calls for all of them. */
static void read_objects(struct runtime_proc *rp, struct raw *raws, size_t nr)
{
	struct nd_span sp[4 * ND_MAX_JS] = { { 0 } };
	size_t k = 0;

	for (size_t i = 0; i < nr; i++)
		if (raws[i].kind == RAW_JS)
			sp[k++] = (struct nd_span){ nd_untag(raws[i].fn), JSF_READ, raws[i].jsf };
	nd_read_spans(rp->pid, sp, k);
	k = 0;
	for (size_t i = 0; i < nr; i++) {
		struct raw *r = &raws[i];
		if (r->kind != RAW_JS)
			continue;
		uint64_t map = nd_rd64(r->jsf, 0), sfi = nd_rd64(r->jsf, (size_t)rp->l.jsf_shared);
		uint64_t code = rp->l.jsf_code >= 0 ? nd_rd64(r->jsf, (size_t)rp->l.jsf_code) : 0;
		memset(r->map, 0, sizeof(r->map));
		memset(r->sfi, 0, sizeof(r->sfi));
		memset(r->code, 0, sizeof(r->code));
		if (nd_is_heap(map))
			sp[k++] = (struct nd_span){ nd_untag(map), sizeof(r->map), r->map };
		if (nd_is_heap(sfi))
			sp[k++] = (struct nd_span){ nd_untag(sfi), ND_SFI_READ, r->sfi };
		if (nd_is_heap(code))
			sp[k++] = (struct nd_span){ nd_untag(code), CODE_READ, r->code };
		memset(r->bah, 0, sizeof(r->bah));
		if (r->ba)
			sp[k++] = (struct nd_span){ nd_untag(r->ba), ND_BA_READ, r->bah };
	}
	nd_read_spans(rp->pid, sp, k);
}

/* Whether the Code at tagged address code (its header read into hdr) holds pc. */
static bool code_holds(struct runtime_proc *rp, uint64_t code, uint64_t pc, uint8_t *hdr)
{
	uint64_t entry;
	uint32_t size;

	if (!nd_is_heap(code) || nd_read(rp->pid, nd_untag(code), hdr, CODE_READ) < 0)
		return false;
	entry = nd_code_entry(&rp->l, code, hdr);
	memcpy(&size, hdr + rp->l.code_size, 4);
	return pc >= entry && pc - entry < size;
}

/* Finds the code object whose instructions hold pc, in the JIT's code space. Each
 * instruction stream starts code-aligned: from V8 11.3 on with its map and a pointer back
 * to its Code, the instructions after its header (is_header bytes); before (10.2) it is
 * the Code itself, whose instructions follow its header, with code_map, the map all Code
 * objects share. Remembered by pc (also when not found). */
static bool find_code(struct runtime_proc *rp, uint64_t pc, uint64_t code_map, uint64_t *code,
		      uint8_t *hdr)
{
	const struct nd_layout *l = &rp->l;
	void **slot = hashmap__find(rp->code_by_pc, &pc, sizeof(pc));
	uint64_t before = (uint64_t)(l->code_header > 0 ? l->code_header : l->is_header);
	uint8_t chunk[CODE_CHUNK + 128];
	bool created;
	int tries = 0;

	if (slot) {
		*code = (uint64_t)(uintptr_t)*slot;
		return *code && code_holds(rp, *code, pc, hdr);
	}
	*code = 0;
	if (before < 16 || before > 128 + CODE_ALIGN ||
	    (l->code_header > 0 && !nd_is_heap(code_map)))
		return false;
	for (uint64_t top = pc & ~(uint64_t)(CODE_ALIGN - 1), done = 0;
	     done < CODE_SCAN && top > CODE_CHUNK + before && !*code;
	     done += CODE_CHUNK, top -= CODE_CHUNK) {
		/* the chunk holds the words before each entry e in (top - CODE_CHUNK, top] */
		uint64_t base = top - CODE_CHUNK + CODE_ALIGN - before;
		if (nd_read(rp->pid, base, chunk, (size_t)(top - base)) < 0)
			break;
		for (uint64_t e = top; e > top - CODE_CHUNK && tries < 16; e -= CODE_ALIGN) {
			uint64_t map = nd_rd64(chunk, (size_t)(e - before - base)), back;
			if (l->code_header > 0) {
				back = (e - before) | 1;
				if (map != code_map)
					continue;
			} else {
				back = nd_rd64(chunk, (size_t)(e - before + 8 - base));
				if (!nd_is_heap(back) || !nd_is_heap(map))
					continue;
			}
			tries++;
			if (code_holds(rp, back, pc, hdr) && nd_code_entry(l, back, hdr) == e) {
				*code = back;
				break;
			}
		}
	}
	if (hashmap__count(rp->code_by_pc) < MAX_PCS) {
		slot = hashmap__insert(rp->code_by_pc, &pc, sizeof(pc), &created);
		*slot = (void *)(uintptr_t)*code;
	}
	return *code != 0;
}

/* A leaf frame whose pc is in a builtin that Sparkplug's code calls without a frame of
 * its own (Builtins_*_Baseline) left its return address between sp and the frame's fp,
 * below the frame's registers: the first word there that points into the function's
 * baseline code [entry, entry + size). Or, where the function does not say which code it
 * runs (13.6), the first of the lowest BASELINE_WORDS words that is a pc of baseline code:
 * its Code into *code and its header into hdr. Returns it, or 0. */
#define BASELINE_WORDS 4
static uint64_t return_into(struct runtime_proc *rp, const struct rt_native *n, uint64_t fp,
			    uint64_t entry, uint32_t size, uint64_t *code, uint8_t *hdr)
{
	const struct nd_layout *l = &rp->l;

	for (uint64_t a = n->sp, i = 0; a < fp && in_copy(n, a); a += 8, i++) {
		uint64_t w, found;
		uint32_t flags;
		memcpy(&w, n->stack + (a - n->sp), 8);
		if (l->jsf_code >= 0) {
			if (w > entry && w - entry <= size)
				return w;
			continue;
		}
		if (i >= BASELINE_WORDS)
			break;
		if (!find_code(rp, w - 1, 0, &found, hdr))
			continue;
		memcpy(&flags, hdr + l->code_flags, 4);
		if ((flags & l->code_kind_mask) == l->kind_baseline) {
			*code = found;
			return w;
		}
	}
	return 0;
}

/* Whether interpreted frame r's BytecodeArray may be its function's: not when the
 * function's data is another BytecodeArray (the map of the frame's array). A frame being
 * built holds its function before its BytecodeArray slot is written, which then still
 * holds what an earlier frame there left: the function is right, the line from that
 * array would be another function's. (Not seen to happen: spinFor at hotA's first line
 * was the prologue case below, not this one.) */
static bool own_bytecode(struct runtime_proc *rp, const struct raw *r)
{
	int at = rp->l.sfi_function_data;
	uint64_t data, map;

	if (at < 0 || !nd_rd64(r->sfi, 0))
		return true;	/* unknown: the layout or the function unread */
	data = nd_rd64(r->sfi, (size_t)at);
	if (data == r->ba || !nd_is_heap(data))
		return data == r->ba;
	/* baseline code, InterpreterData (--interpreted-frames-native-stack): may be */
	return nd_read(rp->pid, nd_untag(data), &map, 8) < 0 || map != nd_rd64(r->bah, 0);
}

/* Appends the frames of JavaScript frame r, root first, to out. Returns how many. */
static int expand(struct runtime_proc *rp, const struct rt_native *n, const struct raw *r,
		  struct rt_frame *out, int room)
{
	const struct nd_layout *l = &rp->l;
	uint16_t type;

	memcpy(&type, r->map + l->map_instance_type, 2);
	if (room <= 0 || type < l->t_jsfunction_first || type > l->t_jsfunction_last)
		return 0;
	uint64_t sfi = nd_rd64(r->jsf, (size_t)l->jsf_shared);
	int32_t fi = nd_fn_index(rp, sfi, nd_rd64(r->sfi, 0) ? r->sfi : NULL);
	if (fi < 0) {
		rp->unreadable++;
		return 0;
	}
	uint64_t code = l->jsf_code >= 0 ? nd_rd64(r->jsf, (size_t)l->jsf_code) : 0, entry;
	uint32_t size, flags;
	entry = nd_code_entry(l, code, r->code);
	memcpy(&size, r->code + l->code_size, 4);
	memcpy(&flags, r->code + l->code_flags, 4);
	uint32_t kind = flags & l->code_kind_mask;
	struct nd_code *c = NULL;
	uint8_t other[CODE_READ];
	const uint8_t *hdr = r->code;
	bool holds = r->pc >= entry && r->pc - entry < size;
	uint64_t pc = r->pc, ret;
	bool ret_addr = !r->leaf;	/* a return address is just past its call */
	if (!holds && r->blob && r->leaf && r->bo < 0 && r->ba &&
	    (kind == l->kind_baseline || l->jsf_code < 0) &&
	    (ret = return_into(rp, n, r->fp, entry, size, &code, other))) {
		pc = ret;	/* called a builtin from baseline code */
		ret_addr = holds = true;
		if (l->jsf_code < 0) {
			hdr = other;
			entry = nd_code_entry(l, code, other);
			memcpy(&size, other + l->code_size, 4);
			kind = l->kind_baseline;
		}
	} else if (!holds && !r->blob &&
		   find_code(rp, r->pc, nd_rd64(r->code, 0), &code, other)) {
		/* not the function's code: on-stack-replacement code of a loop, or (13.6,
		 * where the function holds no code) whatever code runs it */
		hdr = other;
		entry = nd_code_entry(l, code, other);
		memcpy(&flags, other + l->code_flags, 4);
		kind = flags & l->code_kind_mask;
		memcpy(&size, other + l->code_size, 4);
		holds = true;
	}
	uint32_t off = holds ? (uint32_t)(pc - entry) - (ret_addr && pc != entry ? 1 : 0) : 0;
	if (holds && (kind == l->kind_turbofan || kind == l->kind_maglev))
		c = nd_code_get(rp, code, hdr);
	uint64_t own;
	if (c && !nd_code_of(rp, c, sfi, &own)) {
		/* The code that holds the pc is another function's: the frame's function
		 * slot is not yet its own (an optimized function's prologue sets up its frame
		 * pointer, then pushes its function), or code found by the pc is of another
		 * function. The code says whose it is: its positions are of that one. */
		fi = nd_fn_index(rp, own, NULL);
		if (fi < 0) {
			rp->unreadable++;
			return 0;
		}
	}
	if (!c) {	/* interpreted or baseline (the line from the bytecode offset), or unknown */
		int32_t bo = r->bo;
		if (holds && kind == l->kind_baseline && bo < 0 && r->ba)
			bo = nd_baseline_offset(rp, code, hdr, r->ba, r->bah, off);
		uint32_t line = r->ba && (r->bo < 0 || own_bytecode(rp, r))
					? nd_bytecode_line(rp, fi, r->ba, r->bah, bo) : 0;
		out[0] = (struct rt_frame){ (uint64_t)fi, line, 0 };
		return 1;
	}
	uint32_t lo = 0, hi = c->nr_pos;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->pc_off[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t pos = lo ? c->pos[lo - 1] : 0;
	struct rt_frame chain[ND_MAX_INLINE + 1];
	int nc = 0;
	for (uint32_t id; nc < ND_MAX_INLINE && (id = nd_pos_inlining(pos)) && id <= c->nr_inl;) {
		int32_t f = c->inl_fn[id - 1];
		if (f >= 0)
			chain[nc++] = (struct rt_frame){ (uint64_t)f,
							nd_fn_line(rp, f, nd_pos_offset(pos)), 0 };
		pos = c->inl_pos[id - 1];
	}
	/* still inlined: by an inlining the table does not hold (its deoptimization data
	 * unread, say as the process exits) or nested too deep, so the offset is in another
	 * function: the frame gets no line, never that function's line as its own */
	bool lost = nd_pos_inlining(pos) != 0;
	chain[nc++] = (struct rt_frame){ (uint64_t)fi,
					lo && !lost ? nd_fn_line(rp, fi, nd_pos_offset(pos)) : 0, 0 };
	int w = 0;
	for (int i = nc - 1; i >= 0 && w < room; i--)
		out[w++] = chain[i];
	return w;
}

int nd_walk(struct runtime_proc *rp, const struct rt_native *n, struct rt_frame *frames, int max)
{
	static __thread uint64_t slot[MAX_NATIVE];
	static __thread struct raw raws[ND_MAX_JS];
	static __thread struct rt_frame all[ND_MAX_JS * 2];
	uint32_t nr = n->nr_pcs < MAX_NATIVE ? n->nr_pcs : MAX_NATIVE;
	uint64_t at = n->sp;
	size_t nr_raw = 0;

	if (!n->stack || !n->pcs || nr < 2 || max <= 0)
		return 0;
	load_blob(rp);
	/* where each return address was read: its callee's frame pointer is 8 below */
	for (uint32_t j = 1; j < nr; j++) {
		slot[j] = 0;
		for (uint64_t a = at; in_copy(n, a); a += 8) {
			uint64_t w;
			memcpy(&w, n->stack + (a - n->sp), 8);
			if (w == n->pcs[j]) {
				slot[j] = a;
				at = a + 8;
				break;
			}
		}
	}
	uint64_t last_fp = 0;
	for (uint32_t i = 0; i + 1 < nr && nr_raw < ND_MAX_JS; i++) {
		if (!slot[i + 1] || !v8_code(rp, n, i))
			continue;
		uint64_t fp = slot[i + 1] - 8;
		struct raw *r = &raws[nr_raw];
		if (fp == last_fp || !classify(rp, n, fp, r))
			continue;
		last_fp = fp;
		r->pc = n->pcs[i];
		r->fp = fp;
		r->leaf = i == 0;
		r->blob = in_blob(rp, n, i);
		nr_raw++;
	}
	read_objects(rp, raws, nr_raw);
	/* root first: the entry frames begin the activations */
	int w = 0;
	bool entry = true;
	for (size_t i = nr_raw; i-- > 0 && w < (int)(sizeof(all) / sizeof(all[0]));) {
		if (raws[i].kind == RAW_ENTRY) {
			entry = true;
			continue;
		}
		int k = expand(rp, n, &raws[i], all + w, (int)(sizeof(all) / sizeof(all[0])) - w);
		if (k > 0 && entry) {
			all[w].flags |= RT_FRAME_ENTRY;
			entry = false;
		}
		w += k;
	}
	if (w <= max) {
		memcpy(frames, all, (size_t)w * sizeof(*frames));
		return w;
	}
	/* the newest max frames; the root ones are lost */
	memcpy(frames, all + (w - max), (size_t)max * sizeof(*frames));
	frames[0].flags |= RT_FRAME_ENTRY | RT_FRAME_TRUNCATED;
	return max;
}
