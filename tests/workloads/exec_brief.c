/* Known-answer workload for processes that exec and live briefly. Run as
 *
 *     brieflaunch LAUNCH_CPU CHILD_CPU     (the same file under two names: the process
 *                                           name is the exec'd file's base name)
 *
 * the launcher pins itself to LAUNCH_CPU, forks, and the child execs this file again
 * through the path in $BRIEF_CHILD (a copy named e.g. briefchild), which moves itself
 * to CHILD_CPU at once and spins for about 70 ms of CPU in child_spin() (called from
 * child_run() from main) before it exits; the launcher waits and exits: fork, exec, the
 * child's work and both exits take less than 100 ms. The exec's COMM and MMAP2 records
 * are written on LAUNCH_CPU, every sample of the new image on CHILD_CPU: read ring after
 * ring, the samples come first and are unwound against the launcher's address space. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_CPU_NS (70 * 1000000L)	/* the child's work */
#define CHILD_WALL_NS (90 * 1000000L)	/* and at most this long, however busy the host */

static volatile unsigned long sink;

static long ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static __attribute__((noipa)) unsigned long child_spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

static __attribute__((noipa)) void child_run(void)
{
	long cpu0 = ns(CLOCK_THREAD_CPUTIME_ID), wall0 = ns(CLOCK_MONOTONIC);

	while (ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < CHILD_CPU_NS &&
	       ns(CLOCK_MONOTONIC) - wall0 < CHILD_WALL_NS)
		sink = child_spin(20000);
}

int main(int argc, char **argv)
{
	const char *child = getenv("BRIEF_CHILD");
	pid_t pid;
	int status;

	if (argc == 3 && !strcmp(argv[1], "child")) {
		if (pin(atoi(argv[2])) < 0)
			perror("sched_setaffinity");
		child_run();
		return 0;
	}
	if (argc != 3 || !child) {
		fprintf(stderr, "usage: BRIEF_CHILD=PATH %s LAUNCH_CPU CHILD_CPU\n", argv[0]);
		return 2;
	}
	if (pin(atoi(argv[1])) < 0)
		perror("sched_setaffinity");
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execl(child, child, "child", argv[2], (char *)NULL);
		perror("execl");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
