/* The JFR reader (format/jfr.h) on a real recording made here at test time: a small Java
 * program (CPU in two functions, allocations in and outside TLABs, a contended monitor)
 * run with -XX:StartFlightRecording. The truth is the JDK's own reader, `jfr print
 * --json`: every event kind's samples, bytes and full stacks must be the same. Then the
 * recording cut short and corrupted must give -EINVAL with a message, never a crash, and
 * the labels snapshot reader its errors. The Java agent's own recordings:
 * test_jfr_agent.c. Skipped when there is no JDK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "format/jfr.h"
#include "format/jfr_labels_priv.h"
#include "jfr_labels.pb-c.h"
#include "jfr_truth.h"
#include "scratch.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

static char dir[64];
static struct strbuf rec = STRBUF_INIT;	/* the recording */
static json_t *recorded;		/* jfr print --json of rec */

static const char java_src[] =
	"public class Work {\n"
	"  static volatile double sink; static volatile Object keep;\n"
	"  static final Object lock = new Object();\n"
	"  static void kilnAlpha(long n) { double x = 0; for (long i = 0; i < n; i++)\n"
	"    x += Math.sqrt(x + i); sink = x; }\n"
	"  static void kilnAlloc(int n) { for (int i = 0; i < n; i++) {\n"
	"    keep = new byte[4096 + (i & 1023)]; if ((i & 255) == 0) keep = new byte[2 << 20]; } }\n"
	"  static void kilnLock() { synchronized (lock) { kilnAlpha(200000); } }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    long stop = System.currentTimeMillis() + 1500;\n"
	"    Thread t = new Thread(() -> { while (System.currentTimeMillis() < stop) kilnLock(); });\n"
	"    t.start();\n"
	"    while (System.currentTimeMillis() < stop) { kilnAlpha(100000); kilnAlloc(200); kilnLock(); }\n"
	"    t.join(); } }\n";

static int run(const char *cmd)
{
	int ret = system(cmd);
	return ret == -1 ? -1 : WEXITSTATUS(ret);
}

static int setup(void **state)
{
	struct strbuf cmd = STRBUF_INIT, js = STRBUF_INIT;
	FILE *f;

	if (run("command -v java >/dev/null && command -v javac >/dev/null && "
		"command -v jfr >/dev/null"))
		return 0;	/* each test skips */
	assert_int_equal(scratch__make(dir, sizeof(dir), "jfr"), 0);
	strbuf_addf(&cmd, "%s/Work.java", dir);
	f = fopen(cmd.buf, "w");
	assert_non_null(f);
	fputs(java_src, f);
	fclose(f);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "cd %s && javac Work.java && java -XX:StartFlightRecording=filename=w.jfr,"
		    "settings=profile,jdk.ObjectAllocationInNewTLAB#enabled=true,"
		    "jdk.ObjectAllocationOutsideTLAB#enabled=true,jdk.JavaMonitorEnter#threshold=0ms,"
		    "jdk.ThreadPark#threshold=0ms -cp . Work >java.log 2>&1 && "
		    "jfr print --json --stack-depth 64 --events jdk.ExecutionSample,"
		    "jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB,"
		    "jdk.JavaMonitorEnter,jdk.ThreadPark w.jfr >w.json", dir);
	assert_int_equal(run(cmd.buf), 0);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "%s/w.jfr", dir);
	assert_true(strbuf_read_file(&rec, cmd.buf) >= 0);
	strbuf_reset(&cmd);
	strbuf_addf(&cmd, "%s/w.json", dir);
	assert_true(strbuf_read_file(&js, cmd.buf) >= 0);
	truth = recorded = json_loadb(js.buf, js.len, 0, NULL);
	assert_non_null(truth);
	strbuf_release(&js);
	assert_int_equal(scratch__remove(dir), 0);
	strbuf_release(&cmd);
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	json_decref(recorded);
	strbuf_release(&rec);
	(void)state;
	return 0;
}


