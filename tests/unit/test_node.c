/* The Node.js reader: its decoders (source position tables against an encoder written
 * here the way V8's source-position-table.cc writes them, line ends, scope infos) on
 * known and random bytes; the layout table; and the frame walk on V8 objects built in
 * this process's own memory (the reader reads them with process_vm_readv as it would a
 * node's): an entry frame, an interpreted frame and their names; random stacks give no
 * frame and no crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/node_proc.h"
#include "util/strbuf.h"

static size_t put_vlq(uint8_t *b, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		uint8_t c = z & 0x7f;
		z >>= 7;
		b[n++] = c | (z ? 0x80 : 0);
	} while (z);
	return n;
}

static void test_positions(void **state)
{
	/* (code offset, is statement, source position) from (-1, 0), as deltas */
	const int64_t code[] = { 0, 5, 5, 40, 300, 301 };
	const int64_t pos[] = { 188, 200, 150, 7 << 1 | (3ll << 31), 1ll << 40, 2 };
	uint8_t b[256];
	size_t len = 0;
	int64_t pc = -1, pp = 0;
	uint32_t got_pc[8];
	uint64_t got_pos[8];

	for (size_t i = 0; i < 6; i++) {
		int64_t d = code[i] - pc;
		len += put_vlq(b + len, i & 1 ? d : -d - 1);	/* odd ones: statements */
		len += put_vlq(b + len, pos[i] - pp);
		pc = code[i];
		pp = pos[i];
	}
	assert_int_equal(nd_decode_positions(b, len, got_pc, got_pos, 8), 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(got_pc[i], code[i]);
		assert_int_equal(got_pos[i], pos[i]);
	}
	assert_int_equal(nd_decode_positions(b, len, got_pc, got_pos, 3), 3);
	assert_int_equal(nd_decode_positions(b, len - 1, got_pc, got_pos, 8), 5);	/* cut */
	/* bytecode tables begin at the function entry, offset -1: not an entry */
	len = put_vlq(b, -1);	/* delta 0, not a statement */
	len += put_vlq(b + len, 30);
	len += put_vlq(b + len, 4);
	len += put_vlq(b + len, 12);
	assert_int_equal(nd_decode_positions(b, len, got_pc, got_pos, 8), 1);
	assert_int_equal(got_pc[0], 3);
	assert_int_equal(got_pos[0], 42);
	/* the first bytes of a table node 20 wrote: (0, 188) */
	const uint8_t real[] = { 0x03, 0xf8, 0x02 };
	assert_int_equal(nd_decode_positions(real, 3, got_pc, got_pos, 8), 1);
	assert_int_equal(got_pc[0], 0);
	assert_int_equal(got_pos[0], 188);
	assert_int_equal(nd_pos_offset(188), 93);
	assert_int_equal(nd_pos_inlining(188), 0);
	assert_int_equal(nd_pos_offset(7 << 1 | (3ull << 31)), 6);
	assert_int_equal(nd_pos_inlining(7 << 1 | (3ull << 31)), 3);
	assert_int_equal(nd_pos_offset(0), -1);
	(void)state;
}

/* Sparkplug's bytecode offset table against bytecodes of sizes from a made-up table:
 * bytecode 4 takes 2 bytes (3, 5 with a Wide or ExtraWide prefix), 5 takes 3, 6 one. */
static uint8_t bc_sizes[3][256];

static void fill_sizes(void)
{
	for (int s = 0; s < 3; s++) {
		for (int b = 0; b < 4; b++)
			bc_sizes[s][b] = 1;
		bc_sizes[s][6] = 1;
	}
	bc_sizes[0][4] = 2, bc_sizes[1][4] = 3, bc_sizes[2][4] = 5;
	bc_sizes[0][5] = 3, bc_sizes[1][5] = 5, bc_sizes[2][5] = 9;
}

