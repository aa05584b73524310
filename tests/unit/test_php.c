/* The PHP reader: the version table and the decoders of what it copies out of a process
 * (strings, function fingerprints, versions, file names) on hand-made, truncated and
 * random bytes; the walk over a hand-built Zend stack in this very process (read with
 * process_vm_readv like any other), including broken chains, unmapped pointers, cycles,
 * functions replaced at the same address and too deep stacks (tests/unit/test_php_live.c
 * has the real php processes). Run under ASan and UBSan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtimes/php_layout.h"
#include "runtimes/php_proc.h"
#include "runtimes/runtime.h"

static void test_layout_table(void **state)
{
	static const int ok[][2] = { { 7, 4 }, { 8, 0 }, { 8, 1 }, { 8, 2 }, { 8, 3 }, { 8, 4 } };
	static const int no[][2] = { { 7, 3 }, { 8, 5 }, { 5, 6 }, { 9, 0 }, { 7, 0 } };
	struct php_layout l;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(php_layout__for_version(ok[i][0], ok[i][1], &l), 0);
		assert_int_equal(l.eg_current_execute_data, 488);
		assert_int_equal(l.ed_func, 24);
		assert_int_equal(l.ed_prev, 48);
		assert_true(l.op_line_start == l.op_filename + 8);
		assert_true(l.op_line_start + 8 <= PHP_FN_READ);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_int_equal(php_layout__for_version(no[i][0], no[i][1], &l), -ENOTSUP);
	assert_int_equal(php_layout__for_version(8, 2, &l), 0);	/* Debian bookworm */
	assert_int_equal(l.op_filename, 152);
	assert_int_equal(l.op_line_start, 160);
	assert_int_equal(php_layout__for_version(7, 4, &l), 0);
	assert_int_equal(l.op_filename, 136);
	assert_int_equal(php_layout__for_version(8, 4, &l), 0);
	assert_int_equal(l.op_filename, 168);
}

static void test_parse_version(void **state)
{
	char v[16];
	int a, b;

	assert_int_equal(php_layout__parse_version("8.2.36\r\n", 8, &a, &b, v, sizeof(v)), 0);
	assert_int_equal(a, 8);
	assert_int_equal(b, 2);
	assert_string_equal(v, "8.2.36");
	assert_int_equal(php_layout__parse_version("7.4.33-1+deb", 12, &a, &b, v, sizeof(v)), 0);
	assert_string_equal(v, "7.4.33");
	assert_int_equal(php_layout__parse_version("8.3", 3, &a, &b, v, sizeof(v)), 0);
	assert_string_equal(v, "8.3");
	assert_int_equal(php_layout__parse_version("8.2.36", 4, &a, &b, v, sizeof(v)), 0);
	assert_string_equal(v, "8.2");	/* cut: the patch level is not read past len */
	assert_int_equal(php_layout__parse_version("8.", 2, &a, &b, v, sizeof(v)), -EINVAL);
	assert_int_equal(php_layout__parse_version("x.2", 3, &a, &b, v, sizeof(v)), -EINVAL);
	assert_int_equal(php_layout__parse_version("8", 1, &a, &b, v, sizeof(v)), -EINVAL);
	assert_int_equal(php_layout__parse_version("1234.1", 6, &a, &b, v, sizeof(v)), -EINVAL);
	assert_int_equal(php_layout__parse_version("", 0, &a, &b, v, sizeof(v)), -EINVAL);
}

/* A zend_string of 8.2 layout holding s, in buf; returns its size. */
static size_t make_string(uint8_t *buf, size_t cap, const char *s, int64_t len)
{
	size_t n = strlen(s);

	memset(buf, 0, cap);
	memcpy(buf + 16, &len, 8);
	assert_true(24 + n <= cap);
	memcpy(buf + 24, s, n);
	return 24 + n;
}

