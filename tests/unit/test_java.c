/* The kiln side of the JVM agent's stacks file: parsing (including hostile input), the
 * thread list, and the scaled merge into a session profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"
#include "runtimes/java.h"
#include "runtimes/java_stacks.h"
#include "util/strbuf.h"

static uint64_t count_of(struct profile *p, const char *joined)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t found = 0;

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack st = profile__stack(p, i);
		strbuf_reset(&sb);
		for (uint32_t k = 0; k < st.depth; k++)
			strbuf_addf(&sb, "%s%s", k ? ";" : "", profile__name(p, st.frames[k]));
		if (!strcmp(sb.buf, joined))
			found = st.count;
	}
	strbuf_release(&sb);
	return found;
}

static void test_parse(void **state)
{
	char text[] = "# kiln-jvm 1 seq=42 samples=40 lost=0 final=1 threads=3 notjava=0\n"
		      "# tids 101 102\n"
		      "java.lang.Thread.run_[0];A.alpha_[j] 30\n"
		      "java.lang.Thread.run_[0];A.beta_[i] 10\n";
	struct java_result r = { .pid = 100 };
	uint64_t seq = 0;

	assert_int_equal(java_stacks__parse(&r, text, 100, &seq), 0);
	assert_int_equal(seq, 42);
	assert_int_equal(r.samples, 40);
	assert_int_equal(profile__nr_stacks(r.stacks), 2);
	assert_int_equal(count_of(r.stacks, "java.lang.Thread.run_[0];A.alpha_[j]"), 30);
	assert_int_equal(r.nr_tids, 2);
	assert_true(java_result__has_tid(&r, 102));
	assert_false(java_result__has_tid(&r, 103));
	java_result_release(&r);
	assert_null(r.stacks);
}

static void test_parse_hostile(void **state)
{
	char bad_header[] = "# not kiln\nA.a_[j] 3\n";
	char lines[] = "# kiln-jvm 1 seq=7 samples=9\n"
		       "# tids x 12\n"
		       "no_count\n"
		       "A.a_[j] 0\n"
		       "A.a_[j] -4\n"
		       "A.a_[j] 12abc\n"
		       " 5\n"
		       ";;; 6\n"
		       "A.ok_[j];;B.ok_[i] 2\n"
		       "# a comment 8\n"
		       "A.last_[j] 1";
	struct java_result r = { .pid = 5 };
	uint64_t seq = 0;

	assert_int_equal(java_stacks__parse(&r, bad_header, 5, &seq), -EPROTO);
	java_result_release(&r);
	r.pid = 5;
	assert_int_equal(java_stacks__parse(&r, lines, 5, &seq), 0);
	assert_int_equal(seq, 7);
	assert_int_equal(r.nr_tids, 0);	/* the list stops at the first non-number */
	assert_int_equal(r.samples, 3);	/* only the two well-formed stacks count */
	assert_int_equal(count_of(r.stacks, "A.ok_[j];B.ok_[i]"), 2);
	assert_int_equal(count_of(r.stacks, "A.last_[j]"), 1);
	java_result_release(&r);
}

static void test_merge_scales_exactly(void **state)
{
	char text[] = "# kiln-jvm 1 seq=1 samples=40\n"
		      "# tids 1\n"
		      "T.run_[0];A.alpha_[j] 30\n"
		      "T.run_[0];A.beta_[j] 10\n";
	const char *prefix[] = { "0", "", "java" };
	struct java_result r = { .pid = 77 };
	struct profile *p = profile__new();
	uint64_t seq;

	assert_int_equal(java_stacks__parse(&r, text, 77, &seq), 0);
	/* 7 perf samples: 5.25 and 1.75 round by largest remainder to 5 and 2 */
	assert_int_equal(java_result__merge(&r, p, prefix, 3, 7), 7);
	assert_int_equal(profile__total(p), 7);
	assert_int_equal(count_of(p, "0;;java;T.run_[0];A.alpha_[j]"), 5);
	assert_int_equal(count_of(p, "0;;java;T.run_[0];A.beta_[j]"), 2);
	/* scaling up keeps the ratio */
	struct profile *q = profile__new();
	assert_int_equal(java_result__merge(&r, q, prefix, 3, 400), 400);
	assert_int_equal(count_of(q, "0;;java;T.run_[0];A.alpha_[j]"), 300);
	/* nothing to scale to, or nothing to scale */
	assert_int_equal(java_result__merge(&r, q, prefix, 3, 0), 0);
	struct java_result empty = { .pid = 1 };
	assert_int_equal(java_result__merge(&empty, q, prefix, 3, 10), 0);
	assert_int_equal(profile__total(q), 400);
	profile__free(q);
	profile__free(p);
	java_result_release(&r);
}

static void test_start_without_library(void **state)
{
	struct java_opts o = { .frequency = 99, .lib_path = "/nonexistent/libkiln-jvm.so" };

	assert_null(java_session__start(&o));
	java_session__stop(NULL);
}

static void test_probe_non_jvm(void **state)
{
	struct jvm_target t;
	char reason[JVM_REASON_MAX] = "";

	/* this test process maps no libjvm.so: not a JVM, and nothing is sent to it */
	assert_int_equal(jvm_target__probe(getpid(), &t, reason), -ENOENT);
	assert_int_equal(jvm_target__probe(0x7ffffff0, &t, reason), -ENOENT);
}

static volatile sig_atomic_t quits;

static void on_quit(int sig)
{
	quits++;
}

/* A JVM is recognized by the library it maps, whatever the process is called: this test
 * process (not named java) becomes one for jvm__check once it maps libjvm.so. */
static void test_recognized_by_mapping(void **state)
{
	static const char libjvm[] = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
	void *h;

	assert_true(jvm__is_jvm_lib("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"));
	assert_true(jvm__is_jvm_lib("libjvm.so"));
	assert_true(jvm__is_jvm_lib("/opt/ibm/java/lib/default/libj9vm29.so"));
	assert_false(jvm__is_jvm_lib("/usr/bin/java"));
	assert_false(jvm__is_jvm_lib("/usr/lib/libjvm.so.old"));
	assert_false(jvm__is_jvm_lib("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
	assert_true(java_runtime.merge == RUNTIME_REPLACE);
	assert_true(java_runtime.likely == jvm__is_jvm_lib);

	assert_int_equal(jvm__check(getpid()), 0);
	if (access(libjvm, R_OK) < 0)
		skip();
	h = dlopen(libjvm, RTLD_LAZY | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(jvm__check(getpid()), 1);
	/* left mapped: a libjvm.so is not made to be unloaded */

	/* it catches SIGQUIT, but runs no HotSpot Signal Dispatcher: never signalled */
	struct jvm_target t;
	char reason[JVM_REASON_MAX] = "";
	signal(SIGQUIT, on_quit);
	assert_int_equal(jvm_target__probe(getpid(), &t, reason), 0);
	assert_false(t.sigquit_caught);
	assert_int_equal(jvm_target__load(&t, "/nonexistent.so", "", 100, reason), -EAGAIN);
	assert_int_equal(quits, 0);
	signal(SIGQUIT, SIG_DFL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_merge_scales_exactly),
		cmocka_unit_test(test_start_without_library),
		cmocka_unit_test(test_probe_non_jvm),
		cmocka_unit_test(test_recognized_by_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
