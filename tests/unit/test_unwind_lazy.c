/* Lazily compiled unwind tables: the rule at every pc equals the eager compile of the
 * whole binary (unwind_eager.h, the compiler kiln had before); binaries whose CFI was
 * closed past the cap are read again and give the same rules; over its byte limit the
 * cache closes CFI before it evicts tables; a binary truncated, rewritten, replaced or
 * deleted after first use gives "no CFI" for FDEs not compiled yet, never a crash or a
 * wrong rule, and keeps the rows already compiled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "test_unwind_util.h"
#include "unwind/binary.h"
#include "unwind/cache.h"
#include "unwind_eager.h"

static char workdir[] = "/tmp/kiln-unwind-lazy.XXXXXX";
static char exe_nofp[256], exe_fp[256], exe_dbg[256], exe_gold[256];
static struct proc_ref me;

static int setup(void **state)
{
	char cmd[2048];

	me = (struct proc_ref){ getpid(), getpid() };
	if (!mkdtemp(workdir))
		return -1;
	snprintf(exe_nofp, sizeof(exe_nofp), "%s/unwind_deep", workdir);
	snprintf(exe_fp, sizeof(exe_fp), "%s/unwind_fp", workdir);
	snprintf(exe_dbg, sizeof(exe_dbg), "%s/unwind_dbg", workdir);
	snprintf(exe_gold, sizeof(exe_gold), "%s/unwind_gold", workdir);
	/* CFI in .eh_frame; with frame pointers; only in a debug file's .debug_frame */
	snprintf(cmd, sizeof(cmd), "cc -O2 -fomit-frame-pointer -o %s tests/workloads/unwind_deep.c"
		 " && cc -O2 -fno-omit-frame-pointer -o %s tests/workloads/unwind_deep.c"
		 " && cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o %s "
		 "tests/workloads/unwind_deep.c && cd %s && objcopy --only-keep-debug unwind_dbg "
		 "unwind_dbg.debug && strip -g unwind_dbg && "
		 "objcopy --add-gnu-debuglink=unwind_dbg.debug unwind_dbg && cd - >/dev/null && "
		 "cc -O2 -fuse-ld=gold -o %s tests/workloads/unwind_deep.c", exe_nofp, exe_fp,
		 exe_dbg, workdir, exe_gold);
	return system(cmd) ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
	return system(cmd);
}

/* The mapping a file is seen through (an executable page of it), keyed by its inode or,
 * with build_id, by its build-id. */
static struct mapping map_of(const char *path, bool build_id)
{
	struct stat st;
	struct mapping m = { .start = 0x10000, .end = 0x20000, .prot = PROT_READ | PROT_EXEC,
			     .path = (char *)path };

	assert_int_equal(stat(path, &st), 0);
	m.ino = st.st_ino;
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	if (build_id) {
		int fd = open(path, O_RDONLY);
		Elf *e = elf_begin(fd, ELF_C_READ, NULL);
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(e, &id);

		assert_true(n > 0 && n <= MAPPING_BUILD_ID_MAX);
		memcpy(m.build_id, id, (size_t)n);
		m.build_id_len = (uint8_t)n;
		elf_end(e);
		close(fd);
	}
	return m;
}

