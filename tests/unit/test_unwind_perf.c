/* The native unwinder on real perf samples: Debian's /usr/bin/python3 (built without frame
 * pointers) runs a busy script while perf_event_open samples it with PERF_SAMPLE_REGS_USER
 * and PERF_SAMPLE_STACK_USER, as the agent does. At least 95% of the samples must unwind
 * through _PyEval_EvalFrameDefault down to Py_BytesMain (the program's entry: Debian's
 * main is inlined there). Skipped when perf_event_open is not permitted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "test_unwind_util.h"
#include "unwind/unwind.h"

#define PYTHON "/usr/bin/python3"
#define RING_PAGES 256
#define STACK_BYTES 16384
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))	/* BP, SP, IP */

static uint64_t text_offset, text_vaddr;	/* python3's executable PT_LOAD */
static char python_real[4096];		/* /usr/bin/python3 is a symlink */

struct sym {
	const char *name;
	uint64_t lo, hi;	/* vaddr range */
};

/* Finds the vaddr ranges of syms in path's .dynsym. */
static int load_syms(const char *path, struct sym *syms, int nsyms)
{
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	size_t nph = 0;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
{
			text_offset = ph.p_offset;
			text_vaddr = ph.p_vaddr;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || !(n = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (int k = 0; k < nsyms; k++)
				if (strcmp(n, syms[k].name) == 0) {
					syms[k].lo = s.st_value;
					syms[k].hi = s.st_value + (s.st_size ? s.st_size : 1);
					found++;
				}
		}
	}
	elf_end(elf);
	close(fd);
	return found == nsyms ? 0 : -1;
}

/* The vaddr of pc in python3, through its mapping and program headers. */
static bool python_vaddr(const struct test_maps *tm, uint64_t pc, uint64_t *va)
{
	const struct mapping *m = test_maps_find((void *)tm, pc);

	if (!m || strcmp(m->path, python_real) != 0 || !(m->prot & PROT_EXEC))
		return false;
	*va = mapping__file_offset(m, pc) - text_offset + text_vaddr;
	return true;
}

static void test_python(void **state)
{
	struct sym syms[] = { { "_PyEval_EvalFrameDefault", 0, 0 }, { "Py_BytesMain", 0, 0 } };
	const char *script = "import time\n"
			     "def f(n):\n"
			     "    return f(n - 1) if n else sum(i * i for i in range(2000))\n"
			     "end = time.time() + 4\n"
			     "while time.time() < end:\n"
			     "    f(20)\n";

	if (access(PYTHON, X_OK) != 0 || !realpath(PYTHON, python_real) ||
	    load_syms(PYTHON, syms, 2) != 0)
		skip();
	pid_t pid = fork();
	if (pid == 0) {
		execl(PYTHON, PYTHON, "-c", script, (char *)NULL);
		_exit(127);
	}
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 499, .freq = 1, .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = REGS_MASK, .sample_stack_user = STACK_BYTES,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		skip();
	}
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), len = (RING_PAGES + 1) * psz;
	uint8_t *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(ring != MAP_FAILED);
	struct perf_event_mmap_page *meta = (void *)ring;
	uint8_t *data = ring + psz, *rec = xmalloc(65536);
	uint64_t size = RING_PAGES * psz;

	usleep(500 * 1000);	/* let python start and map its libraries */
	struct test_maps tm;
	assert_true(test_maps_load(&tm, pid) > 0);
	struct proc_ref p = { pid, pid };
	struct unwinder *u = unwinder__new(UNWIND_SMART, 0), *d = unwinder__new(UNWIND_DWARF, 0);
	int total = 0, good[2] = { 0, 0 }, trunc[2] = { 0, 0 };
	struct timespec t0, t1;
	double cpu = 0;

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		poll(&pfd, 1, 100);
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;

		while (tail < head) {
			struct perf_event_header h;

			for (size_t i = 0; i < sizeof(h); i++)
				((uint8_t *)&h)[i] = data[(tail + i) % size];
			for (size_t i = 0; i < h.size && i < 65536; i++)
				rec[i] = data[(tail + i) % size];
			tail += h.size;
			if (h.type != PERF_RECORD_SAMPLE || h.size < 8)
				continue;
			/* ip, pid/tid, abi, regs[bp, sp, ip], size, data[size], dyn_size */
			const uint8_t *q = rec + sizeof(h);
			uint64_t v[6], ssize, dyn;
			memcpy(v, q, 48);
			q += 48;
			if (v[2] != PERF_SAMPLE_REGS_ABI_64)
				continue;
			memcpy(&ssize, q, 8);
			if (ssize + 8 + 48 + sizeof(h) + 8 > h.size)
				continue;
			memcpy(&dyn, q + 8 + ssize, 8);
			struct unwind_sample s = { { v[5], v[4], v[3] }, q + 8, dyn < ssize ? dyn : ssize };
			total++;
			for (int mode = 0; mode < 2; mode++) {
				uint64_t pcs[256];
				bool truncated, eval = false, entry = false;

				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
				int n = unwinder__unwind(mode ? d : u, &p, &s, test_maps_find, &tm, pcs,
							 256, &truncated);
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
				cpu += (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
				for (int i = 0; i < n; i++) {
					uint64_t va;

					if (!python_vaddr(&tm, i ? pcs[i] - 1 : pcs[i], &va))
						continue;
					eval |= va >= syms[0].lo && va < syms[0].hi;
					entry |= va >= syms[1].lo && va < syms[1].hi;
				}
				good[mode] += eval && entry;
				trunc[mode] += truncated;
			}
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	print_message("python3: %d samples; smart %d reach Py_BytesMain through the eval loop "
		      "(%d truncated), dwarf %d (%d truncated); %.2f s unwinding in all, with "
		      "the tables' compilation, under ASan\n",
		      total, good[0], trunc[0], good[1], trunc[1], cpu);
	assert_true(total >= 100);
	assert_true(good[0] * 100 >= total * 95);
	assert_true(good[1] * 100 >= total * 95);
	unwinder__free(u);
	unwinder__free(d);
	test_maps_release(&tm);
	free(rec);
	munmap(ring, len);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
