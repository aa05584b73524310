/* A kiln-independent driver of runtimes/java.h for the Java end-to-end tests and the
 * benchmark: attaches libkiln-jvm.so to the host's JVMs (or --pid ones) for --seconds,
 * collects once, and prints, per JVM,
 *   "jvm <pid> samples <n> tids <tid> ..."  or  "skip <pid> <reason>"
 * then its stacks as "<pid>;<frame>;...;<leaf> <count>".
 * Usage: java_probe [--hz N] [--seconds S] [--threads] [--pid P]... [--lib PATH]
 *                   [--flushes N]   (N intermediate flushes, printed as separate periods)
 *                   [--until-exit]  (with --pid: collect as soon as those processes exit) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "runtimes/java.h"

static void print_results(struct java_session *s, int period)
{
	size_t nr;
	const struct java_result *r = java_session__results(s, &nr);

	for (size_t i = 0; i < nr; i++) {
		if (r[i].skip_reason[0]) {
			printf("skip %d %s\n", (int)r[i].pid, r[i].skip_reason);
			continue;
		}
		printf("jvm %d period %d samples %llu lost %llu agent_cpu_us %llu tids", (int)r[i].pid,
		       period, (unsigned long long)r[i].samples, (unsigned long long)r[i].lost,
		       (unsigned long long)r[i].agent_cpu_us);
		for (size_t k = 0; k < r[i].nr_tids; k++)
			printf(" %d", (int)r[i].tids[k]);
		printf("\n");
		for (size_t k = 0; r[i].stacks && k < profile__nr_stacks(r[i].stacks); k++) {
			struct profile_stack st = profile__stack(r[i].stacks, k);
			printf("%d", (int)r[i].pid);
			for (uint32_t f = 0; f < st.depth; f++)
				printf(";%s", profile__name(r[i].stacks, st.frames[f]));
			printf(" %llu\n", (unsigned long long)st.count);
		}
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct java_opts o = { .frequency = 99 };
	pid_t pids[16];
	double seconds = 5;
	int flushes = 0;
	bool until_exit = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--threads")) {
			o.thread_names = true;
			continue;
		}
		if (!strcmp(a, "--until-exit")) {
			until_exit = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "java_probe: option '%s' needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--hz"))
			o.frequency = (unsigned)atoi(v);
		else if (!strcmp(a, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(a, "--lib"))
			o.lib_path = v;
		else if (!strcmp(a, "--flushes"))
			flushes = atoi(v);
		else if (!strcmp(a, "--pid") && o.nr_pids < 16)
			pids[o.nr_pids++] = atoi(v);
		else {
			fprintf(stderr, "java_probe: unknown option '%s'\n", a);
			return 2;
		}
	}
	o.pids = pids;
	o.poll_ms = 200;
	struct java_session *s = java_session__start(&o);
	if (!s)
		return 1;
	for (int p = 0; p <= flushes; p++) {
		double part = seconds / (flushes + 1);
		for (double slept = 0; slept < part; slept += 0.1) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			bool alive = !until_exit || !o.nr_pids;
			for (size_t k = 0; k < o.nr_pids && !alive; k++)
				alive = kill(pids[k], 0) == 0 || errno != ESRCH;
			if (!alive)
				break;
			nanosleep(&ts, NULL);
		}
		java_session__collect(s, p == flushes);
		print_results(s, p);
	}
	java_session__stop(s);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "probe cpu_ms %ld maxrss_kb %ld\n",
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000,
		ru.ru_maxrss);
	return 0;
}