static bool rule_eq(const struct unwind_rule *a, const struct unwind_rule *b)
{
	if (!a || !b)
		return a == b;
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Every pc of the binary m (and a margin; of a binary with more than 8 MB of code, 300,000
 * pcs), in address order and then scattered, gives the same rule lazily as eagerly. */
static void check_equal(const struct mapping *m, bool debug)
{
	struct unwind_elf b, d = { 0 };
	struct unwind_table t, t2;
	struct unwind_cfi cfi, cfi2;
	struct eager_table e;

	elf_version(EV_CURRENT);
	assert_int_equal(unwind_elf_open(&b, &me, m), 0);
	if (debug)
		assert_int_equal(unwind_elf_open_debug(&d, &b, &me, m), 0);
	struct unwind_sources src = { .elf = b.elf, .debug = debug ? d.elf : NULL };

	assert_int_equal(unwind_table_init(&t, &src, &cfi), 0);
	assert_int_equal(unwind_table_init(&t2, &src, &cfi2), 0);
	size_t erows = eager_build(&e, &t, &src, &cfi);

	assert_true(t.has_cfi && t.nfde > 0 && erows > 0);
	uint64_t lo = t.base + t.fdes[0].lo, hi = 0;
	for (size_t i = 0; i < t.nfde; i++)
		hi = t.base + t.fdes[i].hi > hi ? t.base + t.fdes[i].hi : hi;
	lo = lo > t.base + 64 ? lo - 64 : t.base;
	hi += 64;
	size_t bad = 0, covered = 0;
	bool every = hi - lo <= (8u << 20);	/* else ASan makes it minutes */
	for (uint64_t va = lo; every && va < hi; va++) {
		const struct unwind_rule *r = unwind_table_find(&t, va, &cfi, NULL);
		const struct unwind_rule *x = eager_find(&e, va);

		covered += r != NULL;
		if (!rule_eq(r, x) && bad++ < 5)
			print_message("%s: pc %#" PRIx64 ": lazy %d/%d eager %d/%d\n", m->path, va,
				      r ? r->cfa : -1, r ? r->off : 0, x ? x->cfa : -1, x ? x->off : 0);
	}
	assert_int_equal(bad, 0);
	assert_true(!every || t.compiled == t.nfde);
	/* scattered: each FDE compiled by whichever pc comes first */
	uint64_t span = hi - lo, n = span < 300000 ? span : 300000;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t va = lo + (k * 7919 + k / 3) % span;

		assert_true(rule_eq(unwind_table_find(&t2, va, &cfi2, NULL), eager_find(&e, va)));
	}
	const struct unwind_table *shown = every ? &t : &t2;
	print_message("%s: %zu FDEs, %zu compiled to %zu rows (%zu bytes); eagerly %zu rows; "
		      "%zu pcs with CFI\n", m->path, shown->nfde, shown->compiled, shown->nrows,
		      unwind_table_bytes(shown), erows, covered);
	assert_true(t.nrows <= erows + t.nfde);
	eager_release(&e);
	unwind_cfi_close(&cfi);
	unwind_cfi_close(&cfi2);
	unwind_table_release(&t);
	unwind_table_release(&t2);
	unwind_elf_close(&d);
	unwind_elf_close(&b);
}

static void test_lazy_equals_eager(void **state)
{
	static struct test_maps tm;
	struct mapping m;
	bool libc = false, vdso = false;

	m = map_of(exe_nofp, false);
	check_equal(&m, false);
	m = map_of(exe_fp, false);
	check_equal(&m, false);
	m = map_of(exe_dbg, false);
	check_equal(&m, true);
	m = map_of("/usr/bin/bash", false);	/* .plt.sec stubs */
	check_equal(&m, false);
	m = map_of(exe_gold, false);	/* .eh_frame_hdr after .eh_frame */
	check_equal(&m, false);
	const char *llvm = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";	/* 95,000 FDEs */
	if (access(llvm, R_OK) == 0) {
		m = map_of(llvm, false);
		check_equal(&m, false);
	}
	assert_true(test_maps_load(&tm, getpid()) > 0);
	for (size_t i = 0; i < tm.n; i++) {
		const char *base = strrchr(tm.v[i].path, '/');

		if (!libc && base && strcmp(base, "/libc.so.6") == 0 && (tm.v[i].prot & PROT_EXEC)) {
			m = map_of(tm.v[i].path, false);
			check_equal(&m, false);
			libc = true;
		} else if (!vdso && strcmp(tm.v[i].path, "[vdso]") == 0) {
			check_equal(&tm.v[i], false);
			vdso = true;
		}
	}
	assert_true(libc && vdso);
	test_maps_release(&tm);
}

static size_t section_index(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0)
			return elf_ndxscn(scn);
	}
	return 0;
}

/* gold (like lld) puts .eh_frame_hdr after .eh_frame, where libdw would not use its
 * search table: the copy swaps their headers, and still finds every FDE. */