static void test_strings(void **state)
{
	struct php_layout l;
	struct strbuf sb = STRBUF_INIT;
	uint8_t buf[512];
	size_t n;

	assert_int_equal(php_layout__for_version(8, 2, &l), 0);
	n = make_string(buf, sizeof(buf), "Work::alpha", 11);
	assert_int_equal(php_layout__string(&l, buf, n, &sb), 0);
	assert_string_equal(sb.buf, "Work::alpha");
	strbuf_reset(&sb);
	n = make_string(buf, sizeof(buf), "a;b\nc", 5);	/* the .col separator, a control */
	assert_int_equal(php_layout__string(&l, buf, n, &sb), 0);
	assert_string_equal(sb.buf, "a?b?c");
	strbuf_reset(&sb);
	n = make_string(buf, sizeof(buf), "longer than read", 400);	/* keeps what was read */
	assert_int_equal(php_layout__string(&l, buf, n, &sb), 0);
	assert_string_equal(sb.buf, "longer than read");
	strbuf_reset(&sb);
	make_string(buf, sizeof(buf), "", 1000);	/* capped at PHP_NAME_MAX */
	assert_int_equal(php_layout__string(&l, buf, sizeof(buf), &sb), 0);
	assert_int_equal(sb.len, PHP_NAME_MAX);
	strbuf_reset(&sb);
	make_string(buf, sizeof(buf), "x", -1);
	assert_int_equal(php_layout__string(&l, buf, 25, &sb), -EINVAL);
	make_string(buf, sizeof(buf), "x", 2 << 20);
	assert_int_equal(php_layout__string(&l, buf, 25, &sb), -EINVAL);
	assert_int_equal(php_layout__string(&l, buf, 23, &sb), -EINVAL);	/* no header */
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

/* A zend_function of 8.2 layout in fn[PHP_FN_READ]. */
static void make_fn(uint8_t *fn, uint8_t type, uint64_t name, uint64_t scope, uint64_t file,
		    uint32_t start, uint32_t end)
{
	memset(fn, 0, PHP_FN_READ);
	fn[0] = type;
	memcpy(fn + 8, &name, 8);
	memcpy(fn + 16, &scope, 8);
	memcpy(fn + 152, &file, 8);
	memcpy(fn + 160, &start, 4);
	memcpy(fn + 164, &end, 4);
}

static void test_fn_print_and_lines(void **state)
{
	struct php_layout l;
	struct php_fn_print p;
	uint8_t fn[PHP_FN_READ];

	assert_int_equal(php_layout__for_version(8, 2, &l), 0);
	make_fn(fn, PHP_USER_FUNCTION, 0x1000, 0x2000, 0x3000, 10, 20);
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), 0);
	assert_int_equal(p.name, 0x1000);
	assert_int_equal(p.scope, 0x2000);
	assert_int_equal(p.file, 0x3000);
	assert_int_equal(php_layout__line(&p, true, 15), 15);
	assert_int_equal(php_layout__line(&p, true, 21), 10);	/* another function's op */
	assert_int_equal(php_layout__line(&p, true, 0), 10);
	assert_int_equal(php_layout__line(&p, false, 15), 10);
	assert_int_equal(php_layout__fn_print(&l, fn, 167, &p), -EINVAL);	/* short */
	make_fn(fn, PHP_USER_FUNCTION, 0, 0, 0x3000, 1, 0);	/* main: no end line */
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), 0);
	assert_int_equal(php_layout__line(&p, true, 400), 400);
	make_fn(fn, PHP_USER_FUNCTION, 0x1000, 0, 0, 1, 2);	/* user code with no file */
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), -EINVAL);
	make_fn(fn, PHP_INTERNAL_FUNCTION, 0x1000, 0, 0, 0, 0);
	assert_int_equal(php_layout__fn_print(&l, fn, 24, &p), 0);	/* no op_array part */
	assert_int_equal(php_layout__line(&p, true, 5), 0);
	make_fn(fn, PHP_INTERNAL_FUNCTION, 0, 0, 0, 0, 0);
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), -EINVAL);
	make_fn(fn, 3, 0x1000, 0, 0x3000, 1, 2);	/* ZEND_OVERLOADED_FUNCTION, or junk */
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), -EINVAL);
	make_fn(fn, PHP_EVAL_CODE, 0, 0, 0x3000, 1, 1);
	assert_int_equal(php_layout__fn_print(&l, fn, sizeof(fn), &p), 0);
}

