/* /proc/PID/maps for the runtime readers: the parse keeps every file mapping with its
 * fields, skips what is not a file or does not parse; a held span reads a pid once, and
 * a release (or another pid) reads again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/procmaps.h"
#include "util/strbuf.h"

static void test_parse(void **state)
{
	char text[] =
		"55d0c8a00000-55d0c8a2f000 r--p 00000000 fe:01 1835143                    /usr/bin/python3.11\n"
		"55d0c8a2f000-55d0c8d1e000 r-xp 0002f000 fe:01 1835143                    /usr/bin/python3.11\n"
		"55d0ca1e6000-55d0ca2c2000 rw-p 00000000 00:00 0                          [heap]\n"
		"7f1c2e000000-7f1c2e021000 rw-p 00000000 00:00 0 \n"
		"7f1c30a28000-7f1c30a2a000 r-xp 00002000 103:0a 24117  /tmp/a b/lib x.so (deleted)\n"
		"garbage line\n"
		"7f1c30a2a000-zzzz r-xp 00002000 fe:01 1 /bad\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
		"7f1c30b00000-7f1c30b01000 r-xp 0001A000 FE:01 99 /last/without/newline";
	struct procmap *v = NULL;
	size_t alloc = 0, n = procmaps__parse(text, strlen(text), &v, &alloc);

	assert_int_equal(n, 4);
	assert_int_equal(v[0].start, 0x55d0c8a00000ull);
	assert_int_equal(v[0].end, 0x55d0c8a2f000ull);
	assert_int_equal(v[0].pgoff, 0);
	assert_false(v[0].exec);
	assert_string_equal(v[0].path, "/usr/bin/python3.11");
	assert_true(v[1].exec);
	assert_int_equal(v[1].pgoff, 0x2f000);
	assert_int_equal(v[1].maj, 0xfe);
	assert_int_equal(v[1].min, 1);
	assert_int_equal(v[1].ino, 1835143);
	assert_string_equal(v[2].path, "/tmp/a b/lib x.so (deleted)");
	assert_int_equal(v[2].maj, 0x103);
	assert_int_equal(v[2].min, 0xa);
	assert_string_equal(v[3].path, "/last/without/newline");
	assert_int_equal(v[3].pgoff, 0x1a000);
	free(v);
}

static void test_held(void **state)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n;
	const struct procmap *m;
	bool found = false;
	uint64_t r0 = procmaps__reads();

	assert_true(len > 0);
	exe[len] = '\0';
	m = procmaps__get(getpid(), &n);
	assert_non_null(m);
	for (size_t i = 0; i < n; i++)
		found |= strcmp(m[i].path, exe) == 0 && m[i].exec;
	assert_true(found);
	procmaps__get(getpid(), &n);
	assert_int_equal(procmaps__reads(), r0 + 2);	/* not held: read each time */
	procmaps__hold();
	procmaps__get(getpid(), &n);
	procmaps__get(getpid(), &n);
	assert_int_equal(procmaps__reads(), r0 + 3);	/* held: once */
	assert_non_null(procmaps__get(getppid(), &n));	/* another pid: read */
	assert_int_equal(procmaps__reads(), r0 + 4);
	procmaps__release();
	procmaps__get(getpid(), &n);
	assert_int_equal(procmaps__reads(), r0 + 5);
	/* a pid that does not exist */
	assert_null(procmaps__get(INT_MAX, &n));
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
