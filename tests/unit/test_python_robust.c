/* The Python reader's edge cases: each thread of a multi-threaded program reads as its
 * own stack; a process that exits or execs while read gives no wrong frame and no
 * crash; non-Python processes are not attached; the line-table and string decoders
 * hold on hand-made and random bytes (under ASan and UBSan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <errno.h>

#include "python_harness.h"
#include "runtimes/python_code.h"
#include "runtimes/python_layout.h"
#include "runtimes/python_proc.h"

/* Which of spin_a / spin_b / <module>-only the thread's stacks show: a bit mask. */
static int thread_kinds(struct runtime_proc *rp, pid_t tid, int reads)
{
	struct rt_frame fr[64];
	struct strbuf sb = STRBUF_INIT;
	int kinds = 0;
	for (int i = 0; i < reads; i++) {
		int n = python_runtime.sample(rp, tid, fr, 64);
		if (n <= 0)
			continue;
		strbuf_reset(&sb);
		for (int k = 0; k < n; k++) {
			strbuf_addch(&sb, ';');
			python_runtime.frame_name(rp, &fr[k], &sb);
		}
		if (strstr(sb.buf, ";thread_a (") && strstr(sb.buf, ";spin_a ("))
			kinds |= 1;
		if (strstr(sb.buf, ";thread_b (") && strstr(sb.buf, ";spin_b ("))
			kinds |= 2;
		if (strncmp(sb.buf, ";<module> (", 11) == 0 && !strstr(sb.buf, ";thread_"))
			kinds |= 4;	/* the main thread, in join() */
		if (strstr(sb.buf, "spin_a") && strstr(sb.buf, "spin_b"))
			kinds |= 8;	/* never: one thread, one stack */
		jitter_sleep();
	}
	strbuf_release(&sb);
	return kinds;
}

static void test_threads_have_own_stacks(void **state)
{
	char pythons[MAX_PYTHONS][512], script[512];
	int np = find_pythons(pythons, MAX_PYTHONS), failures = 0;
	workload_path("python_threads.py", script, sizeof(script));
	for (int v = 0; v < np; v++) {
		pid_t pid = start_python(pythons[v], script, "30");
		assert_true(pid > 0);
		char reason[128] = "", path[64];
		struct proc_ref p = { pid, pid };
		struct runtime_proc *rp = python_runtime.attach(&p, reason);
		assert_non_null(rp);
		int seen = 0, bad = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0)
				continue;
			int k = thread_kinds(rp, tid, 100);
			/* each thread shows exactly one of its own stacks */
			bad += k != 0 && k != 1 && k != 2 && k != 4;
			seen |= k;
		}
		if (d)
			closedir(d);
		python_runtime.detach(rp);
		stop_python(pid);
		bool ok = !bad && (seen & 7) == 7;
		printf("%-40s threads: seen mask %d, mixed %d %s\n", pythons[v], seen, bad, ok ? "ok" : "FAIL");
		failures += !ok;
	}
	assert_int_equal(failures, 0);
}

/* Is name "func (file.py:LINE)_[p]" (or "<frozen x>", "<string>" as file) with a
 * printable function name? */
static bool well_formed(const char *name)
{
	const char *open = strstr(name, " (");
	size_t len = strlen(name);
	if (!open || open == name || len < 8 || strcmp(name + len - 5, ")_[p]") != 0)
		return false;
	for (const char *p = name; p < open; p++)
		if (*p <= ' ' || *p == ';')
			return false;
	const char *file = open + 2, *end = name + len - 5;
	const char *colon = memrchr(file, ':', (size_t)(end - file));
	if (colon) {
		for (const char *p = colon + 1; p < end; p++)
			if (*p < '0' || *p > '9')
				return false;
		end = colon;
	}
	size_t flen = (size_t)(end - file);
	return (flen > 3 && memcmp(end - 3, ".py", 3) == 0) || (flen > 2 && file[0] == '<' && end[-1] == '>');
}

/* Reads a process until it is gone; every frame returned must be well formed and the
 * stacks (read while the workload runs) must name must_contain. Returns the number of
 * reads with frames. */
static int read_until_gone(pid_t pid, struct runtime_proc *rp, const char *must_contain)
{
	struct rt_frame fr[64];
	struct strbuf sb = STRBUF_INIT;
	int with = 0, gone = 0, named = 0;
	for (int i = 0; i < 20000 && gone < 200; i++) {
		int n = python_runtime.sample(rp, pid, fr, 64);
		int status;
		if (n > 0) {
			with++;
			strbuf_reset(&sb);
			for (int k = 0; k < n; k++) {
				size_t at = sb.len;
				python_runtime.frame_name(rp, &fr[k], &sb);
				if (!well_formed(sb.buf + at))
					fail_msg("malformed frame '%s'", sb.buf + at);
				strbuf_addch(&sb, ';');
			}
			named += strstr(sb.buf, must_contain) != NULL;
		}
		if (waitpid(pid, &status, WNOHANG) == pid || kill(pid, 0) < 0)
			gone++;
		usleep(100);
	}
	strbuf_release(&sb);
	assert_true(named * 2 >= with);
	return with;
}