static void test_file_names(void **state)
{
	static const char *const yes[] = { "/usr/bin/php", "/usr/bin/php8.2", "/usr/sbin/php-fpm8.2",
					   "/usr/bin/php-cgi", "/opt/php/bin/php-fpm",
					   "/usr/lib/apache2/modules/libphp8.2.so", "libphp.so",
					   "/usr/lib/libphp7.so.1" };
	static const char *const no[] = { "/usr/bin/phpize", "/usr/bin/php-config8.2",
					  "/usr/bin/phpdbg8.2", "/usr/lib/libphpx.a", "/bin/bash",
					  "/usr/bin/python3", "/usr/bin/php8.2-x", "" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_true(php_file_name_matches(yes[i]));
		assert_true(php_runtime.likely(yes[i]));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(php_file_name_matches(no[i]));
}

/* Random bytes into every decoder: no crash, no read out of bounds (ASan). */
static void test_random_bytes(void **state)
{
	struct php_layout l;
	struct strbuf sb = STRBUF_INIT;
	uint8_t buf[PHP_FN_READ + 300];
	unsigned seed = 12345;

	assert_int_equal(php_layout__for_version(8, 4, &l), 0);
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)rand_r(&seed) % sizeof(buf);
		uint8_t *b = malloc(len ? len : 1);	/* exact size: ASan sees any overrun */
		struct php_fn_print p;
		char v[16];
		int a, c;
		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)rand_r(&seed);
		if (len > 24 && round % 2)	/* plausible lengths too */
			memset(b + 19, 0, 5);
		if (len > 0 && round % 3 == 0)
			b[0] = (uint8_t)(1 + rand_r(&seed) % 4);
		strbuf_reset(&sb);
		if (php_layout__string(&l, b, len, &sb) == 0)
			assert_true(sb.len <= PHP_NAME_MAX);
		if (php_layout__fn_print(&l, b, len, &p) == 0)
			(void)php_layout__line(&p, true, (uint32_t)rand_r(&seed));
		(void)php_layout__parse_version((const char *)b, len, &a, &c, v, sizeof(v));
		free(b);
	}
	strbuf_release(&sb);
}

/* ---- a hand-built Zend stack in this process ---- */

struct zstr {
	uint8_t b[24 + 64];
};

struct fake {
	uint64_t eg[64];		/* executor_globals up to current_execute_data */
	uint8_t ed[8][PHP_ED_READ];
	uint8_t fn[8][PHP_FN_READ];
	uint8_t op[8][32];		/* one zend_op per frame */
	struct zstr names[8], file, cls;
	uint8_t ce[16];
};

static void zs(struct zstr *z, const char *s)
{
	make_string(z->b, sizeof(z->b), s, (int64_t)strlen(s));
}

static uint64_t a(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void set64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

/* frame i (0 newest) runs fn i at line, with prev frame i + 1 (none after nr - 1). */
static void fake_frame(struct fake *f, int i, int nr, uint32_t type_info, uint32_t lineno)
{
	memset(f->ed[i], 0, PHP_ED_READ);
	set64(f->ed[i], 0, a(f->op[i]));
	set64(f->ed[i], 24, a(f->fn[i]));
	memcpy(f->ed[i] + 40, &type_info, 4);
	set64(f->ed[i], 48, i + 1 < nr ? a(f->ed[i + 1]) : 0);
	memcpy(f->op[i] + 24, &lineno, 4);
}

/* <main> (app.php:30) -> Work::run (app.php:12) -> strlen (internal), newest first. */
static struct fake *fake_new(struct runtime_proc *rp)
{
	struct fake *f = calloc(1, sizeof(*f));

	memset(rp, 0, sizeof(*rp));
	rp->pid = getpid();
	assert_int_equal(php_layout__for_version(8, 2, &rp->l), 0);
	snprintf(rp->version, sizeof(rp->version), "8.2.99");
	rp->eg_cur = a(f->eg) + 488;
	rp->fn_by_addr = hashmap__new();
	rp->fn_by_name = hashmap__new();
	zs(&f->file, "/srv/app.php");
	zs(&f->cls, "Work");
	zs(&f->names[0], "strlen");
	zs(&f->names[1], "run");
	set64(f->ce, 8, a(f->cls.b));
	make_fn(f->fn[0], PHP_INTERNAL_FUNCTION, a(f->names[0].b), 0, 0, 0, 0);
	make_fn(f->fn[1], PHP_USER_FUNCTION, a(f->names[1].b), a(f->ce), a(f->file.b), 10, 14);
	make_fn(f->fn[2], PHP_USER_FUNCTION, 0, 0, a(f->file.b), 1, 0);
	fake_frame(f, 0, 3, 0, 0);
	fake_frame(f, 1, 3, 0, 12);
	fake_frame(f, 2, 3, PHP_CALL_TOP, 30);
	set64((uint8_t *)f->eg, 488, a(f->ed[0]));
	return f;
}

/* The names of the sample, ';'-joined, root first; "" for none. */
static int sample_names(struct runtime_proc *rp, struct strbuf *sb, struct rt_frame *fr, int max)
{
	int n = php_runtime.sample(rp, getpid(), fr, max);

	strbuf_reset(sb);
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ';');
		php_runtime.frame_name(rp, &fr[i], sb);
	}
	return n;
}