static void test_baseline_table(void **state)
{
	/* offsets 0, 2, 5 (Wide 4 x x) and 9 */
	static const uint8_t bc[] = { 4, 0xaa, 5, 0xbb, 0xcc, 0, 4, 0xdd, 0xee, 6 };
	/* the prologue 10 bytes of code, then 3, 4, 5 and 1 (a two-byte VLQ: 5 = 0x85 0x00) */
	static const uint8_t t[] = { 10, 3, 4, 0x85, 0x00, 1 };
	static const uint8_t too_few[] = { 10, 3, 4, 5 }, too_many[] = { 10, 3, 4, 5, 1, 1 };
	static const uint8_t unknown[] = { 4, 0xaa, 7, 6 };
	uint32_t end[8];
	uint64_t off[8];
	const uint32_t want_end[] = { 10, 13, 17, 22, 23 };
	const int64_t want_off[] = { -1, 0, 2, 5, 9 };

	fill_sizes();
	assert_int_equal(nd_decode_baseline(t, sizeof(t), bc, sizeof(bc), bc_sizes, 8, 30, end, off), 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(end[i], want_end[i]);
		assert_int_equal((int64_t)off[i], want_off[i]);
	}
	/* anything that does not match gives no table, never a shifted one */
	assert_int_equal(nd_decode_baseline(too_few, sizeof(too_few), bc, sizeof(bc), bc_sizes, 8, 30,
					    end, off), 0);
	assert_int_equal(nd_decode_baseline(too_many, sizeof(too_many), bc, sizeof(bc), bc_sizes, 8,
					    30, end, off), 0);
	assert_int_equal(nd_decode_baseline(t, sizeof(t), bc, sizeof(bc), bc_sizes, 8, 22, end, off), 0);
	assert_int_equal(nd_decode_baseline(t, sizeof(t), bc, sizeof(bc) - 1, bc_sizes, 8, 30, end,
					    off), 0);	/* the last bytecode cut */
	assert_int_equal(nd_decode_baseline(t, 4, unknown, sizeof(unknown), bc_sizes, 8, 30, end, off),
			 0);	/* bytecode 7 has no size */
	assert_int_equal(nd_decode_baseline(t, 4, unknown, sizeof(unknown), bc_sizes, 7, 30, end, off),
			 0);	/* nor past the table */
	(void)state;
}

static void test_random_bytes(void **state)
{
	static uint8_t b[4096];
	uint32_t pc[64];
	uint64_t pos[64];
	struct nd_layout l;

	assert_int_equal(nd_layout__fill(&l, 11, 3, 244, NULL, NULL), 0);
	fill_sizes();
	srand(14);
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand() % sizeof(b);
		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)rand();
		uint32_t n = nd_decode_positions(b, len, pc, pos, 64);
		assert_true(n <= 64);
		for (uint32_t i = 1; i < n; i++)
			assert_true(pc[i] >= pc[i - 1]);	/* never a table out of order */
		uint32_t end[4096];
		uint64_t bco[4096];
		uint32_t nb = (uint32_t)rand() % 512, m;
		if (nb > len)
			nb = (uint32_t)len;
		m = nd_decode_baseline(b + nb, len - nb, b, nb, bc_sizes, 256, (uint32_t)rand(), end, bco);
		assert_true(m <= len - nb);
		for (uint32_t i = 1; i < m; i++)
			assert_true(end[i] >= end[i - 1] && (int64_t)bco[i] < (int64_t)nb);
		int off = nd_scope_name_slot(&l, b, len);
		assert_true(off == -1 || ((size_t)off + 8 <= len && off >= l.scope_first_vars));
	}
	(void)state;
}

static void test_lines(void **state)
{
	const uint32_t ends[] = { 9, 19, 29 };

	assert_int_equal(nd_line_of(ends, 3, 0), 1);
	assert_int_equal(nd_line_of(ends, 3, 9), 1);
	assert_int_equal(nd_line_of(ends, 3, 10), 2);
	assert_int_equal(nd_line_of(ends, 3, 29), 3);
	assert_int_equal(nd_line_of(ends, 3, 30), 0);
	assert_int_equal(nd_line_of(ends, 3, -1), 0);
	assert_int_equal(nd_line_of(NULL, 0, 5), 0);
	(void)state;
}

