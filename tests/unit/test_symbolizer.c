/* The symbolizer API on live processes and hostile input: a child in a chroot (its
 * binary and perf map reached through its root), pinning that outlives the child and its
 * deleted binary, perf maps with garbage lines and appends, kallsyms, eviction, and
 * truncated or corrupted ELF files that must give unresolved frames, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "format/col.h"
#include "symbols/binary.h"
#include "symbols/kallsyms.h"
#include "symbols/perfmap.h"
#include "symbols/symbolizer.h"
#include "symtest.h"

/* The child: prints where its functions and its fake JIT code are, writes a perf map for
 * the latter (with a garbage line), then waits for its stdin to close. */
static const char live_c[] =
	"#include <stdio.h>\n#include <unistd.h>\n#include <sys/mman.h>\n"
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) int beta(int x) { return alpha(x) ^ 7; }\n"
	"int main(void) {\n"
	"  char *jit = mmap(0, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
	"  char path[64]; snprintf(path, sizeof(path), \"/tmp/perf-%d.map\", getpid());\n"
	"  FILE *f = fopen(path, \"w\"); if (!f || jit == MAP_FAILED) return 1;\n"
	"  fprintf(f, \"%lx 100 LazyCompile:*hot app.js:3\\nthis is not a line\\n\", (unsigned long)jit);\n"
	"  fprintf(f, \"%lx 40 Interpreter;frame\\n\", (unsigned long)jit + 0x200);\n"
	"  fclose(f);\n"
	"  printf(\"%lx %lx %lx\\n\", (unsigned long)alpha, (unsigned long)beta, (unsigned long)jit);\n"
	"  fflush(stdout); char c; while (read(0, &c, 1) > 0) ;\n"
	"  return beta(1) == 99;\n}\n";

static const char prog_c[] =
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\n"
	"int main(int argc, char **argv) { (void)argv; return alpha(argc); }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("live.c", live_c);
	write_file("prog.c", prog_c);
	return sh("cc -O0 -o prog prog.c && cc -O0 -fPIC -shared -o lib.so prog.c") ? -1 : 0;
}

static int teardown(void **state)
{
	char path[64];

	/* the perf map test's file, also when one of its assertions failed */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	tmpdir_remove();
	return 0;
}

/* A process under ASan with its threads can map more than a few hundred regions. */
#define MAX_MAPS 4096

struct maps {
	struct mapping m[MAX_MAPS];
	char paths[MAX_MAPS][256];
	int n;
};

static void maps_read(struct maps *ms, pid_t pid)
{
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	ms->n = 0;
	while (ms->n < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct mapping *m = &ms->m[ms->n];
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj,
			   &min, &ino, &pos) < 7)
			continue;
		memset(m, 0, sizeof(*m));
		*m = (struct mapping){ .start = lo, .end = hi, .pgoff = off, .maj = maj, .min = min,
				       .ino = ino };
		m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
		snprintf(ms->paths[ms->n], sizeof(ms->paths[0]), "%s", line + pos);
		ms->paths[ms->n][strcspn(ms->paths[ms->n], "\n")] = '\0';
		m->path = ms->paths[ms->n];
		ms->n++;
	}
	fclose(f);
}

static const struct mapping *maps_find(const struct maps *ms, uint64_t addr)
{
	int i;

	for (i = 0; i < ms->n; i++)
		if (addr >= ms->m[i].start && addr < ms->m[i].end)
			return &ms->m[i];
	return NULL;
}

/* The name symbolizer__user gives addr of process p, in a static buffer. */
static const char *sym_user(struct symbolizer *s, const struct proc_ref *p,
			    const struct maps *ms, uint64_t addr, int *ret)
{
	static char buf[512];
	struct strbuf out = STRBUF_INIT;
	const struct mapping *m = maps_find(ms, addr);
	int r;

	assert_non_null(m);
	r = symbolizer__user(s, p, m, addr, &out);
	if (ret)
		*ret = r;
	snprintf(buf, sizeof(buf), "%s", out.buf);
	strbuf_release(&out);
	return col__sanitize_frame(buf);	/* as the .col writer escapes the name */
}