static void test_walk_fake_stack(void **state)
{
	struct runtime_proc *rp = calloc(1, sizeof(*rp));
	struct fake *f = fake_new(rp);
	struct strbuf sb = STRBUF_INIT;
	struct rt_frame fr[PHP_MAX_FRAMES];

	for (int round = 0; round < 3; round++) {	/* the remembered chain, then again */
		assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
		assert_string_equal(sb.buf, "<main> (/srv/app.php:30)_[php];"
					    "Work::run (/srv/app.php:12)_[php];strlen_[php]");
		assert_true(fr[0].flags & RT_FRAME_ENTRY);
		assert_false(fr[1].flags & RT_FRAME_ENTRY);
		assert_false(fr[0].flags & RT_FRAME_TRUNCATED);
	}
	assert_int_equal(rp->nr_fns, 3);
	/* another thread: NTS PHP runs on the main thread only */
	assert_int_equal(php_runtime.sample(rp, getpid() + 1, fr, 64), 0);
	/* an opline outside the function: its first line */
	memcpy(f->op[1] + 24, &(uint32_t){ 99 }, 4);
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_non_null(strstr(sb.buf, "Work::run (/srv/app.php:10)_[php]"));
	/* a callback entered from native code starts an activation */
	memcpy(f->ed[1] + 40, &(uint32_t){ PHP_CALL_TOP }, 4);
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_true(fr[1].flags & RT_FRAME_ENTRY);
	/* an opline that points nowhere: the first line, the rest of the stack intact */
	set64(f->ed[1], 0, 0x10);
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_non_null(strstr(sb.buf, "Work::run (/srv/app.php:10)_[php]"));
	/* another function at the same address: named afresh */
	zs(&f->names[2], "other");
	set64(f->fn[1], 8, a(f->names[2].b));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_non_null(strstr(sb.buf, "Work::other (/srv/app.php:10)_[php]"));
	assert_int_equal(rp->nr_fns, 4);
	/* the same function compiled again elsewhere (the next request of a php-fpm without
	 * opcache): new strings, new address, the same frame */
	uint64_t id = fr[1].id;
	memcpy(f->fn[3], f->fn[1], PHP_FN_READ);
	zs(&f->names[3], "other");
	set64(f->fn[3], 8, a(f->names[3].b));
	set64(f->ed[1], 24, a(f->fn[3]));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_int_equal(fr[1].id, id);
	assert_int_equal(rp->nr_fns, 4);
	/* and the old address back with its old function: named again, no new entry */
	set64(f->fn[1], 8, a(f->names[1].b));
	set64(f->ed[1], 24, a(f->fn[1]));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_non_null(strstr(sb.buf, "Work::run (/srv/app.php:10)_[php]"));
	assert_int_equal(rp->nr_fns, 4);
	set64(f->fn[1], 8, a(f->names[2].b));
	/* only the newest frames fit: the outermost kept is marked */
	assert_int_equal(sample_names(rp, &sb, fr, 2), 2);
	assert_true(fr[0].flags & RT_FRAME_TRUNCATED);
	assert_string_equal(sb.buf, "Work::other (/srv/app.php:10)_[php];strlen_[php]");
	/* no PHP running */
	set64((uint8_t *)f->eg, 488, 0);
	assert_int_equal(php_runtime.sample(rp, getpid(), fr, 64), 0);
	php_runtime.detach(rp);
	strbuf_release(&sb);
	free(f);
}

