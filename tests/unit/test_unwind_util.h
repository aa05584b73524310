/* Helpers shared by the unwinder's tests: a process's mappings from /proc/<pid>/maps (the
 * lookup the agent's process table does), building the known-answer workload, and reading
 * a capture it writes. */
#ifndef KILN_TEST_UNWIND_UTIL_H
#define KILN_TEST_UNWIND_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/mapping.h"
#include "unwind/unwind.h"
#include "util/strbuf.h"

struct test_maps {
	struct mapping v[1024];
	char *paths[1024];
	size_t n;
};

static inline void test_maps_release(struct test_maps *tm)
{
	for (size_t i = 0; i < tm->n; i++)
		free(tm->paths[i]);
	tm->n = 0;
}

/* Reads /proc/<pid>/maps. Returns the number of mappings. */
static inline size_t test_maps_load(struct test_maps *tm, pid_t pid)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	tm->n = 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (tm->n < 1024 && fgets(line, sizeof(line), f)) {
		struct mapping *m = &tm->v[tm->n];
		char perms[8] = "", file[4096] = "";
		unsigned long lo, hi, off, ino;
		unsigned maj, min;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %4095[^\n]", &lo, &hi, perms, &off,
			   &maj, &min, &ino, file) < 7)
			continue;
		memset(m, 0, sizeof(*m));
		m->start = lo, m->end = hi, m->pgoff = off, m->maj = maj, m->min = min, m->ino = ino;
		m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
		char *p = file;
		while (*p == ' ')
			p++;
		tm->paths[tm->n] = xstrdup(*p ? p : "//anon");
		m->path = tm->paths[tm->n];
		tm->n++;
	}
	fclose(f);
	return tm->n;
}

/* unwind_find_mapping_fn over a test_maps. */
static inline const struct mapping *test_maps_find(void *ctx, uint64_t addr)
{
	struct test_maps *tm = ctx;

	for (size_t i = 0; i < tm->n; i++)
		if (addr >= tm->v[i].start && addr < tm->v[i].end)
			return &tm->v[i];
	return NULL;
}

/* Builds tests/workloads/<name>.c into dir/<name> with flags. Returns 0 on success. */
static inline int test_build_workload(const char *dir, const char *name, const char *flags)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cc %s -o %s/%s tests/workloads/%s.c", flags, dir, name, name);
	return system(cmd);
}

/* A sample captured by "unwind_deep capture", and the backtrace() oracle. */
struct test_capture {
	struct unwind_sample s;
	uint8_t *stack;
	uint64_t oracle[128];
	int noracle;
	pid_t pid;		/* the child, alive until test_capture_release() */
	FILE *out, *in;
};

static inline int read_u64(FILE *f, uint64_t *v)
{
	return fread(v, 8, 1, f) == 1 ? 0 : -1;
}

/* Runs "exe mode" (capture, capture-jit) and reads its sample. Returns 0, or -1. */
static inline int test_capture_mode(struct test_capture *c, const char *exe, const char *mode)
{
	int to[2], from[2];
	uint64_t len, n;

	memset(c, 0, sizeof(*c));
	if (pipe(to) || pipe(from))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(exe, exe, mode, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = fdopen(to[1], "w");
	c->out = fdopen(from[0], "r");
	if (read_u64(c->out, &c->s.regs.ip) || read_u64(c->out, &c->s.regs.sp) ||
	    read_u64(c->out, &c->s.regs.bp) || read_u64(c->out, &len) || len > (1 << 20))
		return -1;
	c->stack = xmalloc(len);
	if (fread(c->stack, 1, len, c->out) != len || read_u64(c->out, &n) || n > 128)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (read_u64(c->out, &c->oracle[i]))
			return -1;
	c->noracle = (int)n;
	c->s.stack = c->stack;
	c->s.stack_len = len;
	return 0;
}

static inline int test_capture_run(struct test_capture *c, const char *exe)
{
	return test_capture_mode(c, exe, "capture");
}

static inline void test_capture_release(struct test_capture *c)
{
	if (c->in)
		fclose(c->in);
	if (c->out)
		fclose(c->out);
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
	free(c->stack);
	memset(c, 0, sizeof(*c));
}

#endif
