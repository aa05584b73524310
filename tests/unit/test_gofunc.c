/* The pclntab layouts no toolchain on this machine writes (Go 1.13-1.15's 1.2 layout,
 * 1.16-1.17), next to 1.18 and 1.20+, from tables built here to the layouts the runtime
 * of each version reads (runtime/symtab.go, runtime2.go): the header, the function
 * table, each _func's fields, pcdata and funcdata slots, and pc-value decoding. The real
 * 1.19+ tables are checked against `go tool objdump` in test_unwind_go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/gofunc.h"

#define TEXT 0x401000ull
#define NFUNC 3

struct tab {
	uint8_t b[4096];
	size_t n;
};

static size_t put(struct tab *t, uint64_t v, unsigned size)
{
	size_t at = t->n;

	for (unsigned i = 0; i < size; i++)
		t->b[t->n++] = (uint8_t)(v >> (8 * i));
	return at;
}

static void put_at(struct tab *t, size_t at, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		t->b[at + i] = (uint8_t)(v >> (8 * i));
}

static void align(struct tab *t, size_t a)
{
	while (t->n % a)
		t->b[t->n++] = 0;
}

/* pcsp of every function: [0,4) 0, [4,8) 8, [8,0x88) 32, [0x88,0x100) 0 */
static const uint8_t pcsp[] = { 2, 4, 16, 4, 48, 0x80, 0x01, 63, 0x78, 0 };
/* inline index: [0,0x40) -1, [0x40,0x100) 0 */
static const uint8_t inlidx[] = { 0, 0x40, 2, 0xc0, 0x01, 0 };

/* Builds a table of version v (113, 116, 118, 120). Offsets of the pcsp and inline
 * tables (relative to where the version measures them) go to *sp_off and *inl_off. */
static void build(struct tab *t, unsigned v, uint32_t *sp_off, uint32_t *inl_off)
{
	static const uint32_t magic[] = { 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1 };
	unsigned vi = v == 113 ? 0 : v == 116 ? 1 : v == 118 ? 2 : 3;
	size_t hdr_names = 0, hdr_pctab = 0, hdr_pcln = 0, ftab, names, pctab, funcs[NFUNC];
	static const char *const fn[NFUNC] = { "main.a", "main.b", "runtime.goexit" };

	memset(t, 0, sizeof(*t));
	put(t, magic[vi], 4);
	put(t, 0, 2);
	t->b[t->n++] = 1;	/* quantum */
	t->b[t->n++] = 8;	/* ptrsize */
	put(t, NFUNC, 8);
	if (v >= 116) {
		put(t, 0, 8);	/* nfiles */
		if (v >= 118)
			put(t, TEXT, 8);
		hdr_names = put(t, 0, 8);
		put(t, 0, 8);	/* cu */
		put(t, 0, 8);	/* filetab */
		hdr_pctab = put(t, 0, 8);
		hdr_pcln = put(t, 0, 8);
	}
	/* 1.2: the functab follows nfunc; else wherever pcln says */
	align(t, 8);
	ftab = t->n;
	if (v >= 116)
		put_at(t, hdr_pcln, ftab, 8);
	unsigned fs = v >= 118 ? 4 : 8;
	size_t slots = t->n;
	t->n += (NFUNC + 1) * 2 * fs;
	names = t->n;
	if (v >= 116)
		put_at(t, hdr_names, names, 8);
	size_t nameoff[NFUNC];
	for (int i = 0; i < NFUNC; i++) {
		nameoff[i] = t->n - (v >= 116 ? names : 0);
		memcpy(t->b + t->n, fn[i], strlen(fn[i]) + 1);
		t->n += strlen(fn[i]) + 1;
	}
	pctab = t->n;
	if (v >= 116)
		put_at(t, hdr_pctab, pctab, 8);
	t->b[t->n++] = 0;	/* offset 0 means "no table" */
	*sp_off = (uint32_t)(t->n - (v >= 116 ? pctab : 0));
	memcpy(t->b + t->n, pcsp, sizeof(pcsp));
	t->n += sizeof(pcsp);
	*inl_off = (uint32_t)(t->n - (v >= 116 ? pctab : 0));
	memcpy(t->b + t->n, inlidx, sizeof(inlidx));
	t->n += sizeof(inlidx);
	for (int i = 0; i < NFUNC; i++) {
		align(t, 8);
		funcs[i] = t->n;
		put(t, v >= 118 ? 0x100u * i : TEXT + 0x100u * i, fs);	/* entry */
		put(t, nameoff[i], 4);
		put(t, 0, 4);	/* args */
		put(t, 0, 4);	/* deferreturn */
		put(t, *sp_off, 4);
		put(t, 0, 4);	/* pcfile */
		put(t, 0, 4);	/* pcln */
		put(t, 3, 4);	/* npcdata */
		if (v >= 116)
			put(t, 0, 4);	/* cuOffset */
		if (v >= 120)
			put(t, 7, 4);	/* startLine */
		t->b[t->n++] = 0;	/* funcID */
		t->b[t->n++] = v >= 116 && i == 2 ? GOFUNC_TOPFRAME : 0;	/* flag (1.17+) */
		t->b[t->n++] = 0;
		t->b[t->n++] = 5;	/* nfuncdata */
		put(t, 0, 4);
		put(t, 0, 4);
		put(t, *inl_off, 4);	/* pcdata[InlTreeIndex] */
		if (v < 118)
			align(t, 8);
		for (int k = 0; k < 5; k++)
			put(t, 0x1000u * (k + 1) + i, fs);
	}
	for (int i = 0; i <= NFUNC; i++) {
		uint64_t pc = v >= 118 ? 0x100u * i : TEXT + 0x100u * i;
		uint64_t off = i < NFUNC ? funcs[i] - (v == 113 ? 0 : ftab) : 0;

		put_at(t, slots + (size_t)i * 2 * fs, pc, fs);
		put_at(t, slots + (size_t)i * 2 * fs + fs, off, fs);
	}
	assert_true(t->n < sizeof(t->b));
}

