/* unwind_bench PID SECONDS FREQ STACK_BYTES MAIN_SYMBOL
 *
 * Samples process PID for SECONDS at FREQ Hz with PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER (STACK_BYTES), as kiln's sampler does in dwarf/smart mode, keeps
 * the samples in memory, then unwinds them with kiln's unwinder in smart and in dwarf
 * mode: first with empty caches (the tables are compiled then), then again warm. Prints
 * the share of samples whose stack reaches MAIN_SYMBOL of /proc/PID/exe, the CPU time
 * spent (reading the ring buffer, unwinding), the unwinder's memory and the process's
 * peak RSS, one "key value" per line for bench/unwind.sh. Nothing is written to disk. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "symbols/mapping.h"
#include "unwind/unwind.h"
#include "util/strbuf.h"

#define RING_PAGES 512
#define MAX_MAPS 4096

struct sample {
	struct unwind_regs regs;
	uint8_t *stack;
	size_t len;
};

static struct mapping maps[MAX_MAPS];
static size_t nmaps;
static char exe_path[4096];
static uint64_t sym_lo, sym_hi, text_off, text_vaddr;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void load_maps(pid_t pid)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return;
	while (nmaps < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct mapping *m = &maps[nmaps];
		char perms[8], file[4096] = "";
		unsigned long lo, hi, off, ino;
		unsigned maj, min;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %4095[^\n]", &lo, &hi, perms, &off, &maj,
			   &min, &ino, file) < 7)
			continue;
		char *p = file;
		while (*p == ' ')
			p++;
		*m = (struct mapping){ .start = lo, .end = hi, .pgoff = off, .maj = maj, .min = min,
				       .ino = ino, .prot = perms[2] == 'x' ? PROT_EXEC : PROT_READ,
				       .path = xstrdup(*p ? p : "//anon") };
		nmaps++;
	}
	fclose(f);
}

static const struct mapping *find(void *ctx, uint64_t addr)
{
	size_t a = 0, b = nmaps;	/* /proc/PID/maps is sorted */

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (maps[mid].end <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	return a < nmaps && addr >= maps[a].start ? &maps[a] : NULL;
}

/* The [lo, hi) vaddrs of name in the executable's .symtab or .dynsym. */
static int load_symbol(pid_t pid, const char *name)
{
	char path[64];
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nph = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0 || readlink(path, exe_path, sizeof(exe_path) - 1) < 0)
		return -1;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			text_off = ph.p_offset, text_vaddr = ph.p_vaddr;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && s.st_size &&
			    (n = elf_strptr(elf, sh.sh_link, s.st_name)) && strcmp(n, name) == 0)
				sym_lo = s.st_value, sym_hi = s.st_value + s.st_size;
		}
	}
	elf_end(elf);
	close(fd);
	return sym_hi > sym_lo ? 0 : -1;
}

static bool reaches_main(const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t pc = i ? pcs[i] - 1 : pcs[i];
		const struct mapping *m = find(NULL, pc);

		if (!m || strcmp(m->path, exe_path) != 0 || !(m->prot & PROT_EXEC))
			continue;
		uint64_t va = mapping__file_offset(m, pc) - text_off + text_vaddr;
		if (va >= sym_lo && va < sym_hi)
			return true;
	}
	return false;
}

