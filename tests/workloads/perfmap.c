/* Known-answer workload for perf maps: runs a spin loop from an anonymous executable
 * page (as a JIT does) and names it in /tmp/perf-<pid>.map, next to garbage lines that
 * the symbolizer must survive. Runs argv[1] seconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push rbp; mov rbp,rsp; mov rax,rdi; 1: dec rax; jnz 1b; pop rbp; ret */
static const unsigned char code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
				      0xff, 0xc8, 0x75, 0xfb, 0x5d, 0xc3 };

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
	char path[64];
	FILE *f;
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*jit)(long);

	if (page == MAP_FAILED)
		return 1;
	memcpy(page + 256, code, sizeof(code));
	jit = (void (*)(long))(page + 256);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "this is not a map line\n%lx zz broken\n", (unsigned long)(uintptr_t)page);
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(uintptr_t)(page + 256), sizeof(code));
	fclose(f);
	while (time(NULL) < end)
		jit(50 * 1000 * 1000);
	unlink(path);
	return 0;
}
