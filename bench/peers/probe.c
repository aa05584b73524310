/* bench/peers.sh's slowdown probe: one CPU-bound process beside the workloads, doing
 * units of fixed work until SIGTERM, then printing "units cpu_seconds". Units done in the
 * same window, against the runs with no profiler, say how much of the machine the
 * profiler took from the work (and how much it slowed what it profiled, when it
 * samples the probe too). */
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t stop;
static volatile unsigned long sink;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static __attribute__((noinline)) void unit(void)
{
	unsigned long x = sink;
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct timespec cpu;
	unsigned long units = 0;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		unit();
		units++;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("%lu %.3f\n", units, (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	return 0;
}
