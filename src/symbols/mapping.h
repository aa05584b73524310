/* One memory mapping of a process, as the sampler learns it from PERF_RECORD_MMAP2 or
 * /proc/PID/maps. Shared by the process table (agent/), the symbolizer (symbols/) and the
 * unwinder (unwind/), so that none of them depends on another's internals. */
#ifndef KILN_SYMBOLS_MAPPING_H
#define KILN_SYMBOLS_MAPPING_H

#include <stdint.h>
#include <sys/types.h>

#define MAPPING_BUILD_ID_MAX 20

struct mapping {
	uint64_t start, end;	/* [start, end) in the process's address space */
	uint64_t pgoff;		/* file offset of start */
	uint32_t maj, min;	/* device of the file (0 when unknown) */
	uint64_t ino;		/* inode of the file (0 when unknown) */
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint8_t build_id_len;	/* 0 when the kernel did not give one */
	uint8_t build_id[MAPPING_BUILD_ID_MAX];
	const char *path;	/* as the process sees it: "/usr/lib/...", "[vdso]", "//anon",
				 * "[anon:...]", "/memfd:x (deleted)"; owned by the process table */
};

/* The address's offset in the mapped file, the key the symbolizer and the unwinder use. */
static inline uint64_t mapping__file_offset(const struct mapping *m, uint64_t addr)
{
	return addr - m->start + m->pgoff;
}

/* A process as the symbolizer and unwinder need to know it: where to read its files. */
struct proc_ref {
	pid_t pid;		/* in kiln's (the host's) PID namespace; /proc/<pid>/... */
	pid_t nspid;		/* the same process in its own namespace (== pid when none) */
};

#endif
