/* An application that embeds CRuby by dlopen() in the middle of its life (as a plugin
 * host does): it burns CPU in native_work() for argv[2] seconds, then loads the libruby
 * named by argv[1] and runs the Ruby file argv[3] (with ARGV = [argv[4]]) in the same
 * process, which is not called ruby. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void native_work(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ul + 1442695040888963407ul;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	char code[4096];
	int state = 0;
	uintptr_t stack_start;

	if (argc < 5) {
		fprintf(stderr, "usage: embed_ruby LIBRUBY SECONDS SCRIPT ARG\n");
		return 2;
	}
	native_work(atof(argv[2]));
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "embed_ruby: %s\n", dlerror());
		return 1;
	}
	void (*init_stack)(volatile uintptr_t *) = (void (*)(volatile uintptr_t *))dlsym(lib, "ruby_init_stack");
	int (*setup)(void) = (int (*)(void))dlsym(lib, "ruby_setup");
	void (*loadpath)(void) = (void (*)(void))dlsym(lib, "ruby_init_loadpath");
	uintptr_t (*eval)(const char *, int *) =
		(uintptr_t (*)(const char *, int *))dlsym(lib, "rb_eval_string_protect");
	if (!init_stack || !setup || !loadpath || !eval) {
		fprintf(stderr, "embed_ruby: %s lacks the embedding API\n", argv[1]);
		return 1;
	}
	init_stack(&stack_start);
	if (setup()) {
		fprintf(stderr, "embed_ruby: ruby_setup failed\n");
		return 1;
	}
	loadpath();
	snprintf(code, sizeof(code), "ARGV.replace(['%s']); load('%s')", argv[4], argv[3]);
	eval(code, &state);
	return state ? 1 : 0;
}
