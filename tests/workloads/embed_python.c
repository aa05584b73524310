/* An application that embeds CPython by dlopen() (as uwsgi or a plugin host does), in the
 * middle of its life: it burns CPU in native_work() for argv[2] seconds, then loads the
 * libpython named by argv[1] and runs the Python file argv[3] (with sys.argv[1] = argv[4])
 * in the same process. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <wchar.h>

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
	void *lib;
	void (*init)(void);
	int (*run)(FILE *, const char *, int, void *);
	FILE *f;

	if (argc < 5) {
		fprintf(stderr, "usage: embed_python LIBPYTHON SECONDS SCRIPT ARG\n");
		return 2;
	}
	native_work(atof(argv[2]));
	lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "embed_python: %s\n", dlerror());
		return 1;
	}
	init = (void (*)(void))dlsym(lib, "Py_Initialize");
	run = (int (*)(FILE *, const char *, int, void *))dlsym(lib, "PyRun_SimpleFileExFlags");
	void (*set_argv)(int, wchar_t **, int) =
		(void (*)(int, wchar_t **, int))dlsym(lib, "PySys_SetArgvEx");
	if (!init || !run || !set_argv) {
		fprintf(stderr, "embed_python: %s lacks the embedding API\n", argv[1]);
		return 1;
	}
	init();
	wchar_t a0[256], a1[64];
	mbstowcs(a0, argv[3], 255);
	mbstowcs(a1, argv[4], 63);
	wchar_t *pargv[] = { a0, a1 };
	set_argv(2, pargv, 0);
	f = fopen(argv[3], "r");
	if (!f)
		return 1;
	return run(f, argv[3], 1, NULL);
}
