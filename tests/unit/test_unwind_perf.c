/* The native unwinder on real perf samples: a process is sampled with perf_event_open,
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER, as the agent does, and every sample
 * is unwound in smart and in dwarf mode.
 *   - Debian's /usr/bin/python3 (no frame pointers): >= 95% of the samples unwind through
 *     _PyEval_EvalFrameDefault down to Py_BytesMain (Debian's main is inlined there).
 *   - a Go program (frame pointers, no .eh_frame): >= 95% reach main.main through rec.
 *   - the -O2 -fomit-frame-pointer C workload: >= 99% reach main.
 * Skipped when perf_event_open is not permitted or the tool is missing. */
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

#include "test_unwind_util.h"
#include "unwind/unwind.h"

#define RING_PAGES 256
#define STACK_BYTES 16384
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))	/* BP, SP, IP */

/* A program and the functions every complete stack of it passes through. */
struct target {
	char path[4096];	/* as /proc/<pid>/maps names it */
	uint64_t text_offset, text_vaddr;	/* its executable PT_LOAD */
	int nsyms;
	const char *names[2];
	uint64_t lo[2], hi[2];
};

/* Reads the target's program headers and the ranges of its functions from table type
 * (SHT_SYMTAB or SHT_DYNSYM). Returns 0, or -1 when a name is missing. */
static int target_load(struct target *t, const char *path, Elf64_Word type)
{
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nph = 0;

	elf_version(EV_CURRENT);
	if (fd < 0 || !realpath(path, t->path) || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			t->text_offset = ph.p_offset;
			t->text_vaddr = ph.p_vaddr;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || !(n = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (int k = 0; k < t->nsyms; k++)
				if (strcmp(n, t->names[k]) == 0 && s.st_size) {
					t->lo[k] = s.st_value;
					t->hi[k] = s.st_value + s.st_size;
					found++;
				}
		}
	}
	elf_end(elf);
	close(fd);
	return found == t->nsyms ? 0 : -1;
}

/* Whether the unwound stack passes through every function of the target. */
static bool target_complete(const struct target *t, struct test_maps *tm, const uint64_t *pcs,
			    int n)
{
	bool seen[2] = { false, false };

	for (int i = 0; i < n; i++) {
		uint64_t pc = i ? pcs[i] - 1 : pcs[i];
		const struct mapping *m = test_maps_find(tm, pc);

		if (!m || strcmp(m->path, t->path) != 0 || !(m->prot & PROT_EXEC))
			continue;
		uint64_t va = mapping__file_offset(m, pc) - t->text_offset + t->text_vaddr;
		for (int k = 0; k < t->nsyms; k++)
			seen[k] |= va >= t->lo[k] && va < t->hi[k];
	}
	return seen[0] && (t->nsyms < 2 || seen[1]);
}

struct result {
	int total, good[2], truncated[2];
};

/* The process table of the test: /proc/<pid>/maps, read again when an address is not in
 * it (the agent learns mappings from MMAP2 records instead). */
struct live_maps {
	struct test_maps tm;
	pid_t pid;
	bool reloaded;	/* once per sample */
};

static const struct mapping *live_find(void *ctx, uint64_t addr)
{
	struct live_maps *lm = ctx;
	const struct mapping *m = test_maps_find(&lm->tm, addr);

	if (!m && !lm->reloaded) {
		lm->reloaded = true;
		test_maps_release(&lm->tm);
		test_maps_load(&lm->tm, lm->pid);
		m = test_maps_find(&lm->tm, addr);
	}
	return m;
}

#define WANT_SAMPLES 600

/* Samples child pid (already exec'd, running for long enough) until WANT_SAMPLES samples
 * came or it exits, then kills it; unwinds each sample in smart ([0]) and dwarf ([1])
 * mode. Returns 0, or -1 when perf_event_open is not permitted. */