static void test_live_process_in_chroot_and_pinning(void **state)
{
	int in[2], out[2], ret, status, i;
	unsigned long long alpha = 0, beta = 0, jit = 0;
	struct symbolizer *live = symbolizer__new(0), *pinned = symbolizer__new(0), *late;
	struct proc_ref p;
	static struct maps ms;	/* 1 MiB: not on the stack */
	char want[64];
	pid_t pid;
	FILE *f;

	/* a static binary in its own root: its path means nothing on the host */
	assert_int_equal(sh("mkdir -p root/tmp root/bin && cc -O0 -static -o root/bin/live live.c"),
			 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (chroot(path_in("root")) == 0 && chdir("/") == 0)
			execl("/bin/live", "live", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llx %llx %llx", &alpha, &beta, &jit), 3);
	p = (struct proc_ref){ pid, pid };
	maps_read(&ms, pid);
	/* /proc/PID/maps names files from the reader's root; the agent learns them from
	 * MMAP2 records, named from the process's root: make them so. */
	for (i = 0; i < ms.n; i++) {
		size_t rl = strlen(path_in("root"));

		if (!strncmp(ms.paths[i], path_in("root"), rl))
			memmove(ms.paths[i], ms.paths[i] + rl, strlen(ms.paths[i] + rl) + 1);
	}
	assert_string_equal(maps_find(&ms, alpha)->path, "/bin/live");
	/* without map_files (a range that is no mapping), the process's root still works */
	{
		struct mapping m = *maps_find(&ms, alpha);
		struct stat st;
		int fd;

		m.start = 0x1000, m.end = 0x2000;
		fd = binary__open(&p, &m);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_ino, m.ino);
		close(fd);
		m.ino++;	/* another file at that path is refused */
		assert_int_equal(binary__open(&p, &m), -ESTALE);
	}

	assert_string_equal(sym_user(live, &p, &ms, alpha, &ret), "alpha");
	assert_int_equal(ret, 0);
	assert_string_equal(sym_user(live, &p, &ms, beta + 4, NULL), "beta");
	/* the perf map inside the root, its garbage line skipped, ';' made harmless */
	assert_string_equal(sym_user(live, &p, &ms, jit + 0x10, NULL), "LazyCompile:*hot app.js:3");
	assert_string_equal(sym_user(live, &p, &ms, jit + 0x210, NULL), "Interpreter|frame");
	/* JIT memory the map does not cover */
	snprintf(want, sizeof(want), "(%s+0x1000)", "unknown");
	assert_string_equal(sym_user(live, &p, &ms, jit + 0x1000, &ret), want);
	assert_int_equal(ret, -ENOENT);

	for (i = 0; i < ms.n; i++)
		symbolizer__pin(pinned, &p, &ms.m[i]);

	/* the child exits and its binary is deleted: only what was pinned remains */
	assert_int_equal(sh("rm -f root/bin/live"), 0);
	close(in[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	fclose(f);
	assert_string_equal(sym_user(pinned, &p, &ms, alpha + 1, &ret), "alpha");
	assert_int_equal(ret, 0);
	assert_string_equal(sym_user(pinned, &p, &ms, jit, NULL), "LazyCompile:*hot app.js:3");
	symbolizer__forget_process(pinned, pid);

	late = symbolizer__new(0);
	sym_user(late, &p, &ms, alpha, &ret);
	assert_int_equal(ret, -ENOENT);	/* nothing pinned, nothing left to read */
	snprintf(want, sizeof(want), "(live+0x%llx)",
		 (unsigned long long)mapping__file_offset(maps_find(&ms, alpha), alpha));
	assert_string_equal(sym_user(late, &p, &ms, alpha, NULL), want);
	assert_true(symbolizer__memory(live) > 0);
	symbolizer__free(live);
	symbolizer__free(pinned);
	symbolizer__free(late);
}

static void test_own_process_libc_and_vdso(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct proc_ref p = { getpid(), getpid() };
	static struct maps ms;	/* 1 MiB: not on the stack */
	const char *name;
	int i, ret;

	maps_read(&ms, getpid());
	/* libc has .dynsym only on Debian; getpid is exported */
	name = sym_user(s, &p, &ms, (uint64_t)(uintptr_t)&getpid, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(name, "getpid"));
	/* the vDSO is named from kiln's own copy: some address must be clock_gettime's */
	for (i = 0; i < ms.n; i++) {
		uint64_t a;
		bool found = false;

		if (strcmp(ms.m[i].path, "[vdso]"))
			continue;
		for (a = ms.m[i].start; a < ms.m[i].end && !found; a += 16)
			found = strstr(sym_user(s, &p, &ms, a, NULL), "clock_gettime") != NULL;
		assert_true(found);
	}
	symbolizer__free(s);
}

static void test_perfmap_garbage_and_appends(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct proc_ref p = { getpid(), getpid() };
	struct strbuf out = STRBUF_INIT;
	struct perfmap pm;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000001000 20 first\n"
	      "garbage\n"
	      "zz 10 bad_start\n"
	      "7f0000002000 xx bad_size\n"
	      "7f0000003000 10\n"			/* no name */
	      "0x7f0000004000 0x10 with 0x prefix and spaces\r\n"
	      "\n"
	      "7f00000050001111111111111 10 too_long\n", f);
	fclose(f);
	perfmap_init(&pm);
	assert_int_equal(perfmap__refresh(&pm, path), 1);
	assert_int_equal(pm.bad_lines, 5);
	assert_int_equal(perfmap__refresh(&pm, path), 0);	/* unchanged: not read again */
	assert_string_equal(perfmap__find(&pm, 0x7f000000101f), "first");
	assert_null(perfmap__find(&pm, 0x7f0000001020));
	assert_string_equal(perfmap__find(&pm, 0x7f0000004008), "with 0x prefix and spaces");
	/* appended lines are parsed alone and join the table; garbage keeps being counted */
	f = fopen(path, "a");
	fputs("7f0000006000 10 sixth\nnot hex at all\n", f);
	fclose(f);
	assert_int_equal(perfmap__refresh(&pm, path), 1);
	assert_int_equal(pm.bad_lines, 6);
	assert_string_equal(perfmap__find(&pm, 0x7f0000006000), "sixth");
	assert_string_equal(perfmap__find(&pm, 0x7f0000001000), "first");
	/* a new, shorter file (the JIT restarted under the same pid) replaces the table */
	f = fopen(path, "w");
	fputs("7f0000007000 10 restarted\n", f);
	fclose(f);
	assert_int_equal(perfmap__refresh(&pm, path), 1);
	assert_int_equal(pm.bad_lines, 0);
	assert_null(perfmap__find(&pm, 0x7f0000001000));
	assert_string_equal(perfmap__find(&pm, 0x7f0000007008), "restarted");
	perfmap_release(&pm);
	f = fopen(path, "w");
	fputs("7f0000001000 20 first\n", f);
	fclose(f);

	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f0000001004, &out), 0);
	assert_string_equal(out.buf, "first");
	strbuf_reset(&out);
	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f0000009000, &out), -ENOENT);
	/* the JIT appends; a half-written last line is left for later */
	f = fopen(path, "a");
	fputs("7f0000009000 100 appended\n7f000000a000 10 half", f);
	fclose(f);
	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f0000009010, &out), 0);
	assert_string_equal(out.buf, "appended");
	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f000000a000, &out), -ENOENT);
	f = fopen(path, "a");
	fputs("_done\n7f0000009000 10 recompiled\n", f);
	fclose(f);
	strbuf_reset(&out);
	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f000000a004, &out), 0);
	assert_string_equal(out.buf, "half_done");
	strbuf_reset(&out);
	assert_int_equal(symbolizer__perfmap(s, &p, 0x7f0000009004, &out), 0);
	assert_string_equal(out.buf, "recompiled");	/* newer code at a reused address */
	assert_true(symbolizer__memory(s) > 0);
	symbolizer__forget_process(s, getpid());
	assert_int_equal(symbolizer__memory(s), 0);
	unlink(path);
	strbuf_release(&out);
	symbolizer__free(s);
}