static void test_matches_jdk(void **state)
{
	struct profile *p;
	struct jfr_stats st;
	char err[256];
	static const struct { enum jfr_sample_type type; const char *event, *field; } kinds[] = {
		{ JFR_CPU, "jdk.ExecutionSample", NULL },
		{ JFR_TLAB_OBJECTS, "jdk.ObjectAllocationInNewTLAB", NULL },
		{ JFR_TLAB_BYTES, "jdk.ObjectAllocationInNewTLAB", "tlabSize" },
		{ JFR_OUTSIDE_OBJECTS, "jdk.ObjectAllocationOutsideTLAB", NULL },
		{ JFR_OUTSIDE_BYTES, "jdk.ObjectAllocationOutsideTLAB", "allocationSize" },
		{ JFR_LOCK_COUNT, "jdk.JavaMonitorEnter", NULL },
		{ JFR_PARK_COUNT, "jdk.ThreadPark", NULL },
	};

	if (!rec.len)
		skip();
	p = profile__new();
	assert_int_equal(jfr__parse(p, rec.buf, rec.len, NULL, 10000000, &st, err, sizeof(err)), 0);
	assert_int_equal(st.chunks, 1);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct tally ours, jdk;
		jdk_tally(&jdk, kinds[k].event, kinds[k].field);
		our_tally(&ours, p, kinds[k].type);
		if (kinds[k].type == JFR_CPU) {	/* 10 ms a sample */
			assert_true(jdk.total > 0);
			jdk.total *= 10000000;
			struct hashmap_iter it = HASHMAP_ITER_INIT;
			void *v;
			while (hashmap__next(jdk.stacks, &it, NULL, NULL, &v))
				*(uint64_t *)v *= 10000000;
		}
		print_message("%s: %llu samples, %llu\n", kinds[k].event,
			      (unsigned long long)jdk.samples, (unsigned long long)jdk.total);
		assert_int_equal(st.samples[kinds[k].type], jdk.samples);
		same(&ours, &jdk, kinds[k].event);
		tally_free(&ours);
		tally_free(&jdk);
	}
	check_waits(p, "jdk.JavaMonitorEnter", JFR_LOCK_DURATION);
	/* the workload's own functions are there, in both allocation kinds */
	assert_true(profile__type_total(p, JFR_TLAB_OBJECTS) > 0);
	assert_true(profile__type_total(p, JFR_OUTSIDE_BYTES) >= (2 << 20));
	assert_true(profile__type_total(p, JFR_LOCK_COUNT) > 0);
	assert_true(profile__type_total(p, JFR_LOCK_DURATION) > 0);
	profile__free(p);
	(void)state;
}

/* Every cut of the recording is refused with a message; every corruption is survived. */
static void test_hostile(void **state)
{
	char err[256];
	struct strbuf bad = STRBUF_INIT;
	unsigned seed = 1;

	if (!rec.len)
		skip();
	for (size_t cut = 0; cut < rec.len; cut += cut < 4096 ? 97 : 4099) {
		struct profile *p = profile__new();
		err[0] = 0;
		assert_int_equal(jfr__parse(p, rec.buf, cut, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
		profile__free(p);
	}
	for (int round = 0; round < 300; round++) {
		struct profile *p = profile__new();
		strbuf_reset(&bad);
		strbuf_add(&bad, rec.buf, rec.len);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % rec.len;
			if (round % 3 == 0)
				at %= 512;	/* the header and the first events */
			bad.buf[at] = (char)(seed >> 24);
		}
		err[0] = 0;
		int ret = jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err));
		assert_true(ret == 0 || (ret == -EINVAL && err[0]));
		profile__free(p);
	}
	/* what the messages say */
	struct profile *p = profile__new();
	strbuf_reset(&bad);
	strbuf_add(&bad, rec.buf, rec.len);
	bad.buf[0] = 'X';
	assert_int_equal(jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "magic"));
	profile__free(p);
	p = profile__new();
	bad.buf[0] = 'F';
	memset(bad.buf + 24, 0x7f, 8);	/* the metadata offset */
	assert_int_equal(jfr__parse(p, bad.buf, bad.len, NULL, 1, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "metadata offset"));
	profile__free(p);
	strbuf_release(&bad);
	(void)state;
}