static bool fake_get(void *ctx, const char *name, int32_t *out)
{
	(void)ctx;
	if (!strcmp(name, "v8dbg_class_JSFunction__shared__SharedFunctionInfo")) {
		*out = 24;
		return true;
	}
	if (!strcmp(name, "v8dbg_off_fp_function")) {
		*out = 1 << 20;	/* out of range: not taken */
		return true;
	}
	if (!strcmp(name, "v8dbg_class_Code__instruction_start__uintptr_t")) {
		*out = 128;	/* V8 10.2's header size; 11.3 has no such field */
		return true;
	}
	return false;
}

static void test_layout(void **state)
{
	struct nd_layout l;

	assert_int_equal(nd_layout__fill(&l, 11, 3, 244, fake_get, NULL), 0);
	assert_int_equal(l.jsf_shared, 24);
	assert_int_equal(l.fp_function, -16);
	assert_int_equal(l.t_jsfunction_last - l.t_jsfunction_first, 15);
	assert_int_equal(l.code_header, 0);	/* the instructions are elsewhere */
	assert_int_equal(l.ba_header, 54);
	/* node 18: the Code holds its instructions after its header */
	assert_int_equal(nd_layout__fill(&l, 10, 2, 154, fake_get, NULL), 0);
	assert_int_equal(l.code_header, 128);
	assert_int_equal(l.ba_header, 56);
	assert_int_equal(l.t_jsfunction_first, 2065);
	assert_int_equal(nd_layout__fill(&l, 10, 3, 0, NULL, NULL), -ENOTSUP);
	/* node 22: the InstructionStream's header is 32 bytes */
	assert_int_equal(nd_layout__fill(&l, 12, 4, 254, NULL, NULL), 0);
	assert_int_equal(l.is_header, 32);
	assert_int_equal(l.jsf_code, 24);
	assert_int_equal(l.kind_turbofan, 12);
	/* node 24: no code in the JSFunction (a dispatch handle) */
	assert_int_equal(nd_layout__fill(&l, 13, 6, 233, NULL, NULL), 0);
	assert_true(l.jsf_code < 0);
	/* its deoptimization data names the code's function through a wrapper */
	assert_int_equal(l.deopt_sfi, 7);
	assert_int_equal(l.deopt_sfi_wrapper, 8);
	assert_int_equal(nd_layout__fill(&l, 13, 7, 0, NULL, NULL), -ENOTSUP);
	(void)state;
}

/* V8 objects in this process's memory, 8-aligned, tagged (+1) where V8 tags them. */
static uint64_t heap[512];

static uint64_t obj(size_t slot)
{
	return (uint64_t)(uintptr_t)&heap[slot] + 1;
}

static void set16(size_t slot, size_t off, uint16_t v)
{
	memcpy((uint8_t *)&heap[slot] + off, &v, 2);
}

/* A map of instance type t at slot s. */
static void make_map(const struct nd_layout *l, size_t s, uint16_t t)
{
	set16(s, (size_t)l->map_instance_type, t);
}

/* A sequential one-byte string at slot s (map at slot m). */
static void make_string(const struct nd_layout *l, size_t s, size_t m, const char *text)
{
	int32_t len = (int32_t)strlen(text);

	make_map(l, m, 8);	/* ONE_BYTE_INTERNALIZED_STRING_TYPE: seq, one byte */
	heap[s] = obj(m);
	memcpy((uint8_t *)&heap[s] + l->str_length, &len, 4);
	memcpy((uint8_t *)&heap[s] + l->seq_chars, text, (size_t)len);
}

static struct runtime_proc *fake_proc_of(int major, int minor)
{
	struct runtime_proc *rp = calloc(1, sizeof(*rp));

