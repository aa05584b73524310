/* Exact unwinding of frameless frames: Go functions by their .gopclntab SP deltas (pcsp)
 * and, in smart mode, the leaf of a C program built with frame pointers by its CFI.
 *
 * The pcsp rows of Go binaries built here by each Go toolchain installed (Debian's 1.19
 * and the newest on PATH; skipped when there is none) are checked against the toolchain's
 * own view of each instruction, `go tool objdump`: from the entry of every function
 * compiled from Go, the pushes, pops and SP adjustments it disassembles give the SP delta
 * at each pc until the first return or jump, and the row there must say CFA = rsp +
 * delta + 8. Stripped and
 * not stripped builds give the same rows. Truncated and corrupted tables never crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "symbols/elf.h"
#include "symbols/gofunc.h"
#include "symbols/goinline.h"
#include "test_unwind_util.h"
#include "unwind/cache.h"
#include "unwind/gotab.h"
#include "unwind/unwind.h"
#include "util/io.h"

static char workdir[] = "/tmp/kiln-unwind-go.XXXXXX";

static int setup(void **state)
{
	return mkdtemp(workdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
	return system(cmd);
}

/* The Go rows of one binary, as unwind_go_rows() gives them. */
struct go_rows {
	struct { uint64_t lo, hi; size_t first, n; } *fn;
	size_t nfn;
	struct { uint64_t pc; struct unwind_rule r; } *row;
	size_t nrow;
};

static void collect(void *ctx, uint64_t lo, uint64_t hi, const struct fde_rows *rv)
{
	struct go_rows *g = ctx;

	g->fn = xrealloc(g->fn, (g->nfn + 1) * sizeof(*g->fn));
	g->fn[g->nfn].lo = lo, g->fn[g->nfn].hi = hi;
	g->fn[g->nfn].first = g->nrow, g->fn[g->nfn].n = rv->n;
	g->nfn++;
	g->row = xrealloc(g->row, (g->nrow + rv->n) * sizeof(*g->row));
	for (size_t i = 0; i < rv->n; i++) {
		g->row[g->nrow].pc = rv->v[i].pc;	/* base 0: absolute */
		g->row[g->nrow].r = rv->v[i].rule;
		g->nrow++;
	}
}

static int load_rows(const char *path, struct go_rows *g)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	int n;

	memset(g, 0, sizeof(*g));
	elf_version(EV_CURRENT);
	assert_true(fd >= 0);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	assert_true(unwind_go_binary(elf));
	n = unwind_go_rows(elf, 0, collect, g);
	elf_end(elf);
	close(fd);
	return n;
}

/* The rule at pc, or NULL. */
static const struct unwind_rule *rule_at(const struct go_rows *g, uint64_t pc)
{
	size_t a = 0, b = g->nfn;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (g->fn[mid].lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || pc >= g->fn[a - 1].hi)
		return NULL;
	const struct unwind_rule *r = NULL;

	for (size_t i = g->fn[a - 1].first; i < g->fn[a - 1].first + g->fn[a - 1].n; i++)
		if (g->row[i].pc <= pc)
			r = &g->row[i].r;
	return r;
}

static void rows_free(struct go_rows *g)
{
	free(g->fn);
	free(g->row);
}

/* Builds tests/workloads/goleaf with go into workdir/name (stripped when strip). */
static bool build_go(const char *go, const char *name, bool strip)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cd tests/workloads/goleaf && GOCACHE=$PWD/../../../build/gocache "
		 "GOFLAGS=-mod=mod GOTOOLCHAIN=local %s build %s -o %s/%s . >/dev/null 2>&1", go,
		 strip ? "-ldflags='-s -w'" : "", workdir, name);
	return system(cmd) == 0;
}

/* The SP change of one disassembled instruction: 0 when none, INT64_MIN when SP is
 * written in a way this oracle does not follow. *stop: it ends the straight-line code
 * from the entry (a return or a jump). */
