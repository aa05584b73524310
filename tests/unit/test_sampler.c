/* The sampler through its public interface, on the perf_event source: configs it refuses,
 * then real system-wide sampling of a child that spins (root or CAP_PERFMON: skipped
 * otherwise). The child's FORK, COMM and EXIT records and samples of its pid must arrive,
 * with callchains in fp mode and registers and a stack copy in dwarf mode, and the
 * counters must agree with what the callbacks saw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/procfs.h"
#include "agent/sampler.h"
#include "agent/source_perf.h"

#define WANT_SAMPLES 5
#define MAX_ROUNDS 100	/* of 100 ms polls: a bound on the wait, not a timing check */

struct seen {
	pid_t child;
	uint64_t text_lo, text_hi;	/* the mapping of this binary's code (the spin loop) */
	uint64_t all_samples, child_samples, child_with_ips, child_with_stack, child_in_text;
	bool forked, commed, exited;
	pid_t fork_ppid;
};

static void on_sample(void *ctx, const struct sampler_sample *s)
{
	struct seen *w = ctx;
	uint64_t uip;

	w->all_samples++;
	if (s->pid != w->child)
		return;
	assert_int_equal(s->tid, w->child);
	w->child_samples++;
	if (s->nr_user + s->nr_kernel > 0)
		w->child_with_ips++;
	if (s->has_regs && s->stack_len > 0 && s->sp && s->ip)
		w->child_with_stack++;
	uip = s->has_regs ? s->ip : s->nr_user ? s->user_ips[0] : 0;
	if (uip >= w->text_lo && uip < w->text_hi)
		w->child_in_text++;
}

static void on_comm(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct seen *w = ctx;

	if (pid == w->child && strcmp(comm, "kiln-spinner") == 0)
		w->commed = true;
}

static void on_fork(void *ctx, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	struct seen *w = ctx;

	if (pid == w->child && tid == w->child) {
		w->forked = true;
		w->fork_ppid = ppid;
	}
}

static void on_exit_rec(void *ctx, pid_t pid, pid_t tid)
{
	struct seen *w = ctx;

	if (pid == w->child)
		w->exited = true;
}

/* What a test leaves to its teardown, so that a failed assertion leaves no child
 * spinning and no sampler open. */
static pid_t spinner;
static struct sampler *sampler;

static int teardown(void **state)
{
	int status;

	if (spinner > 0) {
		kill(spinner, SIGKILL);
		waitpid(spinner, &status, 0);
	}
	spinner = 0;
	sampler__free(sampler);
	sampler = NULL;
	return 0;
}

static pid_t spin(void);

static void find_text(void *ctx, const struct mapping *m)
{
	struct seen *w = ctx;
	uint64_t fn = (uint64_t)(uintptr_t)&spin;

	if (fn >= m->start && fn < m->end) {
		w->text_lo = m->start;
		w->text_hi = m->end;
	}
}

static pid_t spin(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		volatile uint64_t x = 0;
		prctl(PR_SET_NAME, "kiln-spinner", 0, 0, 0);
		for (;;)
			x++;
	}
	spinner = pid;
	return pid;
}