static void test_kallsyms(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct strbuf out = STRBUF_INIT, names = STRBUF_INIT;
	static const char *const want[] = { "do_sys_openat2", "do_sys_open", "vfs_read", "schedule" };
	unsigned long long addr = 0, a;
	char line[512], type, name[256];
	struct symtab t;
	size_t i;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n;

	assert_non_null(f);
	/* the file is the oracle: a known function, and every name at its address */
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && !addr; i++) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
			    !strcmp(name, want[i]) && (type == 'T' || type == 't')) {
				addr = a;
				break;
			}
	}
	if (!addr) {
		fclose(f);
		symbolizer__free(s);
		fprintf(stderr, "skipped: kallsyms hides addresses (kernel.kptr_restrict)\n");
		skip();
	}
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && a == addr)
			strbuf_addf(&names, " %s ", name);
	fclose(f);

	assert_int_equal(symbolizer__kernel(s, addr + 1, &out), 0);
	{
		char key[300];

		snprintf(key, sizeof(key), " %s ", out.buf);
		assert_non_null(strstr(names.buf, key));
	}
	strbuf_reset(&out);
	assert_int_equal(symbolizer__kernel(s, 0x10, &out), -ENOENT);
	assert_string_equal(out.buf, "(kernel+0x10)");

	symtab_init(&t);
	n = kallsyms__load(&t, "/proc/kallsyms");
	assert_true(n > 1000);
	assert_non_null(symtab__find(&t, addr, NULL));
	/* a module's function is named without its "[module]" */
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char mod[128];

		if (sscanf(line, "%llx %c %255s %127s", &a, &type, name, mod) == 4 &&
		    (type == 't' || type == 'T') && mod[0] == '[') {
			const char *got = symtab__find(&t, a, NULL);
			uint64_t start = 0;

			assert_non_null(got);
			assert_null(strchr(got, '['));
			symtab__find(&t, a, &start);
			assert_int_equal(start, a);
			break;
		}
	}
	fclose(f);
	symtab_release(&t);
	symtab_init(&t);
	assert_true(kallsyms__load(&t, "/nonexistent/kallsyms") < 0);
	symtab_release(&t);
	strbuf_release(&out);
	strbuf_release(&names);
	symbolizer__free(s);
}