static int64_t sp_change(const char *ins, bool *stop)
{
	unsigned long long imm;
	int end = 0;

	*stop = false;
	if (!strncmp(ins, "PUSHQ ", 6) || !strncmp(ins, "PUSHFQ", 6))
		return 8;
	if (!strncmp(ins, "POPQ ", 5) || !strncmp(ins, "POPFQ", 5))
		return -8;
	if (sscanf(ins, "SUBQ $0x%llx, SP%n", &imm, &end) == 1 && end && !ins[end])
		return (int64_t)imm;
	if (sscanf(ins, "ADDQ $0x%llx, SP%n", &imm, &end) == 1 && end && !ins[end])
		return -(int64_t)imm;
	if (!strncmp(ins, "RET", 3) || !strncmp(ins, "JMP ", 4) || !strncmp(ins, "UD2", 3) ||
	    !strncmp(ins, "INT $0x3", 8) || !strncmp(ins, "CALL runtime.throw", 18) ||
	    !strncmp(ins, "CALL runtime.fatal", 18) || !strncmp(ins, "CALL runtime.panic", 18) ||
	    !strncmp(ins, "CALL runtime.gopanic", 20) || !strncmp(ins, "CALL runtime.goPanic", 20)) {
		/* what follows a call that does not return is reached from elsewhere */
		*stop = true;
		return 0;
	}
	size_t len = strlen(ins);

	while (len && (ins[len - 1] == ' ' || ins[len - 1] == '\t'))
		len--;
	if (len >= 4 && !strncmp(ins + len - 4, ", SP", 4))
		return INT64_MIN;
	return 0;
}

/* Splits line at runs of tabs and newlines into at most max fields. */
static int split_tabs(char *line, char **fields, int max)
{
	int n = 0;

	for (char *p = line; *p && n < max;) {
		while (*p == '\t' || *p == '\n')
			*p++ = '\0';
		if (!*p)
			break;
		fields[n++] = p;
		while (*p && *p != '\t' && *p != '\n')
			p++;
	}
	return n;
}

/* Checks g against `go tool objdump` of path. Returns the number of pcs compared. */
static size_t check_objdump(const char *go, const char *path, const struct go_rows *g)
{
	char cmd[1024], line[4096];
	FILE *f;
	size_t compared = 0, bad = 0, funcs = 0;
	int64_t delta = 0;
	bool live = false;

	snprintf(cmd, sizeof(cmd), "GOTOOLCHAIN=local %s tool objdump %s", go, path);
	assert_non_null(f = popen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		char *fl[6];
		bool stop;

		if (!strncmp(line, "TEXT ", 5)) {
			size_t len = strcspn(line, "\n");

			delta = 0;
			funcs++;
			/* Go code; assembly may hold AVX-512 and data objdump cannot decode */
			live = len < 2 || strncmp(line + len - 2, ".s", 2) != 0;
			continue;
		}
		/* "  file:line", address, bytes, instruction */
		if (!live || split_tabs(line, fl, 6) < 4 || strncmp(fl[1], "0x", 2) != 0)
			continue;
		uint64_t pc = strtoull(fl[1], NULL, 16);
		const struct unwind_rule *r = rule_at(g, pc);

		if (!strncmp(fl[3], "CALL runtime.morestack", 22) || fl[3][0] == '?') {
			live = false;	/* the stub after the body, reached from the prologue */
			continue;
		}

		if (!r || r->cfa != CFA_RSP) {
			live = false;	/* a top frame, an SP-writing function */
			continue;
		}
		compared++;
		if (r->off != delta + 8 && bad++ < 10)
			print_message("%s: %#" PRIx64 " %s: pcsp row says %d, objdump %" PRId64 "\n",
				      path, pc, fl[3], r->off - 8, delta);
		int64_t d = sp_change(fl[3], &stop);

		if (d == INT64_MIN || stop)
			live = false;
		else
			delta += d;
	}
	pclose(f);
	assert_true(funcs > 100);
	assert_int_equal(bad, 0);
	return compared;
}

static void test_pcsp(void **state)
{
	static const char *const gos[] = { "/usr/lib/go-1.19/bin/go", "go" };
	int tested = 0;

	for (size_t i = 0; i < sizeof(gos) / sizeof(gos[0]); i++) {
		char plain[64], stripped[64], full[512], fulls[512];

		snprintf(plain, sizeof(plain), "goleaf%zu", i);
		snprintf(stripped, sizeof(stripped), "goleaf%zu_s", i);
		if (!build_go(gos[i], plain, false) || !build_go(gos[i], stripped, true))
			continue;
		snprintf(full, sizeof(full), "%s/%s", workdir, plain);
		snprintf(fulls, sizeof(fulls), "%s/%s", workdir, stripped);
		struct go_rows g, gs;
		int n = load_rows(full, &g), ns = load_rows(fulls, &gs);

		assert_true(n > 500);
		assert_int_equal(n, ns);	/* stripping changes nothing the rows use */
		assert_int_equal(g.nrow, gs.nrow);
		for (size_t k = 0; k < g.nrow; k++)
			assert_memory_equal(&g.row[k], &gs.row[k], sizeof(g.row[k]));
		size_t compared = check_objdump(gos[i], full, &g);

		/* the inline tree names main.mixer's two inlined callees, stripped or not */
		for (int k = 0; k < 2; k++) {
			struct elf_symbols es;
			int fd = open(k ? fulls : full, O_RDONLY);
			size_t a = 0, b = 0;

			elf_symbols_init(&es);
			assert_int_equal(elf_symbols__load(&es, fd, "", k ? fulls : full, NULL, 0), 0);
			close(fd);
			for (size_t e = 0; e < es.inl.nr; e++) {
				const char *nm = es.inl.names + es.inl.syms[e].name;
				a += !strcmp(nm, "main.inlA\n");
				b += !strcmp(nm, "main.inlB\n");
			}
			assert_true(a >= 1 && b >= 1);
			elf_symbols_release(&es);
		}

		print_message("%s: %d functions, %zu rows, %zu pcs checked against objdump\n",
			      gos[i], n, g.nrow, compared);
		assert_true(compared > 5000);
		rows_free(&g);
		rows_free(&gs);
		tested++;
	}
	if (!tested)
		skip();
}

