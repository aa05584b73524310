/* bench/symbols: what the symbolizer costs per binary. For each file given (default: a
 * few large system binaries), prints the time to read its symbols once, their number and
 * the memory they hold, then the rate of lookups of random addresses, demangling
 * included; then kallsyms, and a JIT perf map of 200,000 lines read whole and refreshed
 * after an append. A program, not a test: it prints figures and asserts nothing.
 *
 *   make && cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -include src/util/banned.h \
 *     $(pkg-config --cflags libelf libdw) -o build/bench-symbols bench/symbols.c \
 *     build/libkiln.a $(pkg-config --libs libelf libdw liblzma zlib libxxhash) -lstdc++
 *   build/bench-symbols [FILE...] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/elf.h"
#include "symbols/kallsyms.h"
#include "symbols/perfmap.h"
#include "util/strbuf.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench(const char *path)
{
	struct strbuf out = STRBUF_INIT;
	struct elf_symbols es;
	char err[256] = "";
	double t0, t1;
	uint64_t lo, hi, x = 88172645463325252ull;
	size_t i, hits = 0, n = 1000000;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("%-50s cannot open\n", path);
		return;
	}
	elf_symbols_init(&es);
	t0 = now();
	if (elf_symbols__load(&es, fd, "", path, err, sizeof(err)) < 0) {
		printf("%-50s %s\n", path, err);
		close(fd);
		return;
	}
	t1 = now();
	close(fd);
	printf("%-50s load %7.1f ms  %8zu symbols  %7.2f MiB  sources 0x%x\n", path,
	       (t1 - t0) * 1e3, symtab__count(&es.tab),
	       (double)elf_symbols__memory(&es) / (1 << 20), es.sources);
	if (!symtab__count(&es.tab)) {
		elf_symbols_release(&es);
		return;
	}
	lo = es.tab.syms[0].addr;
	hi = es.tab.syms[es.tab.nr - 1].addr + 1;
	t0 = now();
	for (i = 0; i < n; i++) {
		const char *name;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		name = symtab__find(&es.tab, lo + x % (hi - lo), NULL);
		if (name) {
			strbuf_reset(&out);
			demangle__append(name, &out);
			hits++;
		}
	}
	t1 = now();
	printf("%-50s %.2f M lookups/s with demangling (%zu%% hit)\n", "",
	       (double)n / (t1 - t0) / 1e6, hits * 100 / n);
	strbuf_release(&out);
	elf_symbols_release(&es);
}

static void bench_kallsyms(void)
{
	struct symtab t;
	double t0, t1;
	int n;

	symtab_init(&t);
	t0 = now();
	n = kallsyms__load(&t, "/proc/kallsyms");
	t1 = now();
	printf("%-50s load %7.1f ms  %8d symbols  %7.2f MiB\n", "/proc/kallsyms", (t1 - t0) * 1e3,
	       n, (double)symtab__memory(&t) / (1 << 20));
	symtab_release(&t);
}

static void bench_perfmap(void)
{
	char path[64];
	struct perfmap pm;
	double t0, t1, t2, t3;
	FILE *f;
	int i, n = 200000;

	snprintf(path, sizeof(path), "/tmp/kiln-bench-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	for (i = 0; i < n; i++)
		fprintf(f, "%x 40 LazyCompile:*fn%d /app/src/module%d.js:%d\n", 0x10000000 + i * 64,
			i, i % 100, i);
	fclose(f);
	perfmap_init(&pm);
	t0 = now();
	perfmap__refresh(&pm, path);
	t1 = now();
	f = fopen(path, "a");
	if (f) {
		fputs("20000000 40 appended\n", f);
		fclose(f);
	}
	t2 = now();
	perfmap__refresh(&pm, path);
	t3 = now();
	printf("%-50s load %7.1f ms  %8d entries  %7.2f MiB  refresh after append %.1f ms\n",
	       "perf map (synthetic)", (t1 - t0) * 1e3, n, (double)perfmap__memory(&pm) / (1 << 20),
	       (t3 - t2) * 1e3);
	perfmap_release(&pm);
	unlink(path);
}

int main(int argc, char **argv)
{
	static const char *const def[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/go-1.19/pkg/tool/linux_amd64/compile",
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
	};
	int i;

	if (argc > 1)
		for (i = 1; i < argc; i++)
			bench(argv[i]);
	else
		for (i = 0; i < (int)(sizeof(def) / sizeof(def[0])); i++)
			bench(def[i]);
	bench_kallsyms();
	bench_perfmap();
	return 0;
}