static int sample_child(pid_t pid, const struct target *t, struct result *r)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 499, .freq = 1, .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = REGS_MASK, .sample_stack_user = STACK_BYTES,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);

	memset(r, 0, sizeof(*r));
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), len = (RING_PAGES + 1) * psz;
	uint8_t *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(ring != MAP_FAILED);
	struct perf_event_mmap_page *meta = (void *)ring;
	uint8_t *data = ring + psz, *rec = xmalloc(65536);
	uint64_t size = RING_PAGES * psz;
	static struct live_maps lm;

	lm.pid = pid;
	test_maps_load(&lm.tm, pid);
	struct proc_ref p = { pid, pid };
	struct unwinder *u[2] = { unwinder__new(UNWIND_SMART, 0), unwinder__new(UNWIND_DWARF, 0) };

	usleep(300 * 1000);	/* past the dynamic loader: its samples have no main */
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	while (r->total < WANT_SAMPLES && waitpid(pid, NULL, WNOHANG) == 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		poll(&pfd, 1, 100);
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;

		while (tail < head) {
			struct perf_event_header h;

			for (size_t i = 0; i < sizeof(h); i++)
				((uint8_t *)&h)[i] = data[(tail + i) % size];
			for (size_t i = 0; i < h.size && i < 65536; i++)
				rec[i] = data[(tail + i) % size];
			tail += h.size;
			if (h.type != PERF_RECORD_SAMPLE || h.size < sizeof(h) + 64)
				continue;
			/* ip, pid/tid, abi, regs[bp, sp, ip], size, data[size], dyn_size */
			const uint8_t *q = rec + sizeof(h);
			uint64_t v[6], ssize, dyn;

			memcpy(v, q, 48);
			q += 48;
			memcpy(&ssize, q, 8);
			if (v[2] != PERF_SAMPLE_REGS_ABI_64 || ssize + 8 + 48 + sizeof(h) + 8 > h.size)
				continue;
			memcpy(&dyn, q + 8 + ssize, 8);
			struct unwind_sample s = { { v[5], v[4], v[3] }, q + 8, dyn < ssize ? dyn : ssize };

			r->total++;
			for (int mode = 0; mode < 2; mode++) {
				uint64_t pcs[256];
				bool truncated;
				lm.reloaded = false;
				int n = unwinder__unwind(u[mode], &p, &s, live_find, &lm, pcs, 256,
							 &truncated);

				r->good[mode] += target_complete(t, &lm.tm, pcs, n);
			}
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unwinder__free(u[0]);
	unwinder__free(u[1]);
	test_maps_release(&lm.tm);
	free(rec);
	munmap(ring, len);
	close(fd);
	print_message("%s: %d samples; complete: smart %d (%d truncated), dwarf %d (%d "
		      "truncated)\n", t->path, r->total, r->good[0], r->truncated[0], r->good[1],
		      r->truncated[1]);
	return 0;
}

static pid_t spawn(const char *exe, const char *arg1, const char *arg2)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(exe, exe, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void test_python(void **state)
{
	struct target t = { .nsyms = 2, .names = { "_PyEval_EvalFrameDefault", "Py_BytesMain" } };
	struct result r;
	const char *script = "import time\n"
			     "def f(n):\n"
			     "    return f(n - 1) if n else sum(i * i for i in range(2000))\n"
			     "end = time.time() + 120\n"
			     "while time.time() < end:\n"
			     "    f(20)\n";

	if (access("/usr/bin/python3", X_OK) != 0 ||
	    target_load(&t, "/usr/bin/python3", SHT_DYNSYM) != 0)
		skip();
	if (sample_child(spawn("/usr/bin/python3", "-c", script), &t, &r))
		skip();
	assert_true(r.total >= 100);
	assert_true(r.good[0] * 100 >= r.total * 95);
	assert_true(r.good[1] * 100 >= r.total * 95);
}

static void test_c_nofp(void **state)
{
	char dir[] = "/tmp/kiln-unwind-perf.XXXXXX", exe[64], cmd[128];
	/* main alone: its loop's clock_gettime() calls are samples outside rec */
	struct target t = { .nsyms = 1, .names = { "main" } };
	struct result r;

	assert_non_null(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/unwind_deep", dir);
	assert_int_equal(test_build_workload(dir, "unwind_deep", "-O2 -fomit-frame-pointer"), 0);
	assert_int_equal(target_load(&t, exe, SHT_SYMTAB), 0);
	int err = sample_child(spawn(exe, "120", NULL), &t, &r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if (err)
		skip();
	assert_true(r.total >= 100);
	assert_true(r.good[0] * 100 >= r.total * 99);
	assert_true(r.good[1] * 100 >= r.total * 99);
}

static void test_go(void **state)
{
	char dir[] = "/tmp/kiln-unwind-go.XXXXXX", exe[64], cmd[512];
	struct target t = { .nsyms = 2, .names = { "main.main", "main.rec" } };
	struct result r;

	if (system("command -v go >/dev/null"))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/unwind_go", dir);
	snprintf(cmd, sizeof(cmd), "cd tests/workloads && GOCACHE=${GOCACHE:-%s/cache} "
		 "GOFLAGS=-mod=mod GO111MODULE=off go build -o %s unwind_go.go", dir, exe);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(target_load(&t, exe, SHT_SYMTAB), 0);
	int err = sample_child(spawn(exe, "120", NULL), &t, &r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if (err)
		skip();
	assert_true(r.total >= 100);
	assert_true(r.good[0] * 100 >= r.total * 95);	/* smart: frame pointers */
	assert_true(r.good[1] * 100 >= r.total * 95);	/* dwarf: Go's .debug_frame */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_c_nofp),
		cmocka_unit_test(test_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
