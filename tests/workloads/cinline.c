/* Known-answer workload for native inlined functions, built -O2 -g (also as C++):
 *   main -> mixer, into which inlA (7 parts of the work) and inlB (3 parts) are inlined
 * With the debug info (the binary's own, or a separate debug file), both must appear as
 * inlA_[i] / inlB_[i] frames under mixer. Each round's length is dithered (x1 to x2, the
 * same factor for both) so that it cannot beat against the sampling timer's period.
 *
 *   cinline [SECONDS]   spin for SECONDS (default 20) */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t inlA(uint64_t x, int per_mille)
{
	for (int i = 0; i < 70 * per_mille; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline __attribute__((always_inline)) uint64_t inlB(uint64_t x, int per_mille)
{
	for (int i = 0; i < 30 * per_mille; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static void mixer(int per_mille)
{
	sink = inlB(inlA(sink, per_mille), per_mille);
}

static uint64_t dither = 88172645463325252ull;	/* xorshift64 */

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 20.0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		dither ^= dither << 13;
		dither ^= dither >> 7;
		dither ^= dither << 17;
		for (int i = 0; i < 100; i++)
			mixer((int)(1000 + dither % 1000));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
