/* The Python reader against real interpreters: the known-answer workload under every
 * installed CPython (Debian's python3 and each pyenv build), read by python_runtime
 * without the sampler. Checks that >= 95% of reads carry Python frames, that alpha and
 * beta share the reads 70/30 within 3 points (a 3-sigma bound at 3,000 reads; reads
 * count only when the workload ran since the previous one, so they sample its CPU time
 * even on a loaded machine), and that
 * functions, files, lines and activation marks are right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "python_harness.h"

#define READS 3000
#define MIN_RUN_NS 200000	/* CPU time the workload runs between two counted reads */

/* The CPU time process pid has run, from /proc/PID/schedstat (ns); 0 when unknown. */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

struct tally {
	int reads, with_frames, alpha, beta, wrong, truncated;
	char first_wrong[512];
};

/* Names frames[0..n) into one ";"-joined string. */
static void join_names(struct runtime_proc *rp, const struct rt_frame *fr, int n, struct strbuf *sb)
{
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ';');
		python_runtime.frame_name(rp, &fr[i], sb);
	}
}

/* Checks one stack read from the workload: <module>;dispatch;alpha|beta with the
 * marker lines. Returns 1 alpha, 2 beta, 0 other (between calls), -1 wrong. */
static int classify(struct runtime_proc *rp, const struct rt_frame *fr, int n, const char *script,
		    const int *lines, struct strbuf *sb)
{
	strbuf_reset(sb);
	join_names(rp, fr, n, sb);
	if (n < 1 || !(fr[0].flags & RT_FRAME_ENTRY))
		return -1;
	char want[1024];
	snprintf(want, sizeof(want), "<module> (%s:", script);
	if (strncmp(sb->buf, want, strlen(want)) != 0)
		return -1;
	if (n < 3)
		return 0;
	for (int which = 0; which < 2; which++) {
		const char *fn = which ? "beta" : "alpha";
		int body = lines[which * 3], disp = lines[which * 3 + 1], mod = lines[which * 3 + 2];
		char a[2048];
		/* any line of the function: def (3.11+ RESUME), x = 0, the loop, the sum, return */
		for (int line = body - 3; line <= body + 1; line++) {
			snprintf(a, sizeof(a), "<module> (%s:%d)_[p];dispatch (%s:%d)_[p];%s (%s:%d)_[p]",
				 script, mod, script, disp, fn, script, line);
			if (n == 3 && strcmp(sb->buf, a) == 0)
				return which + 1;
		}
	}
	return -1;
}

static void run_ratio(const char *python, const char *script, const int *lines, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	pid_t pid = start_python(python, script, "60");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = python_runtime.attach(&p, reason);
	if (!rp) {
		stop_python(pid);
		fail_msg("%s: not attached: %s", python, reason);
	}
	struct strbuf sb = STRBUF_INIT;
	struct rt_frame fr[64];
	uint64_t last = cpu_ns(pid);
	for (int i = 0; t->reads < READS && i < 8 * READS; i++) {
		jitter_sleep();
		/* count a read only when the workload ran since the last one: on a loaded
		 * machine a descheduled process shows one stack to many reads */
		uint64_t now = cpu_ns(pid);
		if (now < last + MIN_RUN_NS)
			continue;
		last = now;
		int n = python_runtime.sample(rp, pid, fr, 64);
		t->reads++;
		if (n > 0)
			t->with_frames++;
		if (n > 0 && (fr[0].flags & RT_FRAME_TRUNCATED))
			t->truncated++;
		int c = n > 0 ? classify(rp, fr, n, script, lines, &sb) : 0;
		if (c == 1)
			t->alpha++;
		else if (c == 2)
			t->beta++;
		else if (c < 0 && t->wrong++ == 0)
			snprintf(t->first_wrong, sizeof(t->first_wrong), "%s", sb.buf);
	}
	strbuf_release(&sb);
	python_runtime.detach(rp);
	stop_python(pid);
}

static void test_ratio_every_version(void **state)
{
	char pythons[MAX_PYTHONS][512], script[512];
	int np = find_pythons(pythons, MAX_PYTHONS), failures = 0;
	workload_path("python_ratio.py", script, sizeof(script));
	int lines[6] = { marker_line(script, "alpha"), marker_line(script, "dispatch-alpha"),
			 marker_line(script, "module-alpha"), marker_line(script, "beta"),
			 marker_line(script, "dispatch-beta"), marker_line(script, "module-beta") };
	assert_true(np > 0);
	for (int v = 0; v < np; v++) {
		struct tally t;
		run_ratio(pythons[v], script, lines, &t);
		double share = t.alpha + t.beta ? (double)t.alpha / (t.alpha + t.beta) : 0;
		/* 3 sigma of a 70/30 share over the alpha+beta reads, at most 3 points */
		double tol = 3 * sqrt(0.7 * 0.3 / (t.alpha + t.beta + 1));
		/* 3 points, or 3 sigma when too few reads for 3 points to be a 3-sigma bound */
		bool ok = t.reads > 0 && t.with_frames * 100 >= t.reads * 95 &&
			  fabs(share - 0.7) <= fmax(0.03, tol) && t.wrong * 100 <= t.reads;
		printf("%-40s reads %d with-python %.1f%% alpha %.1f%% (3 sigma %.1f) wrong %d truncated %d %s\n",
		       pythons[v], t.reads, 100.0 * t.with_frames / (t.reads ? t.reads : 1), 100 * share, 100 * tol,
		       t.wrong, t.truncated, ok ? "ok" : "FAIL");
		if (t.wrong)
			printf("    first wrong stack: %s\n", t.first_wrong);
		failures += !ok;
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratio_every_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