static void test_refuses_bad_configs(void **state)
{
	struct perf_source_opts odd = { .ring_pages = 3 };
	struct sampler_config cfg = { .freq = 99 };
	struct sampler *s = NULL;
	char err[256] = "";

	cfg.kind = (enum sampler_kind)7;
	assert_int_equal(sampler__open(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown sample source kind 7 (known: perf)"));
	cfg.kind = SAMPLER_PERF;
	cfg.freq = 0;
	assert_int_equal(sampler__open(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "frequency"));
	cfg.freq = 99;
	cfg.user_regs_stack = true;
	cfg.stack_size = 100;
	assert_int_equal(sampler__open(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "100 bytes"));
	cfg.user_regs_stack = false;
	cfg.perf = &odd;
	assert_int_equal(sampler__open(&cfg, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "3 pages"));
	assert_null(s);
	sampler__free(NULL);
}

/* Opens cfg (freed by the teardown), or skips when perf_event is not allowed here. */
static struct sampler *open_or_skip(const struct sampler_config *cfg)
{
	struct sampler *s = NULL;
	char err[512] = "";
	int ret = sampler__open(cfg, &s, err, sizeof(err));

	sampler = s;
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT || ret == -ENODEV) {
		print_message("skipped: %s\n", err);
		skip();
	}
	if (ret < 0)
		fail_msg("sampler__open: %s", err);
	assert_string_equal(sampler__kind_name(s), "perf");
	assert_true(sampler__nr_cpus(s) >= 1);
	return s;
}

/* Runs a spinning child while sampling until WANT_SAMPLES of its samples came (or the
 * bound), read with sampler__poll (use_poll) or sampler__drain; stops the child and drains
 * (w then holds what it did alive), then kills it and drains again for its EXIT. */
static void sample_child(struct sampler *s, struct seen *w, bool use_poll)
{
	struct sampler_handlers h = { w, on_sample, on_comm, NULL, on_fork, on_exit_rec };
	struct sampler_stats st;
	struct seen alive;
	int status, n;

	assert_true(procfs__maps(getpid(), find_text, w) > 0);
	assert_true(w->text_hi > w->text_lo);
	assert_int_equal(sampler__enable(s), 0);
	w->child = spin();
	for (int i = 0; i < MAX_ROUNDS && w->child_samples < WANT_SAMPLES; i++) {
		if (use_poll) {
			n = sampler__poll(s, 100, &h);
		} else {
			usleep(100 * 1000);
			n = sampler__drain(s, &h);
		}
		assert_true(n >= 0 || n == -EINTR);
	}
	assert_true(w->child_samples >= WANT_SAMPLES);
	kill(w->child, SIGSTOP);
	assert_int_equal(waitpid(w->child, &status, WUNTRACED), w->child);
	assert_true(sampler__drain(s, &h) >= 0);
	alive = *w;
	kill(w->child, SIGKILL);
	assert_int_equal(waitpid(w->child, &status, 0), w->child);
	spinner = 0;
	assert_true(sampler__drain(s, &h) >= 0);
	assert_int_equal(sampler__disable(s), 0);
	st = sampler__stats(s);
	assert_true(alive.forked);
	assert_int_equal(alive.fork_ppid, getpid());
	assert_true(alive.commed);
	assert_false(alive.exited);
	assert_true(w->exited);
	/* every sample read was decoded and reached the callback, but for bad ones */
	assert_true(st.samples >= w->all_samples);
	assert_true(st.samples - w->all_samples <= st.bad);
	/* the child spends its life in the loop of spin(): most of its samples say so (the
	 * user ip the kernel saw, or the one in the registers) */
	print_message("%llu samples (%llu of the child, %llu of them in spin()), %llu lost\n",
		      (unsigned long long)w->all_samples, (unsigned long long)alive.child_samples,
		      (unsigned long long)alive.child_in_text, (unsigned long long)st.lost);
	assert_true(alive.child_in_text * 2 > alive.child_samples);
	*w = alive;
}

static void test_fp_samples_of_a_child(void **state)
{
	struct sampler_config cfg = { .kind = SAMPLER_PERF, .freq = 199, .callchain = true };
	struct sampler *s = open_or_skip(&cfg);
	struct seen w = { 0 };

	sample_child(s, &w, false);
	/* the child spins in user code: its callchains have frames */
	assert_int_equal(w.child_with_ips, w.child_samples);
	assert_int_equal(w.child_with_stack, 0);
}

static void test_dwarf_samples_of_a_child(void **state)
{
	struct perf_source_opts opts = { .ring_pages = 64 };
	struct sampler_config cfg = { .freq = 199, .callchain = true, .user_regs_stack = true,
				      .stack_size = 4096, .perf = &opts };
	struct sampler *s = open_or_skip(&cfg);
	struct seen w = { 0 };

	sample_child(s, &w, false);
	assert_int_equal(w.child_with_stack, w.child_samples);
}

static void test_eager_poll(void **state)
{
	struct sampler_config cfg = { .freq = 199, .callchain = true, .wake_per_sample = true };
	struct sampler *s = open_or_skip(&cfg);
	struct seen w = { 0 };

	assert_int_equal(sampler__set_eager(s, true), 0);
	assert_int_equal(sampler__set_eager(s, true), 0);	/* no change: no-op */
	sample_child(s, &w, true);
	assert_int_equal(sampler__set_eager(s, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_bad_configs),
		cmocka_unit_test_teardown(test_fp_samples_of_a_child, teardown),
		cmocka_unit_test_teardown(test_dwarf_samples_of_a_child, teardown),
		cmocka_unit_test_teardown(test_eager_poll, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
