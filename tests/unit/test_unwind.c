/* The native unwinder on real stacks: a -O2 -fomit-frame-pointer program captures its own
 * registers and stack 30 frames deep, and the walk must return exactly the addresses
 * that glibc's backtrace() (libgcc's CFI unwinder) found at the same point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdlib.h>

#include "test_unwind_util.h"
#include "unwind/cache.h"
#include "unwind/unwind.h"

static char workdir[] = "/tmp/kiln-unwind-test.XXXXXX";
static char exe_nofp[256], exe_fp[256], exe_dbg[256];

static int setup(void **state)
{
	if (!mkdtemp(workdir))
		return -1;
	snprintf(exe_nofp, sizeof(exe_nofp), "%s/unwind_deep", workdir);
	if (test_build_workload(workdir, "unwind_deep", "-O2 -fomit-frame-pointer"))
		return -1;
	char dir_fp[300];
	snprintf(dir_fp, sizeof(dir_fp), "%s/fp", workdir);
	snprintf(exe_fp, sizeof(exe_fp), "%s/fp/unwind_deep", workdir);
	if (mkdir(dir_fp, 0700) || test_build_workload(dir_fp, "unwind_deep",
						      "-O2 -fno-omit-frame-pointer"))
		return -1;
	/* CFI only in .debug_frame, moved to a separate file named by .gnu_debuglink */
	char cmd[1024];
	snprintf(exe_dbg, sizeof(exe_dbg), "%s/dbg/unwind_deep", workdir);
	snprintf(cmd, sizeof(cmd), "d=%s/dbg && mkdir $d && cc -O2 -fomit-frame-pointer -g "
		 "-fno-asynchronous-unwind-tables -fno-unwind-tables -o $d/unwind_deep "
		 "tests/workloads/unwind_deep.c && cd $d && "
		 "objcopy --only-keep-debug unwind_deep unwind_deep.debug && strip -g unwind_deep && "
		 "objcopy --add-gnu-debuglink=unwind_deep.debug unwind_deep", workdir);
	if (system(cmd))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
	return system(cmd);
}

/* Unwinds a capture of exe in mode; checks the result against backtrace(). */
static void check_capture_as(const char *exe, enum unwind_mode mode, const char *how)
{
	struct test_capture c;
	struct test_maps tm;
	struct unwinder *u = unwinder__new(mode, 0);
	uint64_t pcs[256];
	bool truncated;

	assert_int_equal(test_capture_mode(&c, exe, how), 0);
	assert_true(test_maps_load(&tm, c.pid) > 0);
	struct proc_ref p = { c.pid, c.pid };
	int n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);

	assert_true(c.noracle >= 30 + 4);	/* capture, rec x30, run... main, libc, _start */
	if (n != c.noracle)
		for (int i = 0; i < n || i < c.noracle; i++)
			print_message("%2d %#" PRIx64 " %#" PRIx64 "\n", i, i < n ? pcs[i] : 0,
				      i < c.noracle ? c.oracle[i] : 0);
	assert_int_equal(n, c.noracle);
	assert_false(truncated);
	assert_int_equal(pcs[0], c.s.regs.ip);
	for (int i = 1; i < n; i++)
		assert_int_equal(pcs[i], c.oracle[i]);

	/* Copies that end early: unwound as far as they go, a prefix of the truth, and
	 * marked truncated. */
	size_t full = c.s.stack_len;
	bool partial = false;
	for (size_t len = 0; len <= full; len += 40) {
		c.s.stack_len = len;
		n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);
		assert_true(n >= 1 && n <= c.noracle);
		assert_true(truncated == (n < c.noracle));
		for (int i = 1; i < n; i++)
			assert_int_equal(pcs[i], c.oracle[i]);
		partial |= n > 10 && n < c.noracle;
	}
	assert_true(partial);
	c.s.stack_len = full;

	/* max frames: stops there, truncated */
	c.s.stack_len = c.s.stack_len ? c.s.stack_len : 1;
	n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 5, &truncated);
	assert_true(n <= 5);
	assert_true(truncated);
	assert_true(unwinder__memory(u) > 0);
	unwinder__free(u);
	test_maps_release(&tm);
	test_capture_release(&c);
}

