/* A program that loads a library posing as a CRuby of a version kiln has no layout for:
 * built with -DFAKE_LIB as libruby-fake.so (exporting ruby_version "9.9.0" and
 * ruby_single_main_ractor), and without it as the host that dlopens argv[1] and spins
 * for argv[2] seconds. kiln must say '[Profiling skipped: unsupported ruby 9.9.0]'. */
#ifdef FAKE_LIB
const char ruby_version[] = "9.9.0";
const int ruby_api_version[3] = { 9, 9, 0 };
void *ruby_single_main_ractor;
void *ruby_current_vm_ptr;
#else
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	if (argc < 3 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "usage: ruby_fake LIB SECONDS (%s)\n", dlerror());
		return 2;
	}
	time_t end = time(NULL) + atoi(argv[2]);
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end)
		for (unsigned long i = 0; i < 1000000; i++)
			sink += i;
	return 0;
}
#endif
