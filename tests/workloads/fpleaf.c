/* Known-answer workload for frameless leaves in frame-pointer code, built -O2
 * -fno-omit-frame-pointer -momit-leaf-frame-pointer (the leaf keeps no frame, as in most
 * distributions' frame-pointer builds):
 *   main -> run -> dispatch -> alpha (7 of 10 calls) -> churn
 *                           -> beta  (3 of 10 calls) -> churn
 * A frame-pointer walk from inside churn reads dispatch's return address where alpha's
 * or beta's should be. The helpers step0..step7 only give the binary enough functions
 * with frames to be recognised as a frame-pointer build. Each round of ten calls is dithered
 * in length (x1 to x2, the same factor for every call of the round) so that the round
 * cannot beat against the sampling timer's fixed period (see tests/workloads/deep.c): an
 * undithered round measured alpha at 81% in one CI run.
 *
 *   fpleaf [SECONDS]   spin for SECONDS (default 20) */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t churn(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

#define STEP(i, next)                                                                    \
	__attribute__((noinline)) static uint64_t step##i(uint64_t x, int n)             \
	{                                                                                \
		uint64_t r = next(x + i, n);                                             \
		sink += r;                                                               \
		return r;                                                                \
	}
STEP(7, churn)
STEP(6, step7)
STEP(5, step6)
STEP(4, step5)
STEP(3, step4)
STEP(2, step3)
STEP(1, step2)
STEP(0, step1)

__attribute__((noinline)) static void alpha(int n)
{
	sink = churn(sink, n);
	sink += 1;
}

__attribute__((noinline)) static void beta(int n)
{
	sink = churn(sink, n);
	sink += 2;
}

__attribute__((noinline)) static void dispatch(int i, int n)
{
	if (i % 10 < 7)
		alpha(n);
	else
		beta(n);
	sink += 3;
}

static uint64_t dither = 88172645463325252ull;	/* xorshift64 */

__attribute__((noinline)) static void run(double secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	sink += step0(sink, 1);
	do {
		dither ^= dither << 13;
		dither ^= dither >> 7;
		dither ^= dither << 17;
		int n = (int)(200000 + dither % 200000);
		for (int i = 0; i < 10; i++)
			dispatch(i, n);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 20.0);
	return 0;
}
