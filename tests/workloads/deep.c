/* Known-answer workload for CFI unwinding: built -O2 -fomit-frame-pointer, so a
 * frame-pointer walk cannot reach main. Two processes (main forks once) each run
 * main -> spin -> recurse x30 -> dispatch -> alpha/beta/gamma_, the leaves sharing the
 * CPU 50/30/20 by work units. Each round's length is dithered (x1 to x2, the same factor
 * for the three leaves): rounds of a fixed 2.6 ms beat against the sampling timer's fixed
 * period, and on a quiet host the samples kept falling on the same part of the round (beta
 * at 25.7% of 2972 samples in CI). Runs argv[1] seconds. */
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT 200000
#define DEPTH 30

static volatile unsigned long sink;

#define LEAF(name, units)                                                       \
	static __attribute__((noinline)) void name(unsigned long permille)      \
	{                                                                       \
		unsigned long x = sink, n = (units) * (unsigned long)UNIT * permille / 1000; \
		for (unsigned long i = 0; i < n; i++)                           \
			x = x * 2862933555777941757ul + 3037000493ul;           \
		sink = x;                                                       \
	}
LEAF(alpha, 5)
LEAF(beta, 3)
LEAF(gamma_, 2)

static unsigned long dither = 88172645463325252ul;	/* xorshift64 */

static __attribute__((noinline)) void dispatch(void)
{
	unsigned long permille;

	dither ^= dither << 13;
	dither ^= dither >> 7;
	dither ^= dither << 17;
	permille = 1000 + dither % 1000;
	alpha(permille);
	beta(permille);
	gamma_(permille);
	sink++;
}

/* Work after the call keeps it from becoming a jump. */
static __attribute__((noinline)) void recurse(int depth)
{
	if (depth > 0)
		recurse(depth - 1);
	else
		dispatch();
	sink += (unsigned long)depth;
}

static __attribute__((noinline)) void spin(time_t end)
{
	while (time(NULL) < end)
		recurse(DEPTH);
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
	pid_t child = fork();

	/* A test that kills the parent must not leave the child spinning for argv[1] s. */
	if (child == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1))
		return 1;
	spin(end);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