static void check_capture(const char *exe, enum unwind_mode mode)
{
	check_capture_as(exe, mode, "capture");
}

/* capture <- handler <- __restore_rt <- (interrupted) raise <- rec x30 <- main: the
 * signal frame's CFI is glibc's DW_CFA_expression rules over the kernel's sigcontext. */
static void test_signal(void **state)
{
	check_capture_as(exe_nofp, UNWIND_DWARF, "capture-signal");
	check_capture_as(exe_nofp, UNWIND_SMART, "capture-signal");
	check_capture_as(exe_fp, UNWIND_SMART, "capture-signal");
}

static void test_nofp_dwarf(void **state)
{
	check_capture(exe_nofp, UNWIND_DWARF);
}

static void test_nofp_smart(void **state)
{
	check_capture(exe_nofp, UNWIND_SMART);
}

static void test_fp_dwarf(void **state)
{
	check_capture(exe_fp, UNWIND_DWARF);
}

/* In smart mode a frame-pointer binary is walked by frame pointers: the chain must still
 * reach main through libc (whose frames need CFI). */
static void test_fp_smart(void **state)
{
	check_capture(exe_fp, UNWIND_SMART);
}

/* The [lo, hi) vaddrs of function name in path's .symtab. */
static void symtab_range(const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	*lo = *hi = 0;
	elf_version(EV_CURRENT);
	assert_true(fd >= 0);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    (n = elf_strptr(elf, sh.sh_link, s.st_name)) && strcmp(n, name) == 0) {
				*lo = s.st_value;
				*hi = s.st_value + s.st_size;
			}
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(*hi > *lo);
}

/* A binary whose CFI is only in its separate debug file: found through .gnu_debuglink,
 * checked by function names from the debug file's symbol table (backtrace() cannot
 * unwind it: it reads only .eh_frame). Without the debug file, dwarf mode stops. */
static void test_debuglink(void **state)
{
	struct test_capture c;
	struct test_maps tm;
	uint64_t pcs[256], rec_lo, rec_hi, main_lo, main_hi;
	bool truncated;
	char debug[300], moved[300];

	snprintf(debug, sizeof(debug), "%s.debug", exe_dbg);
	snprintf(moved, sizeof(moved), "%s.moved", exe_dbg);
	symtab_range(debug, "rec", &rec_lo, &rec_hi);
	symtab_range(debug, "main", &main_lo, &main_hi);
	for (int mode = UNWIND_DWARF; mode <= UNWIND_SMART; mode++) {
		struct unwinder *u = unwinder__new(mode, 0);

		assert_int_equal(test_capture_run(&c, exe_dbg), 0);
		assert_true(test_maps_load(&tm, c.pid) > 0);
		struct proc_ref p = { c.pid, c.pid };
		int n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);
		const struct mapping *m = test_maps_find(&tm, pcs[1]);

		assert_non_null(m);
		/* the text is mapped at its own file offset: vaddr == file offset here */
		uint64_t bias = m->start - m->pgoff;
		assert_int_equal(n, 35);	/* capture, rec x30, main, libc x2, _start */
		assert_false(truncated);
		for (int i = 1; i <= 30; i++)
			assert_true(pcs[i] - 1 - bias >= rec_lo && pcs[i] - 1 - bias < rec_hi);
		assert_true(pcs[31] - 1 - bias >= main_lo && pcs[31] - 1 - bias < main_hi);
		unwinder__free(u);
		test_maps_release(&tm);
		test_capture_release(&c);
	}
	assert_int_equal(rename(debug, moved), 0);
	struct unwinder *u = unwinder__new(UNWIND_DWARF, 0);
	assert_int_equal(test_capture_run(&c, exe_dbg), 0);
	assert_true(test_maps_load(&tm, c.pid) > 0);
	struct proc_ref p = { c.pid, c.pid };
	int n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);
	assert_true(n < 3);
	assert_true(truncated);
	unwinder__free(u);
	test_maps_release(&tm);
	test_capture_release(&c);
	assert_int_equal(rename(moved, debug), 0);
}

