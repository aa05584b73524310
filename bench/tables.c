/* tables [-n ROUNDS] FILE...
 *
 * What a binary kiln meets for the first time costs the unwinder: for each round, a fresh
 * unwind cache lists the unwind table of every FILE (read as the mapping of its first
 * executable segment, through this process's root) and looks up one pc in each of 64
 * evenly spread FDEs (compiling them). A fixed workload, for `valgrind --tool=callgrind`
 * (bench/selfcost.sh --tables), whose instruction count does not depend on the machine's
 * load. Prints per FILE its FDEs and bytes, then the CPU time of all rounds. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "symbols/mapping.h"
#include "unwind/cache.h"
#include "unwind/table.h"

/* The mapping the loader would make of path's first executable PT_LOAD. */
static int mapping_of(const char *path, struct mapping *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t n;
	int err = -ENOEXEC;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	memset(m, 0, sizeof(*m));
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			m->pgoff = ph.p_offset & ~0xfffull;
			m->start = 0x10000000000ull + m->pgoff;
			m->end = m->start + ph.p_filesz + (ph.p_offset & 0xfff);
			m->prot = 5;
			m->maj = major(st.st_dev);
			m->min = minor(st.st_dev);
			m->ino = st.st_ino;
			m->path = path;
			err = 0;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	int rounds = 1, first = 1;
	struct timespec t0, t1;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		rounds = atoi(argv[2]);
		first = 3;
	}
	if (first >= argc || rounds < 1) {
		fprintf(stderr, "usage: tables [-n ROUNDS] FILE...\n");
		return 2;
	}
	struct proc_ref self = { getpid(), getpid() };

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (int r = 0; r < rounds; r++) {
		struct unwind_cache *c = unwind_cache__new(1ull << 30, false);

		for (int i = first; i < argc; i++) {
			struct mapping m;
			const struct unwind_table *t;
			int err = mapping_of(argv[i], &m);

			if (err || !(t = unwind_cache__get(c, &self, &m))) {
				fprintf(stderr, "failed to read the unwind table of '%s'\n", argv[i]);
				return 1;
			}
			size_t nfde = t->nfde, step = nfde > 64 ? nfde / 64 : 1;
			uint64_t base = t->base;

			for (size_t k = 0; k < nfde; k += step) {
				t = unwind_cache__get(c, &self, &m);
				unwind_cache__find(c, t, &self, &m, base + t->fdes[k].lo);
			}
			if (r == rounds - 1)
				printf("%s: %zu FDEs, %zu compiled, %llu bytes\n", argv[i], nfde,
				       t->compiled,
				       (unsigned long long)unwind_cache__table_bytes(c, t));
		}
		unwind_cache__free(c);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("cpu_ms %.1f for %d rounds\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6),
	       rounds);
	return 0;
}