	rp->pid = getpid();
	assert_int_equal(nd_layout__fill(&rp->l, major, minor, 0, NULL, NULL), 0);
	rp->fn_by_sfi = hashmap__new();
	rp->script_by_addr = hashmap__new();
	rp->code_by_addr = hashmap__new();
	rp->code_by_pc = hashmap__new();
	rp->bc_by_addr = hashmap__new();
	return rp;
}

static struct runtime_proc *fake_proc(void)
{
	return fake_proc_of(11, 3);
}

static void free_proc(struct runtime_proc *rp)
{
	for (size_t i = 0; i < rp->nr_fns; i++) {
		free(rp->fns[i]->name);
		free(rp->fns[i]->file);
		free(rp->fns[i]);
	}
	free(rp->fns);
	for (size_t i = 0; i < rp->nr_scripts; i++)
		free(rp->scripts[i].ends);
	free(rp->scripts);
	hashmap__free(rp->fn_by_sfi);
	hashmap__free(rp->script_by_addr);
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;
	while (hashmap__next(rp->code_by_addr, &it, &key, &len, &v))
		nd_code_free(v);
	hashmap__free(rp->code_by_addr);
	hashmap__free(rp->code_by_pc);
	it = (struct hashmap_iter)HASHMAP_ITER_INIT;
	while (hashmap__next(rp->bc_by_addr, &it, &key, &len, &v))
		nd_code_free(v);
	hashmap__free(rp->bc_by_addr);
	free(rp);
}