static void test_merge_generated(void **state)
{
	static const char *const cases[][2] = {
		{ "org/example/OrderService$$Lambda$669.0x0000000800fd7318", "org/example/OrderService$$Lambda_" },
		{ "Fib$$Lambda.0x00007ffa600c4da0", "Fib$$Lambda_" },
		{ "Burn$$Lambda$72/0x00007fa2b0087340", "Burn$$Lambda_" },
		{ "Burn$$Lambda72", "Burn$$Lambda_" },
		{ "Burn$$Lambda$72", "Burn$$Lambda$72" },
		{ "jdk/internal/reflect/GeneratedMethodAccessor31", "jdk/internal/reflect/GeneratedMethodAccessor_" },
		/* left alone */
		{ "jdk/internal/reflect/GeneratedMethodAccessor", "jdk/internal/reflect/GeneratedMethodAccessor" },
		{ "Work$$Lambda$87+0x00007f9d18008a08/2147046752", "Work$$Lambda$87+0x00007f9d18008a08/2147046752" },
		{ "$$Lambda$1", "$$Lambda$1" },
		{ "Burn$$Lambda$72.0x", "Burn$$Lambda$72.0x" },
		{ "java/lang/Thread", "java/lang/Thread" },
		{ "", "" },
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, cases[i][0]);
		jfr__merge_generated(&sb);
		assert_string_equal(sb.buf, cases[i][1]);
	}
	strbuf_release(&sb);
	(void)state;
}

static void test_labels(void **state)
{
	Jfr__LabelEntry le[2] = { JFR__LABEL_ENTRY__INIT, JFR__LABEL_ENTRY__INIT };
	Jfr__LabelEntry *lep[2] = { &le[0], &le[1] };
	Jfr__Context ctx = JFR__CONTEXT__INIT;
	Jfr__ContextEntry ce = JFR__CONTEXT_ENTRY__INIT, *cep = &ce;
	Jfr__StringEntry se[4] = { JFR__STRING_ENTRY__INIT, JFR__STRING_ENTRY__INIT,
				   JFR__STRING_ENTRY__INIT, JFR__STRING_ENTRY__INIT };
	Jfr__StringEntry *sep[4] = { &se[0], &se[1], &se[2], &se[3] };
	Jfr__LabelsSnapshot s = JFR__LABELS_SNAPSHOT__INIT;
	const char *str[4] = { "phase", "alpha", "route", "/api" };
	struct jfr_labels *l;
	char err[256];

	for (int i = 0; i < 4; i++) {
		se[i].key = 10 + i;
		se[i].value.data = (uint8_t *)str[i];
		se[i].value.len = strlen(str[i]);
	}
	le[0].key = 10, le[0].value = 11, le[1].key = 12, le[1].value = 13;
	ctx.n_labels = 2, ctx.labels = lep;
	ce.key = 7, ce.value = &ctx;
	s.n_contexts = 1, s.contexts = &cep, s.n_strings = 4, s.strings = sep;
	uint8_t buf[256];
	size_t n = jfr__labels_snapshot__pack(&s, buf);
	assert_int_equal(jfr__parse_labels(buf, n, &l, err, sizeof(err)), 0);
	const struct jfr_context *c = jfr__context(l, 7);
	assert_non_null(c);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->labels[0].key, "phase");
	assert_string_equal(c->labels[0].value, "alpha");
	assert_string_equal(c->labels[1].value, "/api");
	assert_null(jfr__context(l, 8));
	jfr__free_labels(l);
	/* a label naming a string the snapshot lacks */
	le[1].value = 99;
	n = jfr__labels_snapshot__pack(&s, buf);
	assert_int_equal(jfr__parse_labels(buf, n, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "string id 99"));
	assert_null(l);
	/* not a protobuf */
	assert_int_equal(jfr__parse_labels("\xff\xff\xff", 3, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "LabelsSnapshot"));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_jdk),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_merge_generated),
		cmocka_unit_test(test_labels),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