static void test_exit_and_exec_mid_read(void **state)
{
	char pythons[MAX_PYTHONS][512], script[512];
	int np = find_pythons(pythons, MAX_PYTHONS);
	workload_path("python_ratio.py", script, sizeof(script));
	for (int v = 0; v < np; v++) {
		/* exits by itself after 0.3 s, while being read */
		pid_t pid = start_python(pythons[v], script, "0.3");
		assert_true(pid > 0);
		char reason[128] = "";
		struct proc_ref p = { pid, pid };
		struct runtime_proc *rp = python_runtime.attach(&p, reason);
		assert_non_null(rp);
		assert_true(read_until_gone(pid, rp, "python_ratio.py") > 0);
		python_runtime.detach(rp);
	}
	/* execs into a shell script that runs a C program: no Python frames afterwards */
	pid_t pid = fork();
	if (pid == 0) {
		execl(pythons[0], pythons[0], "-c",
		      "import os, time\nend = time.time() + 0.3\nwhile time.time() < end: pass\n"
		      "os.execv('/bin/sh', ['sh', '-c', 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'])",
		      (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = python_runtime.attach(&p, reason);
	assert_non_null(rp);
	read_until_gone(pid, rp, "(<string>");
	python_runtime.detach(rp);
	waitpid(pid, NULL, 0);
}

/* A process attached at exec, before the loader mapped libpython, is read once it has. */
static void test_attached_while_starting(void **state)
{
	char pythons[MAX_PYTHONS][512], script[512];
	int np = find_pythons(pythons, MAX_PYTHONS);
	workload_path("python_ratio.py", script, sizeof(script));
	for (int v = 0; v < np; v++) {
		pid_t pid = fork();
		if (pid == 0) {
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			execl(pythons[v], pythons[v], script, "5", (char *)NULL);
			_exit(127);
		}
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);	/* stopped at exec */
		char reason[128] = "";
		struct proc_ref p = { pid, pid };
		struct runtime_proc *rp = python_runtime.attach(&p, reason);
		assert_non_null(rp);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		struct rt_frame fr[64];
		int found = 0;
		for (int i = 0; i < 3000 && !found; i++) {
			found = python_runtime.sample(rp, pid, fr, 64) > 0;
			usleep(1000);
		}
		printf("%-40s attached at exec: %s\n", pythons[v], found ? "ok" : "FAIL");
		python_runtime.detach(rp);
		stop_python(pid);
		assert_true(found);
	}
}

static void test_not_python(void **state)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	usleep(50000);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	assert_null(python_runtime.attach(&p, reason));
	assert_string_equal(reason, "");
	/* known now as no Python; forgotten, it is looked up again with the same answer */
	assert_null(python_runtime.attach(&p, reason));
	py_attach__forget();
	assert_null(python_runtime.attach(&p, reason));
	assert_string_equal(reason, "");
	struct proc_ref gone = { 0x3ffffff0, 0x3ffffff0 };
	assert_null(python_runtime.attach(&gone, reason));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	python_runtime.detach(NULL);
	py_attach__forget();
	py_attach__forget();	/* twice: nothing left to free */
}

static void test_line_tables(void **state)
{
	/* 3.6-3.9 lnotab: (addr, line) pairs; 2.7 unsigned */
	const uint8_t lnotab[] = { 4, 1, 12, 1, 14, 255 };
	assert_int_equal(py_code__line(PY_LINES_LNOTAB36, lnotab, 6, 10, 0), 10);
	assert_int_equal(py_code__line(PY_LINES_LNOTAB36, lnotab, 6, 10, 4), 11);
	assert_int_equal(py_code__line(PY_LINES_LNOTAB36, lnotab, 6, 10, 16), 12);
	assert_int_equal(py_code__line(PY_LINES_LNOTAB36, lnotab, 6, 10, 30), 11);
	assert_int_equal(py_code__line(PY_LINES_LNOTAB27, lnotab, 6, 10, 30), 267);
	assert_int_equal(py_code__line(PY_LINES_LNOTAB36, lnotab, 6, 10, -1), 10);
	/* 3.10: the table of `def f(): x = 0; for ...; return x` at line 2 (from co_lines()) */
	const uint8_t lt310[] = { 4, 1, 12, 1, 14, 1, 4, 1 };
	assert_int_equal(py_code__line(PY_LINES_LINETABLE310, lt310, 8, 2, 0), 3);
	assert_int_equal(py_code__line(PY_LINES_LINETABLE310, lt310, 8, 2, 15), 4);
	assert_int_equal(py_code__line(PY_LINES_LINETABLE310, lt310, 8, 2, 33), 6);
	assert_int_equal(py_code__line(PY_LINES_LINETABLE310, lt310, 8, 2, 34), -1);
	/* 3.11 locations: no-column entry +1 (2 units), short entry (1 unit), one-line +2, long -3, none */
	const uint8_t loc[] = { 0x80 | 13 << 3 | 1, 2, 0x80 | 0 << 3, 5, 0x80 | 12 << 3, 1, 9,
				0x80 | 14 << 3, 7, 0, 0, 0, 0x80 | 15 << 3 };
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 0), 21);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 2), 21);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 4), 21);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 6), 23);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 8), 20);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 10), -1);
	assert_int_equal(py_code__line(PY_LINES_LOCATIONS311, loc, sizeof(loc), 20, 1000), -1);
	/* random tables never read out of bounds */
	uint8_t junk[64];
	srand(7);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand() % 64);
		for (size_t k = 0; k < len; k++)
			junk[k] = (uint8_t)rand();
		for (int kind = 0; kind < 4; kind++)
			py_code__line((enum py_line_kind)kind, junk, len, 1, rand() % 300);
	}
}

