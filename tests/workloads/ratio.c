/* Known-answer workload: three leaf functions share the CPU 50/30/20 by work units.
 * Built with frame pointers and without tail calls (tests/workloads/lib.sh). Runs
 * argv[1] threads (default 2) until killed, or for argv[2] seconds. Every unit is the same
 * loop, so time is proportional to units. Each round's length is dithered (x1 to x2, the
 * same factor for the three leaves), so that it cannot beat against the sampling timer's
 * fixed period (see tests/workloads/deep.c). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 200000

static volatile unsigned long sink;
/* Storing the frame address forces a frame: GCC sets none up in a leaf that does not
 * touch the stack, even with -fno-omit-frame-pointer, and an fp walk would then skip the
 * leaf's caller. */
static void *volatile frame_sink;


/* The leaves call no one: their own loop is the work. */
static __attribute__((noinline)) void alpha(unsigned long permille)
{
	unsigned long x = sink, n = 5ul * UNIT * permille / 1000;

	frame_sink = __builtin_frame_address(0);
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

static __attribute__((noinline)) void beta(unsigned long permille)
{
	unsigned long x = sink, n = 3ul * UNIT * permille / 1000;

	frame_sink = __builtin_frame_address(0);
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

static __attribute__((noinline)) void gamma_(unsigned long permille)
{
	unsigned long x = sink, n = 2ul * UNIT * permille / 1000;

	frame_sink = __builtin_frame_address(0);
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

static __thread unsigned long dither = 88172645463325252ul;	/* xorshift64 */

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
}

static time_t deadline;

static void *spin(void *arg)
{
	(void)arg;
	while (!deadline || time(NULL) < deadline)
		dispatch();
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[64];

	if (argc > 2)
		deadline = time(NULL) + atoi(argv[2]);
	if (threads < 1 || threads > 64)
		threads = 2;
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	spin(NULL);
	return 0;
}