static void test_walk(void **state)
{
	struct runtime_proc *rp = fake_proc();
	const struct nd_layout *l = &rp->l;
	/* maps: JSFunction 0, SFI 2, Script 4, ScopeInfo 6, FixedArray 8 */
	make_map(l, 0, l->t_jsfunction_first);
	make_map(l, 2, l->t_sfi);
	make_map(l, 4, l->t_script);
	make_map(l, 6, l->t_scope_info);
	make_string(l, 20, 10, "/srv/app.js");
	make_string(l, 30, 12, "line one\nline two\n");
	make_string(l, 40, 14, "handler");
	/* Script at 50: name, source (no line ends) */
	heap[50] = obj(4);
	heap[50 + l->script_name / 8] = obj(20);
	heap[50 + l->script_source / 8] = obj(30);
	/* SFI at 70: named directly by a string, in the script */
	heap[70] = obj(2);
	heap[70 + l->sfi_name_or_scope_info / 8] = obj(40);
	heap[70 + l->sfi_script_or_debug_info / 8] = obj(50);
	/* JSFunction at 90: shared, code 0 (interpreted) */
	heap[90] = obj(0);
	heap[90 + l->jsf_shared / 8] = obj(70);

	/* the stack, from sp: [0] a return address into the JS frame's caller... built as
	 * frames: JS frame fp at word 8, its caller (an entry frame) fp at word 16 */
	uint64_t stack[32] = { 0 };
	uint64_t sp = (uint64_t)(uintptr_t)stack;
	uint64_t pcs[3] = { 0x7000001000, 0x7000002000, 0x7000003000 };
	struct mapping anon = { .start = 0x7000000000, .end = 0x7000010000, .path = "//anon" };
	const struct mapping *maps[3] = { &anon, &anon, &anon };
	stack[8] = sp + 16 * 8;		/* JS frame: saved fp */
	stack[9] = pcs[1];		/* its return address */
	stack[8 - 1] = obj(100);	/* context: any heap object */
	stack[8 - 2] = obj(90);		/* the JSFunction */
	stack[16] = 0;			/* entry frame */
	stack[17] = pcs[2];
	stack[16 - 1] = (uint64_t)l->ft_entry << 1;	/* its type marker */
	struct rt_native n = { pcs[0], sp, sp + 8 * 8, (const uint8_t *)stack, sizeof(stack),
			       pcs, maps, 3 };
	struct rt_frame f[8];
	int got = nd_walk(rp, &n, f, 8);
	assert_int_equal(got, 1);
	assert_true(f[0].flags & RT_FRAME_ENTRY);
	assert_int_equal(rp->nr_fns, 1);
	assert_string_equal(rp->fns[f[0].id]->name, "handler");
	assert_string_equal(rp->fns[f[0].id]->file, "/srv/app.js");
	assert_int_equal(nd_fn_line(rp, (int32_t)f[0].id, 12), 2);	/* "line two" */
	assert_int_equal(nd_fn_line(rp, (int32_t)f[0].id, 3), 1);

	/* interpreted at bytecode offset 0 of its BytecodeArray (at 200, map at 16), whose
	 * position table (a ByteArray at 220) puts that at source offset 12: line 2 */
	uint8_t *pt = (uint8_t *)&heap[220 + l->fa_data / 8];
	size_t plen = put_vlq(pt, -2);		/* offset 0 (from -1), not a statement */
	plen += put_vlq(pt + plen, (12 + 1) << 1);	/* SourcePosition: offset + 1, shifted */
	heap[220] = obj(18);
	heap[220 + l->fa_length / 8] = (uint64_t)plen << 32;
	heap[200] = obj(16);
	heap[200 + l->fa_length / 8] = (uint64_t)64 << 32;
	heap[200 + l->ba_positions / 8] = obj(220);
	heap[70 + l->sfi_function_data / 8] = obj(200);	/* the function's bytecode */
	stack[8 + l->fp_bytecode_array / 8] = obj(200);
	stack[8 + l->fp_bytecode_offset / 8] = (uint64_t)(l->ba_header - 1) << 32;
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_int_equal(f[0].aux, 2);
	/* the function's bytecode is another BytecodeArray (at 230: the same map): the
	 * frame's slot was left by another frame (one being built), so no line */
	heap[230] = obj(16);
	heap[70 + l->sfi_function_data / 8] = obj(230);
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_string_equal(rp->fns[f[0].id]->name, "handler");
	assert_int_equal(f[0].aux, 0);
	/* its data is something else (baseline code, InterpreterData): the frame's array
	 * may be its own */
	heap[230] = obj(18);
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_int_equal(f[0].aux, 2);
	stack[8 + l->fp_bytecode_array / 8] = stack[8 + l->fp_bytecode_offset / 8] = 0;

	/* a function slot that is no JSFunction: no frame */
	stack[8 - 2] = obj(70);
	assert_int_equal(nd_walk(rp, &n, f, 8), 0);
	/* a file-backed pc is not V8 code: not looked at */
	stack[8 - 2] = obj(90);
	struct mapping file = anon;
	file.path = "/usr/lib/libc.so.6";
	const struct mapping *fmaps[3] = { &file, &file, &file };
	n.maps = fmaps;
	assert_int_equal(nd_walk(rp, &n, f, 8), 0);

	/* random stacks and pcs: whatever they give, never a crash */
	n.maps = maps;
	srand(20);
	for (int round = 0; round < 3000; round++) {
		for (size_t i = 0; i < 32; i++)
			stack[i] = rand() % 3 ? (uint64_t)rand() << 16 | (uint64_t)rand()
					      : (rand() % 2 ? obj((size_t)rand() % 500) : sp + 8 * (size_t)(rand() % 32));
		for (size_t i = 0; i < 3; i++)
			pcs[i] = rand() % 2 ? stack[rand() % 32] : (uint64_t)rand();
		n.bp = stack[rand() % 32];
		got = nd_walk(rp, &n, f, 8);
		assert_true(got >= 0 && got <= 8);
		for (int i = 0; i < got; i++)
			assert_true(f[i].id < rp->nr_fns);
	}
	free_proc(rp);
	(void)state;
}

/* Code space for test_walk_inline_code: 64-aligned, the code objects in its middle. */
static uint8_t space[16384] __attribute__((aligned(64)));

/* A V8 10.2 Code at space + at (map at slot m of heap): instructions after its header,
 * size bytes of them, of kind kind. Returns its tagged address. */