static void check_version(unsigned v)
{
	struct tab t;
	struct gofunc_tab g;
	uint32_t sp_off, inl_off;
	static const struct { uint64_t pc; int32_t sp; } want[] = {
		{ 0, 0 }, { 3, 0 }, { 4, 8 }, { 7, 8 }, { 8, 32 }, { 0x87, 32 }, { 0x88, 0 },
		{ 0xff, 0 },
	};

	build(&t, v, &sp_off, &inl_off);
	assert_int_equal(gofunc_tab_init(&g, t.b, t.n, v >= 118 ? 0 : 0x999), 0);
	assert_int_equal(g.version, v);
	assert_int_equal(g.nfunc, NFUNC);
	assert_int_equal(g.end_pc, TEXT + 0x100 * NFUNC);
	for (uint64_t i = 0; i < NFUNC; i++) {
		struct gofunc f;
		int32_t val;
		uint64_t fd;

		assert_int_equal(gofunc_tab__func(&g, i, &f), 0);
		assert_int_equal(f.entry, TEXT + 0x100 * i);
		assert_int_equal(f.end, TEXT + 0x100 * (i + 1));
		assert_string_equal(f.name, i == 0 ? "main.a" : i == 1 ? "main.b" : "runtime.goexit");
		assert_int_equal(f.pcsp, sp_off);
		assert_int_equal(f.npcdata, 3);
		assert_int_equal(f.nfuncdata, 5);
		assert_int_equal(f.flag, v >= 116 && i == 2 ? GOFUNC_TOPFRAME : 0);
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			assert_int_equal(gofunc_tab__value(&g, &f, f.pcsp, f.entry + want[k].pc, &val), 0);
			assert_int_equal(val, want[k].sp);
		}
		assert_int_equal(gofunc_tab__value(&g, &f, f.pcsp, f.end, &val), -ENOENT);
		assert_int_equal(gofunc_tab__pcdata(&g, &f, GOFUNC_PCDATA_INLTREE), inl_off);
		assert_int_equal(gofunc_tab__value(&g, &f, inl_off, f.entry + 0x3f, &val), 0);
		assert_int_equal(val, -1);
		assert_int_equal(gofunc_tab__value(&g, &f, inl_off, f.entry + 0x40, &val), 0);
		assert_int_equal(val, 0);
		assert_true(gofunc_tab__funcdata(&g, &f, gofunc_tab__inltree_funcdata(&g), &fd));
		assert_int_equal(fd, 0x1000u * (gofunc_tab__inltree_funcdata(&g) + 1) + i);
		assert_false(gofunc_tab__funcdata(&g, &f, 5, &fd));
		assert_int_equal(gofunc_tab__find(&g, f.entry + 0x80), (int64_t)i);
	}
	assert_int_equal(gofunc_tab__find(&g, TEXT - 1), -1);
	assert_int_equal(gofunc_tab__find(&g, TEXT + 0x100 * NFUNC), -1);
	/* every prefix of the table: an error or a partial view, never a read past it */
	for (size_t cut = 0; cut < t.n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, t.b, cut);
		if (gofunc_tab_init(&g, copy, cut, 0) == 0)
			for (uint64_t i = 0; i < g.nfunc; i++) {
				struct gofunc f;
				int32_t val;

				if (gofunc_tab__func(&g, i, &f) == 0)
					(void)gofunc_tab__value(&g, &f, f.pcsp, f.entry + 9, &val);
			}
		free(copy);
	}
}

static void test_go113(void **state) { check_version(113); }
static void test_go116(void **state) { check_version(116); }
static void test_go118(void **state) { check_version(118); }
static void test_go120(void **state) { check_version(120); }

/* Not a pclntab: wrong magic, pointer size, padding. */
static void test_reject(void **state)
{
	struct tab t;
	struct gofunc_tab g;
	uint32_t a, b;

	build(&t, 120, &a, &b);
	t.b[7] = 4;
	assert_int_equal(gofunc_tab_init(&g, t.b, t.n, 0), -EINVAL);
	t.b[7] = 8;
	t.b[4] = 1;
	assert_int_equal(gofunc_tab_init(&g, t.b, t.n, 0), -EINVAL);
	t.b[4] = 0;
	t.b[0] = 0xf7;
	assert_int_equal(gofunc_tab_init(&g, t.b, t.n, 0), -EINVAL);
	assert_int_equal(gofunc_tab_init(&g, NULL, 0, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go113), cmocka_unit_test(test_go116),
		cmocka_unit_test(test_go118), cmocka_unit_test(test_go120),
		cmocka_unit_test(test_reject),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