/* main -> JIT stub (anonymous executable memory, frame pointer, no CFI) -> capture_entry
 * -> rec x30 -> capture: CFI up to the stub, frame pointers through it, CFI again in main
 * and libc. backtrace() stops at the stub, so the oracle is its frames plus the symbol
 * table for main. */
static void test_jit_between(void **state)
{
	uint64_t main_lo, main_hi;

	symtab_range(exe_nofp, "main", &main_lo, &main_hi);
	for (int mode = UNWIND_DWARF; mode <= UNWIND_SMART; mode++) {
		struct test_capture c;
		struct test_maps tm;
		uint64_t pcs[256];
		bool truncated;
		struct unwinder *u = unwinder__new(mode, 0);
		int k = 1;

		assert_int_equal(test_capture_mode(&c, exe_nofp, "capture-jit"), 0);
		assert_true(test_maps_load(&tm, c.pid) > 0);
		struct proc_ref p = { c.pid, c.pid };
		int n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);

		while (k < c.noracle) {		/* the oracle's frame in the stub */
			const struct mapping *m = test_maps_find(&tm, c.oracle[k]);
			if (m && m->ino == 0 && (m->prot & PROT_EXEC))
				break;
			k++;
		}
		assert_true(k >= 30 && k < c.noracle);	/* capture_entry may be a tail call */
		assert_int_equal(n, k + 1 + 4);	/* ..., stub, main, libc x2, _start */
		assert_false(truncated);
		for (int i = 1; i <= k; i++)
			assert_int_equal(pcs[i], c.oracle[i]);
		const struct mapping *m = test_maps_find(&tm, pcs[k + 1]);
		assert_non_null(m);
		uint64_t va = pcs[k + 1] - 1 - (m->start - m->pgoff);
		assert_true(va >= main_lo && va < main_hi);
		unwinder__free(u);
		test_maps_release(&tm);
		test_capture_release(&c);
	}
}

/* Frames of this very test binary (ASan build) and libc, captured in-process. */
__attribute__((noinline, no_sanitize_address)) static int self_capture(struct unwind_sample *s, uint8_t *buf,
						  size_t len, void **bt, int *nbt)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	for (size_t i = 0; i < len; i++)	/* not memcpy: ASan checks it against redzones */
		buf[i] = ((const volatile uint8_t *)sp)[i];
	*nbt = backtrace(bt, 64);
	s->regs.ip = ip, s->regs.sp = sp, s->regs.bp = bp;
	s->stack = buf;
	s->stack_len = len;
	return 0;
}

static void test_self(void **state)
{
	static struct test_maps tm;
	struct unwind_sample s;
	static uint8_t buf[32768];
	void *bt[64];
	int nbt;
	uint64_t pcs[64];
	bool truncated;

	uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);

	assert_true(test_maps_load(&tm, getpid()) > 0);
	const struct mapping *stack = test_maps_find(&tm, here);
	assert_non_null(stack);
	/* the copy runs from self_capture's sp (below here) to at most the stack's top */
	size_t len = stack->end - here > 16384 ? 16384 : stack->end - here;
	self_capture(&s, buf, len, bt, &nbt);
	struct proc_ref p = { getpid(), getpid() };
	for (int mode = UNWIND_DWARF; mode <= UNWIND_SMART; mode++) {
		struct unwinder *u = unwinder__new(mode, 0);
		int n = unwinder__unwind(u, &p, &s, test_maps_find, &tm, pcs, 64, &truncated);

		/* ASan's interceptor of backtrace() may add its own frame first */
		int k = 1;
		while (k < nbt && (uint64_t)bt[k] != pcs[1])
			k++;
		assert_true(k <= 2);
		assert_true(n >= 4);
		assert_int_equal(n - 1, nbt - k);
		for (int i = 1; i < n; i++)
			assert_int_equal(pcs[i], (uint64_t)bt[i - 1 + k]);
		assert_false(truncated);
		unwinder__free(u);
	}
	test_maps_release(&tm);
}