static void test_eh_frame_hdr_order(void **state)
{
	struct mapping m = map_of(exe_gold, false);
	struct unwind_elf b;
	int fd = open(exe_gold, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);

	assert_true(section_index(e, ".eh_frame_hdr") > section_index(e, ".eh_frame"));
	elf_end(e);
	close(fd);
	assert_int_equal(unwind_elf_open(&b, &me, &m), 0);
	assert_true(section_index(b.elf, ".eh_frame_hdr") < section_index(b.elf, ".eh_frame"));
	assert_true(section_index(b.elf, ".eh_frame_hdr") > 0);
	unwind_elf_close(&b);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The rule at va of a fresh table of m: what a closed and reopened binary must give. */
static bool fresh_rule(const struct mapping *m, uint64_t va, struct unwind_rule *out)
{
	struct unwind_elf b;
	struct unwind_table t;
	struct unwind_cfi cfi;
	const struct unwind_rule *r = NULL;

	assert_int_equal(unwind_elf_open(&b, &me, m), 0);
	struct unwind_sources src = { .elf = b.elf };
	assert_int_equal(unwind_table_init(&t, &src, &cfi), 0);
	r = unwind_table_find(&t, va, &cfi, NULL);
	if (r)
		*out = *r;
	unwind_cfi_close(&cfi);
	unwind_table_release(&t);
	unwind_elf_close(&b);
	return r != NULL;
}

/* Sixteen libraries through a cache that keeps 3 open: never more open, no descriptor
 * kept, and the FDEs compiled after a close (read again) give the fresh table's rules. */
static void test_reopen_past_cap(void **state)
{
	static char paths[16][512];
	static struct mapping ms[16];
	struct unwind_cache *c = unwind_cache__new(256 << 20, true);
	FILE *ls = popen("ls /usr/lib/x86_64-linux-gnu/*.so.* 2>/dev/null | head -80", "r");
	char line[512];
	size_t n = 0;

	unwind_cache__set_max_open(c, 3);
	assert_non_null(ls);
	while (n < 16 && fgets(line, sizeof(line), ls)) {
		struct stat st;

		line[strcspn(line, "\n")] = '\0';
		if (lstat(line, &st) != 0 || !S_ISREG(st.st_mode))
			continue;	/* symlinks: the same binary again */
		snprintf(paths[n], sizeof(paths[n]), "%s", line);
		ms[n] = map_of(paths[n], false);
		const struct unwind_table *t = unwind_cache__get(c, &me, &ms[n]);
		if (!t || t->nfde < 4)
			continue;
		unwind_cache__find(c, t, &me, &ms[n], t->base + t->fdes[0].lo);
		assert_true(unwind_cache__open(c) <= 3);
		n++;
	}
	pclose(ls);
	assert_true(n >= 8);
	int fds = count_fds();
	uint64_t reopens = unwind_cache__reopens(c);

	for (size_t i = 0; i < n; i++) {
		const struct unwind_table *t = unwind_cache__get(c, &me, &ms[i]);
		const struct unwind_fde *f = &t->fdes[t->nfde - 1];
		uint64_t va = t->base + f->lo + (f->hi - f->lo) / 2;
		const struct unwind_rule *r = unwind_cache__find(c, t, &me, &ms[i], va);
		struct unwind_rule want;
		bool has = fresh_rule(&ms[i], va, &want);

		assert_true(has == (r != NULL));
		if (has)
			assert_true(rule_eq(r, &want));
		assert_true(unwind_cache__open(c) <= 3);
	}
	print_message("%zu binaries, %llu read again\n", n,
		      (unsigned long long)(unwind_cache__reopens(c) - reopens));
	assert_true(unwind_cache__reopens(c) - reopens >= n - 3);
	assert_true(count_fds() <= fds);	/* the CFI is a private copy: no descriptor */
	unwind_cache__free(c);
}

/* Over its byte limit, the cache closes open CFI (cheap to read again) before it evicts
 * any table (to be listed and compiled again). */
static void test_close_before_evict(void **state)
{
	static char paths[16][512];
	struct unwind_cache *c = unwind_cache__new(256 << 20, true);
	FILE *ls = popen("ls /usr/lib/x86_64-linux-gnu/*.so.* 2>/dev/null | head -120", "r");
	char line[512];
	size_t n = 0;

	/* small tables only: 16 of them fit 1 MiB, not with their CFI copies */
	assert_non_null(ls);
	while (n < 16 && fgets(line, sizeof(line), ls)) {
		struct stat st;

		line[strcspn(line, "\n")] = '\0';
		if (lstat(line, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		struct mapping m = map_of(line, false);
		const struct unwind_table *t = unwind_cache__get(c, &me, &m);

		if (t && t->nfde >= 4 && t->nfde <= 2000)
			snprintf(paths[n++], sizeof(paths[0]), "%s", line);
	}
	pclose(ls);
	unwind_cache__free(c);
	assert_true(n >= 8);
	c = unwind_cache__new(1 << 20, true);
	for (size_t i = 0; i < n; i++) {
		struct mapping m = map_of(paths[i], false);
		const struct unwind_table *t = unwind_cache__get(c, &me, &m);

		assert_non_null(t);
		assert_non_null(unwind_cache__find(c, t, &me, &m, t->base + t->fdes[0].lo));
		assert_true(unwind_cache__bytes(c) <= (1 << 20) + unwind_cache__table_bytes(c, t));
	}
	print_message("%zu binaries, %u with CFI open, %llu evictions\n", n, unwind_cache__open(c),
		      (unsigned long long)unwind_cache__evictions(c));
	assert_true(unwind_cache__open(c) < n);
	assert_int_equal(unwind_cache__evictions(c), 0);
	unwind_cache__free(c);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp %s %s.tmp && mv %s.tmp %s", from, to, to, to);
	assert_int_equal(system(cmd), 0);
}

/* Uses binary other so that the cache (which keeps one open) closes the previous one. */
static void use_other(struct unwind_cache *c, const struct mapping *other)
{
	const struct unwind_table *t = unwind_cache__get(c, &me, other);

	assert_non_null(t);
	unwind_cache__find(c, t, &me, other, t->base + t->fdes[t->nfde - 1].lo);
	assert_true(unwind_cache__open(c) == 1);
}

/* A binary read again after its CFI was closed copies only the .eh_frame entries it
 * compiles (and their CIEs), not the section, and gives the rules of a fresh full read;
 * gold's binary too (.eh_frame_hdr after .eh_frame, swapped in the copy). */
static void check_reread_entries(const char *path)
{
	struct mapping m = map_of(path, false), other = map_of(exe_fp, false);
	struct unwind_cache *c = unwind_cache__new(256 << 20, true);
	struct unwind_elf b;
	struct unwind_table ft;
	struct unwind_cfi fcfi;

	assert_int_equal(unwind_elf_open(&b, &me, &m), 0);
	struct unwind_sources src = { .elf = b.elf };
	assert_int_equal(unwind_table_init(&ft, &src, &fcfi), 0);
	uint64_t eh_size = ft.secs[SRC_EH].size;

	unwind_cache__set_max_open(c, 1);
	const struct unwind_table *t = unwind_cache__get(c, &me, &m);
	assert_non_null(t);
	assert_true(t->eh_by_table && t->nfde >= 8);
	unwind_cache__find(c, t, &me, &m, t->base + t->fdes[0].lo);
	use_other(c, &other);	/* closes m's CFI */
	uint64_t reopens = unwind_cache__reopens(c), fetches = unwind_cache__fetches(c);
	size_t n = t->nfde < 200 ? t->nfde : 200, with = 0;

	for (size_t k = 0; k < n; k++) {
		const struct unwind_fde *f = &t->fdes[k * (t->nfde - 1) / (n - 1)];
		uint64_t va = t->base + f->lo + (f->hi - f->lo) / 2;
		const struct unwind_rule *r = unwind_cache__find(c, t, &me, &m, va);

		with += r != NULL;
		assert_true(rule_eq(r, unwind_table_find(&ft, va, &fcfi, NULL)));
	}
	uint64_t held = unwind_cache__table_bytes(c, t) - unwind_table_bytes(t);

	print_message("%s: .eh_frame %" PRIu64 " KiB; read again with %" PRIu64 " entries read for "
		      "%zu FDEs (%zu with a rule), %" PRIu64 " KiB held\n", path, eh_size >> 10,
		      unwind_cache__fetches(c) - fetches, n, with, held >> 10);
	assert_int_equal(unwind_cache__reopens(c) - reopens, 1);
	assert_true(unwind_cache__fetches(c) - fetches >= n - 1);
	assert_true(with > n / 2);
	assert_true(eh_size < (256 << 10) || held < eh_size / 2);
	unwind_cfi_close(&fcfi);
	unwind_table_release(&ft);
	unwind_elf_close(&b);
	unwind_cache__free(c);
}

static void test_reread_entries(void **state)
{
	const char *llvm = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";

	check_reread_entries(exe_gold);
	check_reread_entries("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
	if (access(llvm, R_OK) == 0)
		check_reread_entries(llvm);
}

/* Gets m's table from c, evicting the others with a large library first when evict. */
static const struct unwind_table *get_after(struct unwind_cache *c, const struct mapping *m,
					    bool evict)
{
	if (evict) {
		struct mapping big = map_of("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false);
		uint64_t ev = unwind_cache__evictions(c);

		assert_non_null(unwind_cache__get(c, &me, &big));
		assert_true(unwind_cache__evictions(c) > ev);
	}
	return unwind_cache__get(c, &me, m);
}

/* A binary whose table was evicted keeps its frame-pointer verdict when listed again (no
 * FDE sampled for it), unless the file changed in place (same inode). */
static void test_fp_verdict_kept(void **state)
{
	char victim[300], cmd[2048];
	struct unwind_cache *c = unwind_cache__new(64 << 10, true);
	const struct unwind_table *t;

	/* 40 functions with frames (not leaves) outvote the C runtime's few without */
	snprintf(victim, sizeof(victim), "%s/verdict", workdir);
	snprintf(cmd, sizeof(cmd), "(echo '__attribute__((noinline)) int h(int x) { return x; }'; "
		 "for i in $(seq 40); do echo \"__attribute__((noinline)) int f$i(int x) "
		 "{ return h(x) * $i + 1; }\"; done; echo 'int main(void) { return f1(0); }') > "
		 "%s.c && cc -O2 -fno-omit-frame-pointer -o %s %s.c", victim, victim, victim);
	assert_int_equal(system(cmd), 0);
	struct mapping fp = map_of(victim, false), nofp = map_of(exe_nofp, false);

	t = get_after(c, &fp, false);
	assert_true(t && t->fp_built && t->nfdes >= 8);
	t = get_after(c, &nofp, false);
	assert_true(t && !t->fp_built && t->nfdes >= 8);
	uint64_t builds = unwind_cache__builds(c);

	t = get_after(c, &fp, true);
	assert_true(t && t->fp_built && t->nfdes == 0);
	t = get_after(c, &nofp, true);
	assert_true(t && !t->fp_built && t->nfdes == 0);
	assert_int_equal(unwind_cache__builds(c) - builds, 4);	/* 2 listed again, 2 libstdc++ */

	/* rewritten in place: decided again */
	snprintf(cmd, sizeof(cmd), "sleep 0.01; cat %s > %s", exe_nofp, victim);
	assert_int_equal(system(cmd), 0);
	t = get_after(c, &fp, true);
	assert_true(t && !t->fp_built && t->nfdes >= 8);
	unwind_cache__free(c);
}

/* How the victim changes after first use. */
enum change { TRUNCATE, REWRITE, RENAME, DELETE };

static void check_changed(enum change how, bool build_id)
{
	char victim[300];
	struct mapping other = map_of(exe_fp, false);
	struct unwind_cache *c = unwind_cache__new(32 << 20, true);

	snprintf(victim, sizeof(victim), "%s/victim", workdir);
	copy_file(exe_nofp, victim);
	struct mapping m = map_of(victim, build_id);
	unwind_cache__set_max_open(c, 1);
	const struct unwind_table *t = unwind_cache__get(c, &me, &m);
	assert_non_null(t);
	size_t n = t->nfde;
	assert_true(n >= 8);
	uint64_t va[3];
	struct unwind_rule want[3];
	for (int i = 0; i < 3; i++) {
		va[i] = t->base + t->fdes[i * (n - 1) / 2].lo;
		assert_true(fresh_rule(&m, va[i], &want[i]));
	}
	assert_true(rule_eq(unwind_cache__find(c, t, &me, &m, va[0]), &want[0]));

	/* still open: the private copy is immune to the truncation (no SIGBUS) */
	if (how == TRUNCATE) {
		assert_int_equal(truncate(victim, 100), 0);
		assert_true(rule_eq(unwind_cache__find(c, t, &me, &m, va[1]), &want[1]));
	} else {
		assert_true(rule_eq(unwind_cache__find(c, t, &me, &m, va[1]), &want[1]));
	}
	use_other(c, &other);
	if (how == REWRITE) {	/* same inode, other contents */
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "cat %s > %s", exe_fp, victim);
		assert_int_equal(system(cmd), 0);
	} else if (how == RENAME) {
		copy_file(exe_fp, victim);
	} else if (how == DELETE) {
		assert_int_equal(unlink(victim), 0);
	}
	uint64_t reopens = unwind_cache__reopens(c);
	t = unwind_cache__get(c, &me, &m);
	assert_non_null(t);
	assert_null(unwind_cache__find(c, t, &me, &m, va[2]));	/* not compiled: no CFI */
	assert_int_equal(unwind_cache__reopens(c), reopens);
	/* the rows compiled before the change stay */
	assert_true(rule_eq(unwind_cache__find(c, t, &me, &m, va[0]), &want[0]));
	assert_true(rule_eq(unwind_cache__find(c, t, &me, &m, va[1]), &want[1]));
	unwind_cache__free(c);
	unlink(victim);
}

static void test_changed_binary(void **state)
{
	for (int how = TRUNCATE; how <= DELETE; how++) {
		check_changed(how, false);
		check_changed(how, true);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_equals_eager),
		cmocka_unit_test(test_eh_frame_hdr_order),
		cmocka_unit_test(test_reopen_past_cap),
		cmocka_unit_test(test_reread_entries),
		cmocka_unit_test(test_fp_verdict_kept),
		cmocka_unit_test(test_close_before_evict),
		cmocka_unit_test(test_changed_binary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
