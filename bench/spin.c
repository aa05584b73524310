/* bench/overhead's workload: a fixed amount of CPU-bound work in argv[1] processes
 * (default 2, one per CPU), argv[2] million iterations each. Exits when all are done. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void leaf(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

static __attribute__((noinline)) void work(unsigned long millions)
{
	for (unsigned long m = 0; m < millions; m++)
		leaf(1000000);
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 2;
	unsigned long millions = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000;

	for (int i = 1; i < procs; i++)
		if (fork() == 0) {
			work(millions);
			return 0;
		}
	work(millions);
	while (wait(NULL) > 0)
		;
	return 0;
}
