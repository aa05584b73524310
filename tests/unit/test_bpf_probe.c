/* The BPF build rule, proven: src/bpf/probe.bpf.c, compiled by clang and wrapped by
 * bpftool into build/gen/bpf/probe.skel.h, is opened and loaded with libbpf through the
 * skeleton, attached to a cpu-clock perf_event of this process, and counts the samples
 * this process takes while it burns CPU. Skipped when the kernel refuses BPF here (not
 * root, no CAP_BPF/CAP_PERFMON, or no perf_event). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/probe.skel.h"

#define FREQ 1000		/* samples per second of CPU */
#define BURN_NS 300000000ull	/* CPU time to burn: about 300 samples */

static struct probe_bpf *skel;
static struct bpf_link *prog_link;
static int event_fd = -1;

static int teardown(void **state)
{
	bpf_link__destroy(prog_link);
	prog_link = NULL;
	if (event_fd >= 0)
		close(event_fd);
	event_fd = -1;
	probe_bpf__destroy(skel);
	skel = NULL;
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until this thread has used ns of CPU (a bound on work, not a timing check). */
static uint64_t burn(uint64_t ns)
{
	volatile uint64_t x = 0;
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			x++;
	return x;
}

static int open_cpu_clock(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = FREQ,
	};

	/* this process, on any CPU */
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void test_skeleton_counts_own_samples(void **state)
{
	int ret;

	skel = probe_bpf__open();
	assert_non_null(skel);	/* parsing the embedded object needs no privilege */
	assert_non_null(skel->progs.count_sample);
	assert_int_equal(bpf_program__type(skel->progs.count_sample), BPF_PROG_TYPE_PERF_EVENT);
	skel->rodata->target_tgid = (__u32)getpid();
	ret = probe_bpf__load(skel);
	if (ret == -EPERM || ret == -EACCES) {
		print_message("skipped: loading a BPF program: %s\n", strerror(-ret));
		skip();
	}
	assert_int_equal(ret, 0);
	assert_int_equal(skel->bss->target_samples, 0);

	event_fd = open_cpu_clock();
	if (event_fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOENT)) {
		print_message("skipped: opening a cpu-clock perf_event: %s\n", strerror(errno));
		skip();
	}
	assert_true(event_fd >= 0);
	prog_link = bpf_program__attach_perf_event(skel->progs.count_sample, event_fd);
	assert_non_null(prog_link);	/* libbpf 1.x returns NULL and sets errno on failure */

	burn(BURN_NS);
	bpf_link__destroy(prog_link);	/* detached: the counts stop here */
	prog_link = NULL;

	uint64_t mine = __atomic_load_n(&skel->bss->target_samples, __ATOMIC_RELAXED);
	uint64_t others = __atomic_load_n(&skel->bss->other_samples, __ATOMIC_RELAXED);
	print_message("%llu samples of this process, %llu of others (in %llu ms of CPU at %d Hz)\n",
		      (unsigned long long)mine, (unsigned long long)others,
		      (unsigned long long)(BURN_NS / 1000000), FREQ);
	/* The event follows this process only, so every sample is ours; and the program ran
	 * for them (at 1000 Hz, 300 ms of CPU is some 300 samples; ten is far from noise). */
	assert_true(mine >= 10);
	assert_int_equal(others, 0);

	/* After detaching, burning more CPU counts nothing. */
	burn(BURN_NS / 10);
	assert_int_equal(__atomic_load_n(&skel->bss->target_samples, __ATOMIC_RELAXED), mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_skeleton_counts_own_samples, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