static void test_walk_broken_stacks(void **state)
{
	struct runtime_proc *rp = calloc(1, sizeof(*rp));
	struct fake *f = fake_new(rp);
	struct strbuf sb = STRBUF_INIT;
	struct rt_frame fr[PHP_MAX_FRAMES];
	long pg = sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(gone != MAP_FAILED);
	munmap(gone, (size_t)pg);
	/* prev points at an unmapped page: the frames read so far, marked truncated */
	set64(f->ed[1], 48, a(gone));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 2);
	assert_true(fr[0].flags & RT_FRAME_TRUNCATED);
	assert_string_equal(sb.buf, "Work::run (/srv/app.php:12)_[php];strlen_[php]");
	/* a cycle */
	set64(f->ed[1], 48, a(f->ed[0]));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 2);
	assert_true(fr[0].flags & RT_FRAME_TRUNCATED);
	set64(f->ed[1], 48, a(f->ed[2]));
	/* a function that cannot be read: an unknown frame, the others named */
	set64(f->ed[1], 24, a(gone));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_string_equal(sb.buf, "<main> (/srv/app.php:30)_[php];[unknown]_[php];strlen_[php]");
	/* a function whose name cannot be read */
	set64(f->ed[1], 24, a(f->fn[1]));
	set64(f->fn[1], 8, a(gone));
	assert_int_equal(sample_names(rp, &sb, fr, 64), 3);
	assert_string_equal(sb.buf, "<main> (/srv/app.php:30)_[php];[unknown]_[php];strlen_[php]");
	/* current_execute_data unreadable (the process is gone): an error, no frames */
	rp->eg_cur = a(gone);
	assert_true(php_runtime.sample(rp, getpid(), fr, 64) < 0);
	/* random bytes for every frame and function: no crash, frames or an error */
	rp->eg_cur = a(f->eg) + 488;
	unsigned seed = 7;
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 3; i++) {
			for (size_t k = 0; k < PHP_ED_READ; k++)
				f->ed[i][k] = (uint8_t)rand_r(&seed);
			for (size_t k = 0; k < PHP_FN_READ; k++)
				f->fn[i][k] = (uint8_t)rand_r(&seed);
			if (round % 2) {	/* keep the links, so that the junk is read */
				set64(f->ed[i], 24, a(f->fn[i]));
				set64(f->ed[i], 48, i < 2 ? a(f->ed[i + 1]) : 0);
				f->fn[i][0] = (uint8_t)(1 + rand_r(&seed) % 4);
			}
		}
		int n = sample_names(rp, &sb, fr, 64);
		assert_true(n <= 64);
	}
	php_runtime.detach(rp);
	strbuf_release(&sb);
	free(f);
}

/* A stack deeper than the walk goes: the newest frames, truncated. */
static void test_walk_deep_stack(void **state)
{
	struct runtime_proc *rp = calloc(1, sizeof(*rp));
	struct fake *f = fake_new(rp);
	enum { DEPTH = PHP_MAX_STEPS + 50 };
	uint8_t (*ed)[PHP_ED_READ] = calloc(DEPTH, PHP_ED_READ);
	struct rt_frame fr[PHP_MAX_FRAMES];

	for (int i = 0; i < DEPTH; i++) {
		set64(ed[i], 0, a(f->op[1]));
		set64(ed[i], 24, a(f->fn[1]));
		set64(ed[i], 48, i + 1 < DEPTH ? a(ed[i + 1]) : 0);
	}
	set64((uint8_t *)f->eg, 488, a(ed[0]));
	for (int round = 0; round < 2; round++) {
		assert_int_equal(php_runtime.sample(rp, getpid(), fr, PHP_MAX_FRAMES), PHP_MAX_FRAMES);
		assert_true(fr[0].flags & RT_FRAME_TRUNCATED);
	}
	php_runtime.detach(rp);
	free(ed);
	free(f);
}

static void test_not_php(void **state)
{
	char reason[128] = "";
	struct proc_ref p = { getpid(), getpid() };

	assert_null(php_runtime.attach(&p, reason));
	assert_string_equal(reason, "");
	p.pid = p.nspid = 0x7ffffff0;	/* no such process */
	assert_null(php_runtime.attach(&p, reason));
	php_runtime.detach(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_table),
		cmocka_unit_test(test_parse_version),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_fn_print_and_lines),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_walk_fake_stack),
		cmocka_unit_test(test_walk_broken_stacks),
		cmocka_unit_test(test_walk_deep_stack),
		cmocka_unit_test(test_not_php),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
