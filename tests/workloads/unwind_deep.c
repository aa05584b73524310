/* Known-answer workload for the native unwinder, built -O2 -fomit-frame-pointer:
 * main -> run -> rec x30 -> leaf_three (3 parts of the CPU) or leaf_one (1 part).
 *
 *   unwind_deep [SECONDS]   spin for SECONDS (default 20): leaf shares are 75% / 25%
 *   unwind_deep capture     at the bottom of the recursion, write one "sample" to stdout
 *                           (registers, a copy of the stack, backtrace() as the oracle),
 *                           then wait until stdin closes so that /proc/<pid> stays readable.
 *   unwind_deep capture-signal  the same, from a SIGUSR1 handler the recursion's bottom
 *                           raises: the stack holds the kernel's signal frame.
 *   unwind_deep capture-jit the same, with main -> JIT stub -> rec x30: the stub lives in
 *                           anonymous executable memory, has no CFI and keeps a frame
 *                           pointer, as JIT compilers' code does.
 *
 * Capture format, all little-endian u64: ip, sp, bp, stack_len, stack bytes, n, n oracle
 * return addresses (backtrace() from the capture point, outermost last). */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 30
#define STACK_COPY 16384

static volatile uint64_t sink;
static int capture_mode;

static uint64_t stack_top(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t lo, hi, top = sp + 4096;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			top = hi;
	if (f)
		fclose(f);
	return top;
}

static void put(uint64_t v)
{
	fwrite(&v, 8, 1, stdout);
}

__attribute__((noinline)) static void capture(void)
{
	uint64_t ip, sp, bp;
	void *bt[128];
	static uint8_t copy[STACK_COPY];

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	uint64_t len = stack_top(sp) - sp;
	if (len > STACK_COPY)
		len = STACK_COPY;
	memcpy(copy, (const void *)sp, len);
	int n = backtrace(bt, 128);
	put(ip), put(sp), put(bp), put(len);
	fwrite(copy, 1, len, stdout);
	put((uint64_t)n);
	for (int i = 0; i < n; i++)
		put((uint64_t)bt[i]);
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	exit(0);
}

/* Each round's length is dithered (x1 to x2, the same factor for both leaves) so that it
 * cannot beat against the sampling timer's fixed period (see deep.c). */
static uint64_t per_mille = 1000, dither = 88172645463325252ull;	/* xorshift64 */

__attribute__((noinline)) static void leaf_three(void)
{
	for (uint64_t i = 0; i < 3000 * per_mille; i++)
		sink += i * i;
}

__attribute__((noinline)) static void leaf_one(void)
{
	for (uint64_t i = 0; i < 1000 * per_mille; i++)
		sink += i * i;
}

static int rec(int n, int which);
static int (*volatile rec_ptr)(int, int) = rec;

__attribute__((noinline)) static int rec(int n, int which)
{
	if (n > 1)
		return rec_ptr(n - 1, which) + 1;
	if (capture_mode == 1)
		capture();
	else if (capture_mode == 2)
		raise(SIGUSR1);
	if (which)
		leaf_three();
	else
		leaf_one();
	return 1;
}

__attribute__((noinline)) static void run(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		dither ^= dither << 13;
		dither ^= dither >> 7;
		dither ^= dither << 17;
		per_mille = 1000 + dither % 1000;
		sink += (uint64_t)rec_ptr(DEPTH, 1);
		sink += (uint64_t)rec_ptr(DEPTH, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static void on_signal(int sig)
{
	(void)sig;
	capture();
}

static int capture_entry(void)
{
	return rec_ptr(DEPTH, 1);
}

/* push rbp; mov rbp, rsp; call *rdi; pop rbp; ret */
static const uint8_t jit_stub[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "capture") == 0) {
		capture_mode = 1;
		rec_ptr(DEPTH, 1);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "capture-signal") == 0) {
		signal(SIGUSR1, on_signal);
		capture_mode = 2;
		rec_ptr(DEPTH, 1);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "capture-jit") == 0) {
		uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (code == MAP_FAILED)
			return 1;
		memcpy(code, jit_stub, sizeof(jit_stub));
		if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
			return 1;
		capture_mode = 1;
		((int (*)(int (*)(void)))(uintptr_t)code)(capture_entry);
		return 1;
	}
	run(argc > 1 ? atof(argv[1]) : 20.0);
	return (int)(sink & 0);
}