/* Garbage registers and stacks never crash and never walk down the stack. */
static void test_fuzz(void **state)
{
	struct test_capture c;
	struct test_maps tm;
	uint64_t pcs[128];
	bool truncated;

	assert_int_equal(test_capture_run(&c, exe_nofp), 0);
	assert_true(test_maps_load(&tm, c.pid) > 0);
	struct proc_ref p = { c.pid, c.pid };
	struct unwinder *u = unwinder__new(UNWIND_SMART, 0), *d = unwinder__new(UNWIND_DWARF, 0);
	uint8_t *orig = xmalloc(c.s.stack_len);

	memcpy(orig, c.stack, c.s.stack_len);
	srand(12345);
	for (int iter = 0; iter < 3000; iter++) {
		struct unwind_sample s = c.s;

		memcpy(c.stack, orig, c.s.stack_len);
		if (iter % 3 == 0) {		/* random bytes everywhere */
			for (size_t i = 0; i < s.stack_len; i++)
				c.stack[i] = (uint8_t)rand();
		} else {			/* a few words replaced */
			for (int k = 0; k < 8; k++) {
				size_t at = ((size_t)rand() % (s.stack_len / 8)) * 8;
				uint64_t v = iter % 3 == 1 ? (uint64_t)rand() * (uint64_t)rand()
							   : s.regs.sp + (uint64_t)(rand() % 20000) - 4000;
				memcpy(c.stack + at, &v, 8);
			}
		}
		if (iter % 5 == 0)
			s.regs.ip = tm.v[(size_t)rand() % tm.n].start + (uint64_t)(rand() % 4096);
		if (iter % 7 == 0)
			s.regs.bp = s.regs.sp + (uint64_t)(rand() % 16384) - 100;
		s.stack_len = (size_t)rand() % (c.s.stack_len + 1);
		int n = unwinder__unwind(iter & 1 ? u : d, &p, &s, test_maps_find, &tm, pcs, 128,
					 &truncated);
		assert_true(n >= 1 && n <= 128);
	}
	assert_int_equal(unwinder__unwind(u, &p, &c.s, NULL, NULL, pcs, 0, &truncated), -EINVAL);
	free(orig);
	unwinder__free(u);
	unwinder__free(d);
	test_maps_release(&tm);
	test_capture_release(&c);
}

/* A tiny cache limit still unwinds (one table at a time) and stays near its bound. */
static void test_cache_bound(void **state)
{
	struct test_capture c;
	struct test_maps tm;
	uint64_t pcs[256];
	bool truncated;

	assert_int_equal(test_capture_run(&c, exe_nofp), 0);
	assert_true(test_maps_load(&tm, c.pid) > 0);
	struct proc_ref p = { c.pid, c.pid };
	struct unwinder *u = unwinder__new(UNWIND_DWARF, 4096);

	for (int i = 0; i < 3; i++) {
		int n = unwinder__unwind(u, &p, &c.s, test_maps_find, &tm, pcs, 256, &truncated);
		assert_int_equal(n, c.noracle);
	}
	/* libc's table alone is far above 4 KiB: only the one in use is kept */
	assert_true(unwinder__memory(u) < 1024 * 1024);
	unwinder__free(u);
	test_maps_release(&tm);
	test_capture_release(&c);
}

/* The mapping a corrupt file is seen through, for any address. */
static struct mapping corrupt_map;