/* Deterministic bytes for the corruption tests. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct bytes {
	const uint8_t *p;
	size_t n;
	uint64_t vaddr;
};

static const uint8_t *view_bytes(void *ctx, uint64_t vaddr, size_t len)
{
	struct bytes *b = ctx;

	if (vaddr < b->vaddr || vaddr - b->vaddr > b->n || b->n - (vaddr - b->vaddr) < len)
		return NULL;
	return b->p + (vaddr - b->vaddr);
}

/* Reads everything a table offers: functions, lookups, pc-value tables. */
static void walk_table(const uint8_t *data, size_t size, uint64_t *seed)
{
	struct gofunc_tab t;

	if (gofunc_tab_init(&t, data, size, 0x401000) != 0)
		return;
	for (uint64_t i = 0; i < t.nfunc && i < 4000; i++) {
		struct gofunc f;
		struct gopcvalue it;
		uint64_t lo, hi, fd;
		int32_t v;

		if (gofunc_tab__func(&t, i, &f) != 0)
			continue;
		assert_non_null(f.name);
		if (gopcvalue_init(&it, &t, &f, f.pcsp))
			while (gopcvalue_next(&it, &lo, &hi, &v))
				assert_true(lo >= f.entry && hi <= f.end && lo <= hi);
		(void)gofunc_tab__value(&t, &f, gofunc_tab__pcdata(&t, &f, GOFUNC_PCDATA_INLTREE),
					f.entry + rnd(seed) % 64, &v);
		(void)gofunc_tab__funcdata(&t, &f, gofunc_tab__inltree_funcdata(&t), &fd);
	}
	for (int k = 0; k < 64; k++)
		(void)gofunc_tab__find(&t, t.text_start + rnd(seed) % (1u << 22));
	struct symtab inl;	/* inline trees read through the (corrupt) table itself */
	symtab_init(&inl);
	(void)goinline__load(data, size, 0x401000, 0x401000, view_bytes,
			     &(struct bytes){ data, size, 0x401000 }, &inl);
	symtab_release(&inl);
}

static void count_fn(void *ctx, uint64_t lo, uint64_t hi, const struct fde_rows *rv)
{
	assert_true(lo < hi && rv->n >= 1);
	(*(size_t *)ctx)++;
}

/* Truncated and corrupted pclntabs, alone and inside the ELF image: errors, no crash. */
static void test_corrupt(void **state)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/goleaf_corrupt", workdir);
	if (!build_go("go", "goleaf_corrupt", true))
		skip();
	int fd = open(path, O_RDONLY);
	struct stat st;

	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	uint8_t *img = xmalloc((size_t)st.st_size), *copy = xmalloc((size_t)st.st_size);

	assert_int_equal(io__pread_all(fd, img, (size_t)st.st_size, 0), 0);
	close(fd);
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)img, (size_t)st.st_size);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx, off = 0, len = 0;

	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".gopclntab"))
			off = sh.sh_offset, len = sh.sh_size;
	elf_end(elf);
	assert_true(len > 4096);

	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t *tab = xmalloc(len);

	for (size_t cut = 0; cut <= len; cut += len / 97 + 1) {	/* truncated */
		uint8_t *t = xmalloc(cut + 1);
		memcpy(t, img + off, cut);
		walk_table(t, cut, &seed);
		free(t);
	}
	for (int round = 0; round < 200; round++) {	/* flipped bytes */
		memcpy(tab, img + off, len);
		int flips = 1 + (int)(rnd(&seed) % 64);
		for (int k = 0; k < flips; k++) {
			/* mostly the header and the function table, where offsets live */
			size_t at = rnd(&seed) % (round % 2 ? len : 4096);
			tab[at] ^= (uint8_t)(1 + rnd(&seed) % 255);
		}
		walk_table(tab, len, &seed);
	}
	size_t good = 0, n;
	for (int round = 0; round < 20; round++) {	/* the unwinder's path, image and all */
		memcpy(copy, img, (size_t)st.st_size);
		for (int k = 0; round && k < 32; k++)
			copy[off + rnd(&seed) % 2048] ^= (uint8_t)(1 + rnd(&seed) % 255);
		assert_non_null(elf = elf_memory((char *)copy, (size_t)st.st_size));
		n = 0;
		(void)unwind_go_rows(elf, 0x400000, count_fn, &n);
		if (round == 0)
			good = n;
		elf_end(elf);
	}
	assert_true(good > 500);
	free(tab);
	free(copy);
	free(img);
}