static void test_strings(void **state)
{
	struct py_layout l;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(py_layout__for_version(3, 11, &l), 0);
	uint8_t obj[128] = { 0 };
	uint64_t len = 5, type = 0x1234;
	uint32_t st = 1u << 2 | 1u << 5 | 1u << 6;	/* kind 1, compact, ascii */
	memcpy(obj + 8, &type, 8);
	memcpy(obj + 16, &len, 8);
	memcpy(obj + 32, &st, 4);
	memcpy(obj + 48, "alpha", 5);
	assert_int_equal(py_code__string(&l, obj, sizeof(obj), 0x1234, &sb), 0);
	assert_string_equal(sb.buf, "alpha");
	assert_int_equal(py_code__string(&l, obj, sizeof(obj), 0x9999, &sb), -EINVAL);
	/* latin-1, not ascii: data after the compact header, converted to UTF-8 */
	strbuf_reset(&sb);
	st = 1u << 2 | 1u << 5;
	memcpy(obj + 32, &st, 4);
	len = 1;
	memcpy(obj + 16, &len, 8);
	obj[72] = 0xe9;
	assert_int_equal(py_code__string(&l, obj, sizeof(obj), 0, &sb), 0);
	assert_string_equal(sb.buf, "\xc3\xa9");
	/* not compact, negative length: rejected; huge length: cut to what was read */
	st = 1u << 2;
	memcpy(obj + 32, &st, 4);
	assert_int_equal(py_code__string(&l, obj, sizeof(obj), 0, &sb), -EINVAL);
	strbuf_reset(&sb);
	len = 1ull << 40;
	st = 1u << 2 | 1u << 5 | 1u << 6;
	memcpy(obj + 32, &st, 4);
	memcpy(obj + 16, &len, 8);
	assert_int_equal(py_code__string(&l, obj, sizeof(obj), 0, &sb), 0);
	assert_true(sb.len >= sizeof(obj) - 48);	/* 0xe9 at 72 takes two bytes */
	/* random objects never read out of bounds */
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(rand() % 128);
		for (size_t k = 0; k < n; k++)
			obj[k] = (uint8_t)rand();
		strbuf_reset(&sb);
		py_code__string(&l, obj, n, 0, &sb);
		assert_true(sb.len <= PY_NAME_MAX + 4);
	}
	strbuf_release(&sb);
}

static void test_debug_offsets_checked(void **state)
{
	uint8_t buf[PY_DEBUG_OFFSETS_3_13_SIZE] = { 0 };
	struct py_layout l;
	uint64_t hex = 0;
	assert_int_equal(py_layout__from_debug_offsets(buf, sizeof(buf), &l, &hex), -EINVAL);
	memcpy(buf, PY_DEBUG_COOKIE, 8);
	uint64_t v = 0x030e00f0;	/* 3.14: another layout */
	memcpy(buf + 8, &v, 8);
	assert_int_equal(py_layout__from_debug_offsets(buf, sizeof(buf), &l, &hex), -ENOTSUP);
	assert_int_equal(hex, 0x030e00f0);
	v = 0x030d00f0;
	memcpy(buf + 8, &v, 8);
	memset(buf + 40, 0xff, 8);	/* implausible interpreters_head offset */
	assert_int_equal(py_layout__from_debug_offsets(buf, sizeof(buf), &l, &hex), -EINVAL);
	assert_int_equal(py_layout__for_version(3, 5, &l), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_tables),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_debug_offsets_checked),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_attached_while_starting),
		cmocka_unit_test(test_threads_have_own_stacks),
		cmocka_unit_test(test_exit_and_exec_mid_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