static const struct mapping *corrupt_find(void *ctx, uint64_t addr)
{
	return addr >= corrupt_map.start && addr < corrupt_map.end ? &corrupt_map : NULL;
}

/* Corrupt binaries (bytes flipped anywhere, in the CFI sections most, or cut short) give
 * an empty or partial table, never a crash: libdw and our FDE walk read untrusted data. */
static void test_corrupt_binary(void **state)
{
	struct strbuf orig = STRBUF_INIT;
	char path[300];
	uint64_t pcs[64];
	bool truncated;
	uint8_t stack[4096];
	struct proc_ref p = { getpid(), getpid() };

	assert_int_equal(strbuf_read_file(&orig, exe_nofp), 0);
	snprintf(path, sizeof(path), "%s/corrupt", workdir);
	/* .eh_frame_hdr and .eh_frame sit in the first few pages of this small binary */
	srand(777);
	for (int iter = 0; iter < 150; iter++) {
		struct strbuf b = STRBUF_INIT;
		size_t len = orig.len;

		strbuf_add(&b, orig.buf, orig.len);
		int flips = 1 + rand() % 40;
		for (int k = 0; k < flips; k++) {
			size_t at = iter % 2 ? 0x2000 + (size_t)rand() % 0x1000 : (size_t)rand() % len;
			if (at < len)
				b.buf[at] = (char)rand();
		}
		if (iter % 10 == 9)
			len = (size_t)rand() % len;
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(b.buf, 1, len, f), len);
		fclose(f);
		strbuf_release(&b);

		corrupt_map = (struct mapping){ .start = 0x10000, .end = 0x20000, .pgoff = 0x1000,
						.prot = PROT_READ | PROT_EXEC, .path = path };
		for (size_t i = 0; i < sizeof(stack); i++)
			stack[i] = (uint8_t)rand();
		struct unwind_sample s = { { 0x10000 + (uint64_t)(rand() % 0x1000), 0x7ff000000000,
					     0x7ff000000100 }, stack, sizeof(stack) };
		for (int mode = UNWIND_DWARF; mode <= UNWIND_SMART; mode++) {
			struct unwinder *u = unwinder__new(mode, 0);
			int n = unwinder__unwind(u, &p, &s, corrupt_find, NULL, pcs, 64, &truncated);
			assert_true(n >= 1 && n <= 64);
			unwinder__free(u);
		}
	}
	strbuf_release(&orig);
}

/* Many binaries through a small cache, from a fixture the test builds: 60 copies each of
 * the frame-pointer and the no-frame-pointer workload (each copy its own inode, so its own
 * table) and 10 shell scripts, through a cache bounded at half of what their tables need.
 * Each binary with CFI lists FDEs whose first compiles to rows, tables are evicted, and
 * the cache never holds much more than its bound (one table larger than the bound is kept
 * while it is in use). */