/* A leaf that has no frame yet (at its entry, before push rbp) in a frame-pointer binary:
 * smart mode steps it by its CFI and keeps its caller. The sample is made from a capture:
 * as if the capture function had just called leaf_one (ip at its entry, the return
 * address pushed, rbp still the caller's), where a frame-pointer walk would skip the
 * caller. (tests/e2e/unwind_fp_leaf.sh samples a leaf built with no frame at all.) */
static void test_fp_leaf(void **state)
{
	char dir[300], exe[400];
	snprintf(dir, sizeof(dir), "%s/fp", workdir);
	snprintf(exe, sizeof(exe), "%s/unwind_deep", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	/* with enough functions that keep frames to be recognised as a frame-pointer build */
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd %s && for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do "
		 "echo \"__attribute__((noinline)) long f$i(long x) { return f(x + $i) + 1; }\"; "
		 "done > more.c && sed -i '1i __attribute__((noinline)) long f(long x) "
		 "{ __asm__ volatile(\\\"\\\"); return x * 3; }' more.c", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer "
		 "-fno-optimize-sibling-calls -o %s tests/workloads/unwind_deep.c %s/more.c", exe, dir);
	assert_int_equal(system(cmd), 0);
	struct test_capture c;
	struct test_maps tm;

	assert_int_equal(test_capture_mode(&c, exe, "capture"), 0);
	assert_true(test_maps_load(&tm, c.pid) > 0);
	struct proc_ref p = { c.pid, c.pid };
	const struct mapping *m = test_maps_find(&tm, c.s.regs.ip);

	assert_non_null(m);
	/* the binary is recognised as built with frame pointers */
	struct unwind_cache *cache = unwind_cache__new(0, false);
	const struct unwind_table *t = unwind_cache__get(cache, &p, m);
	assert_non_null(t);
	print_message("%s: %zu of %zu FDEs sampled set up an rbp frame\n", exe, t->fp_fdes,
		      t->nfdes);
	assert_true(t->fp_built);
	unwind_cache__free(cache);

	/* leaf_one's entry, from the symbol table, as a run-time address */
	int fd = open(exe, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t leaf = 0;

	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    !strcmp(n, "leaf_one"))
				leaf = s.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(leaf != 0);
	leaf += m->start - m->pgoff;	/* PIE: text's vaddr equals its file offset */

	struct unwind_sample s = c.s;
	uint8_t *stack = xmalloc(c.s.stack_len + 8);
	memcpy(stack, &c.s.regs.ip, 8);
	memcpy(stack + 8, c.s.stack, c.s.stack_len);
	s.stack = stack;
	s.stack_len = c.s.stack_len + 8;
	s.regs.sp = c.s.regs.sp - 8;
	s.regs.ip = leaf;

	for (int mode = 0; mode < 2; mode++) {
		struct unwinder *u = unwinder__new(mode ? UNWIND_DWARF : UNWIND_SMART, 0);
		uint64_t pcs[256];
		bool truncated;
		int n = unwinder__unwind(u, &p, &s, test_maps_find, &tm, pcs, 256, &truncated);

		assert_int_equal(n, c.noracle + 1);
		assert_false(truncated);
		assert_int_equal(pcs[0], leaf);
		assert_int_equal(pcs[1], c.s.regs.ip);	/* the caller, kept */
		for (int i = 2; i < n; i++)
			assert_int_equal(pcs[i], c.oracle[i - 1]);
		unwinder__free(u);
	}
	free(stack);
	test_maps_release(&tm);
	test_capture_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcsp),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_fp_leaf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
