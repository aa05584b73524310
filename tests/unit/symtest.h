/* Helpers shared by the symbolizer's unit tests: a scratch directory, shell commands that
 * build real binaries, nm as the oracle for symbol addresses. */
#ifndef KILN_TESTS_SYMTEST_H
#define KILN_TESTS_SYMTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/elf.h"
#include "symbols/mapping.h"
#include "util/strbuf.h"

static char tmpdir[256];

static inline void tmpdir_make(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kiln-symtest-XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
}

static inline void tmpdir_remove(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Runs a shell command in tmpdir; returns its exit status. */
__attribute__((format(printf, 1, 2))) static inline int sh(const char *fmt, ...)
{
	struct strbuf cmd = STRBUF_INIT;
	va_list ap;
	int rc;

	strbuf_addf(&cmd, "cd '%s' && (", tmpdir);
	va_start(ap, fmt);
	strbuf_vaddf(&cmd, fmt, ap);
	va_end(ap);
	strbuf_addstr(&cmd, ")");
	rc = system(cmd.buf);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd.buf);
	strbuf_release(&cmd);
	return rc;
}

static inline void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* The address nm (or nm -D with dynamic) reports for symbol name in file, or 0. */
static inline uint64_t nm_addr(const char *file, const char *name, bool dynamic)
{
	char cmd[1024], line[1024];
	uint64_t addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s --defined-only '%s/%s' 2>/dev/null", dynamic ? "-D" : "",
		 tmpdir, file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, sym[512];

		if (sscanf(line, "%llx %c %511s", &a, &type, sym) == 3 && !strcmp(sym, name))
			addr = a;
	}
	pclose(p);
	return addr;
}

/* The address objdump -d gives label (such as "printf@plt") in file, or 0. */
static inline uint64_t objdump_addr(const char *file, const char *label)
{
	char cmd[1024], line[1024], want[300];
	unsigned long long a;
	uint64_t addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d '%s/%s' 2>/dev/null", tmpdir, file);
	snprintf(want, sizeof(want), "<%s>:", label);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, want) && sscanf(line, "%llx", &a) == 1)
			addr = a;
	pclose(p);
	return addr;
}

static inline char *path_in(const char *name)
{
	static char path[4][512];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

/* Loads the symbols of a file in tmpdir; root as elf_symbols__load takes it. */
static inline int load_file(struct elf_symbols *es, const char *name, const char *root)
{
	char err[256] = "";
	int fd = open(path_in(name), O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = elf_symbols__load(es, fd, root, path_in(name), err, sizeof(err));
	close(fd);
	return ret;
}

/* The name at ELF virtual address va, or "" (never NULL, for assert_string_equal). */
static inline const char *at(const struct elf_symbols *es, uint64_t va)
{
	const char *n = symtab__find(&es->tab, va, NULL);

	return n ? n : "";
}

static inline bool have_cmd(const char *cmd)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "command -v %s >/dev/null 2>&1", cmd);
	return system(buf) == 0;
}

/* A mapping of the whole file at 0x400000 and one page past its end, as if a process had
 * mapped it (PROT_READ | PROT_EXEC, the file's device and inode). path must outlive the
 * mapping. */
static inline struct mapping file_mapping(const char *path)
{
	struct stat st;
	struct mapping m = { .start = 0x400000, .prot = PROT_READ | PROT_EXEC, .path = path };

	assert_int_equal(stat(path, &st), 0);
	m.end = m.start + ((uint64_t)st.st_size + 4095) / 4096 * 4096 + 4096;
	m.ino = st.st_ino;
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	return m;
}

#endif
