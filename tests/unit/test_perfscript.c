/* perf script collapsing: each of stackcollapse-perf.pl's rules on crafted samples in
 * perf's own layouts (the expected lines are what the script itself prints for them, e.g.
 * "(anonymous namespace)::x" is dropped as a process name because it starts with '(').
 * Real perf output is checked by tests/e2e/report_perf.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "format/perfscript.h"
#include "util/strbuf.h"

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collapses text and returns the folded lines, sorted. */
static char *collapse(const char *text, const struct perfscript_options *o, size_t *skipped)
{
	struct profile *p = profile__new();
	char *buf = NULL, *lines[64], *save = NULL, err[128];
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&buf, &len);
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(perfscript__parse(p, text, strlen(text), o, skipped, err, sizeof(err)), 0);
	col__write(f, p, false);
	fclose(f);
	for (char *l = strtok_r(buf, "\n", &save); l && n < 64; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&out, "%s\n", lines[i]);
	free(buf);
	profile__free(p);
	return strbuf_detach(&out, NULL);
}

static const char sample[] =
	"# ========\n"
	"# captured on: today\n"
	"sh 23210  1021.526759:    2004008 cpu-clock:ppp: \n"
	"\tffffffff8225fd19 pvm_irq_enable+0x19 ([kernel.kallsyms])\n"
	"\t            ddcc _dl_relocate_object+0x1ac (/usr/lib/ld-linux-x86-64.so.2)\n"
	"\t           1ab78 _dl_start_user+0x0 (/usr/lib/ld-linux-x86-64.so.2)\n"
	"\n"
	"V8 WorkerThread 24636/25607 [000] 94564.109216:    1000 cpu-clock:ppp: \n"
	"\t            432c [unknown] (/usr/bin/node)\n"
	"\t               0 [unknown] ([unknown])\n"
	"\n"
	"java 12688 6544038.708352: 500 cpu-clock:ppp: \n"
	"\t7f722d142778 Lorg/mozilla/Context;.call(Lorg/mozilla/Action;)Ljava/lang/Object; (/tmp/perf-19982.map)\n"
	"\t4069f5 std::foo(int)->inl_callee(char const*) (/opt/app)\n"
	"\t4069f0 (anonymous namespace)::helper(int) (/opt/app)\n"
	"\t4069e0 net/http.(*Client).Do (/opt/goapp)\n"
	"\t4069d0 say\"hi\"; 'x' (/opt/app)\n"
	"\n"
	"sh 23211  1021.5: 7 page-faults: \n"	/* another event: filtered out */
	"\tffffffff8225fd19 pvm_irq_enable+0x19 ([kernel.kallsyms])\n"
	"\n";

static void test_rules(void **state)
{
	struct perfscript_options o = { .annotate_kernel = true, .annotate_jit = true };
	size_t skipped = 99;
	char *got = collapse(sample, &o, &skipped);

	assert_string_equal(got,
		"V8_WorkerThread;[unknown];[node] 1000\n"
		"java;sayhi: x;net/http.(*Client).Do;std::foo;inl_callee_[i];"
		"org/mozilla/Context:.call_[j] 500\n"
		"sh;_dl_start_user;_dl_relocate_object;pvm_irq_enable_[k] 2004008\n");
	assert_int_equal(skipped, 0);
	free(got);
}

static void test_plain_and_ids(void **state)
{
	struct perfscript_options o = { .include_tid = true, .count_samples = true };
	char *got = collapse(sample, &o, NULL);

	assert_string_equal(got,
		"V8_WorkerThread-24636/25607;[unknown];[node] 1\n"
		"java-?/12688;sayhi: x;net/http.(*Client).Do;std::foo;inl_callee_[i];"
		"org/mozilla/Context:.call 1\n"
		"sh-?/23210;_dl_start_user;_dl_relocate_object;pvm_irq_enable 1\n");
	free(got);
	o = (struct perfscript_options){ .include_pid = true };
	got = collapse("a b 12/34 5.0: cycles:\n\t1 f (m)\n", &o, NULL);
	assert_string_equal(got, "a_b-12;f 1\n");	/* no period: 1; last sample kept */
	free(got);
}

static void test_odd_lines(void **state)
{
	size_t skipped = 0;
	char err[128];
	struct profile *p = profile__new();
	char *got = collapse("\n\n\tdeadbeef orphan (m)\n\nx 1 2: 3 ev:\nnot a frame\n\t1 (sh) (m)\n"
			     "\t2 g (m)\n\n", NULL, &skipped);

	/* frames before any header are ignored, "(comm)" frames skipped, junk counted; the
	 * comm is the shortest run of two or more characters before " pid " */
	assert_string_equal(got, "x_1_2:;g 3\n");
	assert_int_equal(skipped, 1);
	free(got);
	/* perf pads short comms with blanks: they are not part of the name */
	got = collapse("kdamond.0      76 [000] 1.0:  5 cpu-clock: \n\t1 f (m)\n\n", NULL, NULL);
	assert_string_equal(got, "kdamond.0;f 5\n");
	free(got);
	assert_int_equal(perfscript__parse(p, "1;2;3 4\n", 8, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "no perf script sample header found");
	profile__free(p);
}

/* Lines built to make a backtracking matcher quadratic finish in linear time. */
static void test_long_lines(void **state)
{
	size_t n = 1 << 20, skipped = 0;
	char *text = xmalloc(n + 64), err[128];
	struct profile *p = profile__new();

	memset(text, ' ', n);
	memcpy(text, "ab", 2);
	memcpy(text + n - 8, "1 2: e:\n", 8);	/* comm is "ab" + a million blanks */
	assert_int_equal(perfscript__parse(p, text, n, NULL, &skipped, err, sizeof(err)), 0);
	for (size_t i = 0; i < n; i++)
		text[i] = i % 2 ? ' ' : ':';
	memcpy(text, "ab 1 ", 5);
	text[n - 1] = '\n';
	assert_int_equal(perfscript__parse(p, text, n, NULL, &skipped, err, sizeof(err)), 0);
	memset(text, '\t', n);
	assert_false(perfscript__detect(text, n));
	free(text);
	profile__free(p);
}

/* Layouts perf itself no longer prints but older tools' files have: frame lines with no
 * indent (as in FlameGraph's perf-java-stacks-02.txt), and a frame with no symbol between
 * two blanks and its module, which the script keeps as a one-blank frame. */
static void test_old_layouts(void **state)
{
	static const char text[] =
		"\njava 19983 cycles:\n"
		"ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n"
		"7f722d12e1d4 LBusy;::main (/tmp/perf-19982.map)\n"
		"7f72432b4e9a start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)\n"
		"\n"
		"java 19984 cycles:\n"
		"\t7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)\n"
		"\t7f722d12e1d4 write0 (/tmp/perf-19982.map)\n"
		"\n";
	size_t skipped = 9;
	char *got = collapse(text, NULL, &skipped);

	/* "LBusy" keeps its L: the script strips it only from names with a '/' */
	assert_string_equal(got, "java;start_thread;LBusy:::main;native_write_msr_safe 1\n"
				 "java;write0;  1\n");
	assert_int_equal(skipped, 0);
	assert_true(perfscript__detect(text, strlen(text)));
	free(got);
}

static void test_detect(void **state)
{
	assert_true(perfscript__detect(sample, strlen(sample)));
	assert_false(perfscript__detect("a;b;c 12\nd;e 3\n", 15));
	assert_false(perfscript__detect("", 0));
	assert_false(perfscript__detect("sh 1 2: ev:\n", 12));	/* a header alone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_plain_and_ids),
		cmocka_unit_test(test_odd_lines),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_old_layouts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
