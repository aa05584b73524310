/* kiln report's input recognition (format/detect.h), JFR recordings too, and the top
 * table (format/top.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/detect.h"
#include "format/jfr.h"
#include "format/pprof.h"
#include "format/top.h"
#include "util/strbuf.h"

#define DETECT(s) input__detect(s, sizeof(s) - 1)

/* A JFR recording the Pyroscope Java agent uploaded (tests/unit/data): recognized, and
 * each sample type read alone with the totals of format/jfr.h's parse. */
static void test_load_jfr(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct profile *all = profile__new(), *p;
	char err[256];

	assert_true(strbuf_read_file(&sb, "tests/unit/data/jfr-async-itimer-alloc.jfr") >= 0);
	assert_int_equal(input__detect(sb.buf, sb.len), INPUT_JFR);
	assert_string_equal(input__name(INPUT_JFR), "jfr");
	assert_int_equal(jfr__parse(all, sb.buf, sb.len, NULL, 10000000, NULL, err, sizeof(err)), 0);
	/* the first kind with samples: CPU */
	p = profile__new();
	assert_int_equal(input__load(p, sb.buf, sb.len, INPUT_UNKNOWN, NULL, err, sizeof(err)), 0);
	assert_int_equal(profile__nr_types(p), 1);
	assert_string_equal(profile__type(p, 0).type, "cpu");
	assert_true(profile__total(p) > 0);
	assert_int_equal(profile__total(p), profile__type_total(all, JFR_CPU));
	profile__free(p);
	p = profile__new();
	assert_int_equal(input__load(p, sb.buf, sb.len, INPUT_JFR, "alloc_in_new_tlab_bytes", err,
				     sizeof(err)), 0);
	assert_string_equal(profile__type(p, 0).unit, "bytes");
	assert_int_equal(profile__total(p), profile__type_total(all, JFR_TLAB_BYTES));
	profile__free(p);
	p = profile__new();
	assert_int_equal(input__load(p, sb.buf, sb.len, INPUT_JFR, "nonesuch", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "the JFR recording has no sample type 'nonesuch'");
	profile__free(p);
	p = profile__new();
	assert_int_equal(input__load(p, sb.buf, 100, INPUT_UNKNOWN, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "chunk 1 at offset 0"));
	profile__free(p);
	profile__free(all);
	strbuf_release(&sb);
	(void)state;
}

static void test_detect_text(void **state)
{
	assert_int_equal(DETECT("# {\"hostname\": \"h\"}\n0;;py;main 3\n"), INPUT_COL);
	assert_int_equal(DETECT("main;a 3\nmain;b\t4\r\n\n# comment\nmain 1\n"), INPUT_FOLDED);
	assert_int_equal(DETECT("sh 12 1.0: 100 cpu-clock: \n\tffff81 f+0x1 ([kernel.kallsyms])\n\n"),
			 INPUT_PERF_SCRIPT);
	/* perf's own "# ..." header lines come first in `perf script --header` */
	assert_int_equal(DETECT("# ========\n# cmdline : perf record\nsh 12 1.0: cycles: \n"
				"\t7f f (/lib/libc.so.6)\n"), INPUT_PERF_SCRIPT);
	assert_int_equal(DETECT("main;a 3\nthis line has no count\n"), INPUT_UNKNOWN);
	assert_int_equal(DETECT("hello world\n"), INPUT_UNKNOWN);
	assert_int_equal(input__detect("", 0), INPUT_UNKNOWN);
	assert_string_equal(input__name(INPUT_PERF_SCRIPT), "perf-script");
}

static void test_detect_pprof(void **state)
{
	struct profile *p = profile__new();
	const char *st[] = { "main", "work" };
	struct strbuf pb = STRBUF_INIT;

	profile__add_names(p, st, 2, 5);
	assert_int_equal(pprof__write(&pb, p), 0);
	assert_int_equal(input__detect(pb.buf, pb.len), INPUT_PPROF);	/* gzip */
	/* an uncompressed profile starts with field 1 (0x0a) and binary lengths */
	assert_int_equal(DETECT("\x0a\x04\x08\x01\x10\x02"), INPUT_PPROF);
	strbuf_release(&pb);
	profile__free(p);
}

static void test_load_and_prefix(void **state)
{
	static const char col[] = "# {\"frequency\": 11}\n0;;py;main;a 3\n1;c1;java;run 2\n";
	static const char folded[] = "0;x 1\n";
	struct profile *p = profile__new(), *q = profile__new();
	char err[128];

	assert_int_equal(input__load(p, col, sizeof(col) - 1, INPUT_UNKNOWN, NULL, err, sizeof(err)), 0);
	assert_int_equal(profile__total(p), 5);
	assert_int_equal(input__col_prefix(p), 2);
	/* a stack shorter than the prefix, or not starting with an index: no prefix */
	assert_int_equal(input__load(q, folded, sizeof(folded) - 1, INPUT_UNKNOWN, NULL, err,
				     sizeof(err)), 0);
	assert_int_equal(input__col_prefix(q), 0);
	assert_int_equal(input__load(q, "?", 1, INPUT_UNKNOWN, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown format: not .col, folded stacks, pprof, perf script output or JFR");
	profile__free(p);
	profile__free(q);
}

static void test_top(void **state)
{
	struct profile *p = profile__new();
	const char *a[] = { "0", "", "proc", "main", "work", "leaf" };
	const char *b[] = { "0", "", "proc", "main", "work" };
	const char *r[] = { "0", "", "proc", "main", "rec", "rec", "rec" };	/* recursion */
	struct top_row *rows;
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f;

	profile__add_names(p, a, 6, 6);
	profile__add_names(p, b, 5, 3);
	profile__add_names(p, r, 7, 1);
	n = top__compute(p, 3, &rows);
	assert_int_equal(n, 4);
	/* by self: leaf 6, work 3, rec 1, main 0 */
	assert_string_equal(profile__name(p, rows[0].name), "leaf");
	assert_int_equal(rows[0].self, 6);
	assert_int_equal(rows[1].self, 3);
	assert_int_equal(rows[1].total, 9);
	assert_string_equal(profile__name(p, rows[2].name), "rec");
	assert_int_equal(rows[2].total, 1);	/* counted once per stack */
	assert_string_equal(profile__name(p, rows[3].name), "main");
	assert_int_equal(rows[3].total, 10);
	free(rows);

	f = open_memstream(&buf, &len);
	assert_int_equal(top__write(f, p, 3, 2), 0);
	fclose(f);
	assert_string_equal(buf,
		"total: 10\n"
		"        self   self%        total  total%  function\n"
		"           6  60.00%            6  60.00%  leaf\n"
		"           3  30.00%            9  90.00%  work\n");
	free(buf);
	assert_int_equal(top__compute(p, 10, &rows), 0);
	assert_null(rows);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect_text),
		cmocka_unit_test(test_detect_pprof),
		cmocka_unit_test(test_load_and_prefix),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_load_jfr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