/* When the process is gone, the host path is used only for a process outside a container
 * and only when the inode still matches. */
static void test_host_fallback_after_exit(void **state)
{
	char prog_path[512];
	struct mapping m;
	struct proc_ref p;
	struct stat st;
	pid_t pid = fork();
	int fd, status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(prog_path, sizeof(prog_path), "%s", path_in("prog"));
	assert_int_equal(stat(prog_path, &st), 0);
	m = (struct mapping){ .start = 0x400000, .end = 0x401000, .ino = st.st_ino,
			      .maj = major(st.st_dev), .min = minor(st.st_dev), .path = prog_path };
	p = (struct proc_ref){ pid, pid };
	fd = binary__open(&p, &m);
	assert_true(fd >= 0);
	close(fd);
	m.ino++;
	assert_int_equal(binary__open(&p, &m), -ESTALE);
	m.ino--;
	p.nspid = 1;	/* it lived in its own PID namespace: the host path is not its path */
	assert_int_equal(binary__open(&p, &m), -ENOENT);
	m.path = "//anon";
	assert_int_equal(binary__open(&p, &m), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_process_in_chroot_and_pinning),
		cmocka_unit_test(test_own_process_libc_and_vdso),
		cmocka_unit_test(test_perfmap_garbage_and_appends),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_host_fallback_after_exit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