static uint64_t make_code(const struct nd_layout *l, size_t at, size_t m, uint32_t size,
			  uint32_t kind)
{
	uint64_t map = obj(m);

	memset(space + at, 0, (size_t)l->code_header);
	memcpy(space + at, &map, 8);
	memcpy(space + at + l->code_size, &size, 4);
	memcpy(space + at + l->code_flags, &kind, 4);
	return (uint64_t)(uintptr_t)(space + at) + 1;
}

/* V8 10.2 (node 18): a Code's instructions follow its header, and the code of a pc that is
 * not its function's (on-stack replacement) is found by its Code's map in code space. */
static void test_walk_inline_code(void **state)
{
	struct runtime_proc *rp = fake_proc_of(10, 2);
	const struct nd_layout *l = &rp->l;

	make_map(l, 0, l->t_jsfunction_first);
	make_map(l, 2, l->t_sfi);
	make_map(l, 4, l->t_script);
	make_map(l, 6, l->t_code);
	make_string(l, 20, 10, "/srv/loop.js");
	make_string(l, 30, 12, "line one\nline two\n");
	make_string(l, 40, 14, "loop");
	heap[50] = obj(4);
	heap[50 + l->script_name / 8] = obj(20);
	heap[50 + l->script_source / 8] = obj(30);
	heap[70] = obj(2);
	heap[70 + l->sfi_name_or_scope_info / 8] = obj(40);
	heap[70 + l->sfi_script_or_debug_info / 8] = obj(50);
	/* the function's own code at 4096, OSR code at 8192: both TurboFan's */
	uint64_t own = make_code(l, 4096, 6, 256, l->kind_turbofan);
	uint64_t osr = make_code(l, 8192, 6, 512, l->kind_turbofan);
	heap[90] = obj(0);
	heap[90 + l->jsf_shared / 8] = obj(70);
	heap[90 + l->jsf_code / 8] = own;

	uint64_t stack[32] = { 0 };
	uint64_t sp = (uint64_t)(uintptr_t)stack;
	uint64_t pcs[3] = { nd_untag(own) + 128 + 16, 0x7000002000, 0x7000003000 };
	struct mapping anon = { .start = 0, .end = ~0ull, .path = "//anon" };
	const struct mapping *maps[3] = { &anon, &anon, &anon };
	stack[8] = sp + 16 * 8;
	stack[9] = pcs[1];
	stack[8 - 1] = obj(100);
	stack[8 - 2] = obj(90);
	stack[17] = pcs[2];
	stack[16 - 1] = (uint64_t)l->ft_entry << 1;
	struct rt_native n = { pcs[0], sp, sp + 8 * 8, (const uint8_t *)stack, sizeof(stack),
			       pcs, maps, 3 };
	struct rt_frame f[8];

	/* in the function's code: read as optimized code (no positions: no line) */
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_string_equal(rp->fns[f[0].id]->name, "loop");
	assert_int_equal(hashmap__count(rp->code_by_addr), 1);
	void **cs = hashmap__find(rp->code_by_addr, &own, sizeof(own));
	assert_non_null(cs);

	/* its positions: at code offset 0, source offset 12 (line 2) of a function inlined
	 * at offset 3 (line 1) */
	struct nd_code *c = *cs;
	assert_null(c->pc_off);
	assert_null(c->inl_fn);
	c->pc_off = calloc(1, sizeof(*c->pc_off));
	c->pos = calloc(1, sizeof(*c->pos));
	c->pos[0] = (12 + 1) << 1 | 1ull << 31;
	c->nr_pos = 1;
	c->inl_fn = calloc(1, sizeof(*c->inl_fn));
	c->inl_fn[0] = (int32_t)f[0].id;
	c->inl_pos = calloc(1, sizeof(*c->inl_pos));
	c->inl_pos[0] = (3 + 1) << 1;
	c->nr_inl = 1;
	assert_int_equal(nd_walk(rp, &n, f, 8), 2);
	assert_int_equal(f[0].aux, 1);	/* the caller, at the call */
	assert_int_equal(f[1].aux, 2);	/* the inlined one */
	/* an inlining its table does not hold (deoptimization data unread): the offset is
	 * in the inlined function, not the frame's own, so no line rather than line 2 */
	c->nr_inl = 0;
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_int_equal(f[0].aux, 0);
	c->nr_inl = 1;
	assert_int_equal(nd_walk(rp, &n, f, 8), 2);
	/* other code of the same size at the same address (a GC moved it there): its
	 * position table is another, so what was read of the first is not used for it */
	uint64_t table = obj(110);
	memcpy(space + 4096 + l->code_positions, &table, 8);
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_int_equal(f[0].aux, 0);
	cs = hashmap__find(rp->code_by_addr, &own, sizeof(own));
	assert_non_null(cs);
	assert_true(((struct nd_code *)*cs)->positions == table);
	assert_int_equal(((struct nd_code *)*cs)->nr_pos, 0);
	/* in the OSR code: found back from the pc by the Code map */
	pcs[0] = nd_untag(osr) + 128 + 300;
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_non_null(hashmap__find(rp->code_by_addr, &osr, sizeof(osr)));
	void **slot = hashmap__find(rp->code_by_pc, &pcs[0], sizeof(pcs[0]));
	assert_non_null(slot);
	assert_true((uint64_t)(uintptr_t)*slot == osr);
	/* past its end: no code holds it, the frame is still the function's */
	pcs[0] = nd_untag(osr) + 128 + 512 + 64;
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	slot = hashmap__find(rp->code_by_pc, &pcs[0], sizeof(pcs[0]));
	assert_non_null(slot);
	assert_true(*slot == NULL);

	/* another script at the script's address (a GC moved it there): a function of it
	 * gets its lines from its own source, not from what was read at that address */
	int32_t fi = nd_fn_index(rp, obj(70), NULL);
	assert_int_equal(nd_fn_line(rp, fi, 12), 2);
	make_string(l, 120, 16, "a\nb\nc\nd\ne\nf\ng\n");
	heap[50 + l->script_source / 8] = obj(120);
	heap[140] = obj(2);
	heap[140 + l->sfi_name_or_scope_info / 8] = obj(40);
	heap[140 + l->sfi_script_or_debug_info / 8] = obj(50);
	fi = nd_fn_index(rp, obj(140), NULL);
	assert_true(fi >= 0);
	assert_int_equal(nd_fn_line(rp, fi, 12), 7);

	/* the pc in code whose deoptimization data names another function (at 150): the
	 * frame's function slot is not the code's yet (a prologue pushes it after setting
	 * up the frame), and the frame is the code's function */
	make_string(l, 180, 14, "other");
	heap[150] = obj(2);
	heap[150 + l->sfi_name_or_scope_info / 8] = obj(180);
	heap[150 + l->sfi_script_or_debug_info / 8] = obj(50);
	heap[160 + l->fa_length / 8] = (uint64_t)16 << 32;
	heap[160 + l->fa_data / 8 + (size_t)l->deopt_sfi] = obj(150);
	uint64_t deopt = obj(160);
	memcpy(space + 4096 + l->code_deopt_data, &deopt, 8);
	pcs[0] = nd_untag(own) + 128 + 16;
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_string_equal(rp->fns[f[0].id]->name, "other");
	/* the code's own function: the frame's */
	heap[160 + l->fa_data / 8 + (size_t)l->deopt_sfi] = obj(70);
	memcpy(space + 4096 + l->code_positions, &(uint64_t){ 0 }, 8);	/* read again */
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_string_equal(rp->fns[f[0].id]->name, "loop");
	/* what was read of it is stale (a GC moved the function since): the data now */
	cs = hashmap__find(rp->code_by_addr, &own, sizeof(own));
	((struct nd_code *)*cs)->sfi = obj(150);
	assert_int_equal(nd_walk(rp, &n, f, 8), 1);
	assert_string_equal(rp->fns[f[0].id]->name, "loop");
	assert_true(((struct nd_code *)*cs)->sfi == obj(70));
	free_proc(rp);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_positions),
		cmocka_unit_test(test_baseline_table),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_walk_inline_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