/* Reads samples of pid for secs seconds. Returns their number. */
static size_t record(pid_t pid, double secs, int freq, int stack_bytes, struct sample **out)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = (uint64_t)freq, .freq = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8),
		.sample_stack_user = (uint32_t)stack_bytes,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	if (fd < 0) {
		fprintf(stderr, "failed to open a perf event on %d: %s\n", (int)pid, strerror(errno));
		exit(2);
	}
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), size = RING_PAGES * psz, n = 0, cap = 1024;
	uint8_t *ring = mmap(NULL, size + psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct perf_event_mmap_page *meta = (void *)ring;
	uint8_t *data = ring + psz, *rec = xmalloc(1 << 17);
	struct timespec t0, t;
	struct sample *v = xmalloc(cap * sizeof(*v));

	if (ring == MAP_FAILED)
		exit(2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct pollfd pfd = { fd, POLLIN, 0 };

		poll(&pfd, 1, 100);
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
		while (tail < head) {
			struct perf_event_header h;

			for (size_t i = 0; i < sizeof(h); i++)
				((uint8_t *)&h)[i] = data[(tail + i) % size];
			for (size_t i = 0; i < h.size; i++)
				rec[i] = data[(tail + i) % size];
			tail += h.size;
			uint64_t w[6], ssize, dyn;
			const uint8_t *q = rec + sizeof(h);
			if (h.type != PERF_RECORD_SAMPLE || h.size < sizeof(h) + 64)
				continue;
			memcpy(w, q, 48);
			memcpy(&ssize, q + 48, 8);
			if (w[2] != PERF_SAMPLE_REGS_ABI_64 || sizeof(h) + 64 + ssize > h.size)
				continue;
			memcpy(&dyn, q + 56 + ssize, 8);
			if (n == cap)
				v = xrealloc(v, (cap *= 2) * sizeof(*v));
			v[n].regs = (struct unwind_regs){ w[5], w[4], w[3] };
			v[n].len = dyn < ssize ? dyn : ssize;
			v[n].stack = xmalloc(v[n].len + 1);
			memcpy(v[n].stack, q + 56, v[n].len);
			n++;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	munmap(ring, size + psz);
	close(fd);
	free(rec);
	*out = v;
	return n;
}

/* Unwinds every sample; returns how many reach main, adds the CPU seconds to *cpu. */
static size_t unwind_all(struct unwinder *u, pid_t pid, struct sample *v, size_t n, double *cpu)
{
	struct proc_ref p = { pid, pid };
	uint64_t pcs[256];
	bool truncated;
	size_t good = 0;
	double t0 = cpu_now();

	for (size_t i = 0; i < n; i++) {
		struct unwind_sample s = { v[i].regs, v[i].stack, v[i].len };
		int k = unwinder__unwind(u, &p, &s, find, NULL, pcs, 256, &truncated);

		good += k > 0 && reaches_main(pcs, k);
	}
	*cpu += cpu_now() - t0;
	return good;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: unwind_bench PID SECONDS FREQ STACK_BYTES MAIN_SYMBOL\n");
		return 2;
	}
	pid_t pid = atoi(argv[1]);
	struct sample *v;
	double rec_cpu = cpu_now();
	size_t n = record(pid, atof(argv[2]), atoi(argv[3]), atoi(argv[4]), &v);

	rec_cpu = cpu_now() - rec_cpu;
	load_maps(pid);
	if (load_symbol(pid, argv[5]) != 0 || n == 0) {
		fprintf(stderr, "no samples or no symbol '%s' in /proc/%d/exe\n", argv[5], (int)pid);
		return 1;
	}
	/* the reach check itself costs CPU: measure it alone and take it out */
	double check = 0, t0 = cpu_now();
	for (int r = 0; r < 3; r++)
		for (size_t i = 0; i < n; i++)
			reaches_main(&v[i].regs.ip, 1);
	check = (cpu_now() - t0) / 3;

	printf("samples %zu\nrecord_cpu_ms %.1f\n", n, rec_cpu * 1e3);
	const char *names[] = { "smart", "dwarf" };
	for (int mode = UNWIND_SMART; mode >= UNWIND_DWARF; mode--) {
		struct unwinder *u = unwinder__new(mode, 0);
		double cold = 0, warm = 0;
		size_t good = unwind_all(u, pid, v, n, &cold);
		const int reps = 5;

		for (int r = 0; r < reps; r++)
			unwind_all(u, pid, v, n, &warm);
		warm = warm / reps - check;
		printf("%s_reach_main_pct %.2f\n", names[mode == UNWIND_DWARF], 100.0 * good / n);
		printf("%s_cold_cpu_ms %.1f\n", names[mode == UNWIND_DWARF], (cold - check) * 1e3);
		printf("%s_warm_us_per_sample %.2f\n", names[mode == UNWIND_DWARF], warm * 1e6 / n);
		printf("%s_memory_bytes %llu\n", names[mode == UNWIND_DWARF],
		       (unsigned long long)unwinder__memory(u));
		unwinder__free(u);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak_rss_kb %ld\n", ru.ru_maxrss);
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
	return 0;
}