#define MANY_COPIES 60
static void test_many_binaries(void **state)
{
	char dir[300], path[4096];
	char cmd[2048];

	snprintf(dir, sizeof(dir), "%s/many", workdir);
	snprintf(cmd, sizeof(cmd), "mkdir %s && cd %s && for i in $(seq %d); do "
		 "cp %s nofp-$i && cp %s fp-$i && { [ $i -gt 10 ] || printf '#!/bin/sh\\n' > sh-$i; }; "
		 "done", dir, dir, MANY_COPIES, exe_nofp, exe_fp);
	assert_int_equal(system(cmd), 0);

	/* the bound: half of what the fixture's tables hold with their CFI closed, measured by
	 * a cache that keeps them all but one CFI open; the bounded cache must evict */
	struct proc_ref p = { getpid(), getpid() };
	struct unwind_cache *probe = unwind_cache__new(UINT64_MAX, true);
	uint64_t open_max = 0;
	unwind_cache__set_max_open(probe, 1);
	snprintf(cmd, sizeof(cmd), "ls %s/*", dir);
	FILE *ls = popen(cmd, "r");
	assert_non_null(ls);
	while (fgets(path, sizeof(path), ls)) {
		struct stat st;

		path[strcspn(path, "\n")] = '\0';
		assert_int_equal(stat(path, &st), 0);
		struct mapping m = { .start = 0x10000, .end = 0x20000, .ino = st.st_ino,
				     .maj = major(st.st_dev), .min = minor(st.st_dev),
				     .prot = PROT_READ | PROT_EXEC, .path = path };
		const struct unwind_table *t = unwind_cache__get(probe, &p, &m);
		if (t && t->has_cfi && t->nfde > 0)
			assert_non_null(unwind_cache__find(probe, t, &p, &m, t->base + t->fdes[0].lo));
		if (t && unwind_cache__table_bytes(probe, t) > open_max)
			open_max = unwind_cache__table_bytes(probe, t);
	}
	pclose(ls);
	assert_true(unwind_cache__bytes(probe) > 2 * open_max);
	uint64_t limit = (unwind_cache__bytes(probe) - open_max) / 2;
	unwind_cache__free(probe);

	struct unwind_cache *c = unwind_cache__new(limit, true);
	size_t tables = 0, with_cfi = 0, with_rows = 0, largest = 0;

	/* the vDSO has no file: its table comes from kiln's own copy of the image */
	static struct test_maps self;
	assert_true(test_maps_load(&self, getpid()) > 0);
	for (size_t i = 0; i < self.n; i++)
		if (strcmp(self.v[i].path, "[vdso]") == 0) {
			const struct unwind_table *t = unwind_cache__get(c, &p, &self.v[i]);
			assert_non_null(t);
			assert_true(t->has_cfi && t->nfde > 0);
			assert_non_null(unwind_cache__find(c, t, &p, &self.v[i],
							   t->base + t->fdes[0].lo));
		}
	test_maps_release(&self);

	ls = popen(cmd, "r");
	assert_non_null(ls);
	while (fgets(path, sizeof(path), ls)) {
		struct stat st;

		path[strcspn(path, "\n")] = '\0';
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		struct mapping m = { .start = 0x10000, .end = 0x20000, .ino = st.st_ino,
				     .maj = major(st.st_dev), .min = minor(st.st_dev),
				     .prot = PROT_READ | PROT_EXEC, .path = path };
		const struct unwind_table *t = unwind_cache__get(c, &p, &m);

		if (!t)
			continue;	/* not an x86_64 ELF (scripts) */
		tables++;
		with_cfi += t->has_cfi;
		/* an FDE compiles to rows when first looked up */
		with_rows += t->has_cfi && t->nfde > 0 &&
			     unwind_cache__find(c, t, &p, &m, t->base + t->fdes[0].lo) != NULL;
		if (unwind_cache__table_bytes(c, t) > largest)
			largest = unwind_cache__table_bytes(c, t);
		assert_true(unwind_cache__bytes(c) <= limit + largest + 4096);
	}
	pclose(ls);
	print_message("%zu binaries, %zu with CFI, %zu of them with rows, %llu evictions, "
		      "largest table %zu bytes, bound %llu bytes\n", tables, with_cfi, with_rows,
		      (unsigned long long)unwind_cache__evictions(c), largest,
		      (unsigned long long)limit);
	assert_true(tables >= 100);
	assert_int_equal(with_rows, with_cfi);	/* no CFI: Go (stripped), Free Pascal */
	assert_true(unwind_cache__evictions(c) > 0);
	unwind_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nofp_dwarf),
		cmocka_unit_test(test_nofp_smart),
		cmocka_unit_test(test_fp_dwarf),
		cmocka_unit_test(test_fp_smart),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_jit_between),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_cache_bound),
		cmocka_unit_test(test_corrupt_binary),
		cmocka_unit_test(test_many_binaries),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
