/* Finding the Zend engine in a process: the mapped file that holds it (the php, php-fpm
 * or php-cgi executable, or a libphp*.so a web server loaded), its version (the
 * "X-Powered-By: PHP/x.y.z" string every build carries), whether it is an NTS build
 * (executor_globals exported) and where executor_globals is (see php_proc.h). */
#include "runtimes/php_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtimes/bincache.h"
#include "runtimes/procmaps.h"
#include "symbols/elf_lookup.h"

#define MAX_ENGINE_FILE (512u << 20)	/* largest file searched for the version string */
#define NR_KNOWN 32			/* engine files remembered */
#define POWERED "X-Powered-By: PHP/"

ssize_t php_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (addr == 0)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

bool php_file_name_matches(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	if (!strncmp(base, "libphp", 6))
		return strstr(base + 6, ".so") != NULL;
	if (strncmp(base, "php", 3))
		return false;
	p = base + 3;
	if (!strncmp(p, "-fpm", 4) || !strncmp(p, "-cgi", 4))
		p += 4;
	for (; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return false;
	return true;
}

/* What an engine file holds, remembered per file (runtimes/bincache.h). */
struct known {
	int status;			/* 0, -ENOENT (no engine) or -ENOTSUP (skip_reason) */
	char reason[96];
	int major, minor;
	char version[16];
	uint64_t eg;			/* executor_globals, file vaddr */
	uint64_t seg;			/* a mapping at pgoff is biased by start - seg */
};

static struct bincache *known;

void php_attach__forget(void)
{
	bincache__free(known);
	known = NULL;
}

/* The first mapping of the first file whose name php_file_name_matches(). */
static int engine_mapping(pid_t pid, struct bin_mapping *out)
{
	size_t n;
	const struct procmap *m = procmaps__get(pid, &n);

	for (size_t i = 0; i < n; i++) {
		if (!php_file_name_matches(m[i].path))
			continue;
		out->pid = pid;
		out->start = m[i].start;
		out->end = m[i].end;
		out->pgoff = m[i].pgoff;
		snprintf(out->path, sizeof(out->path), "%s", m[i].path);
		return 0;
	}
	return m ? -ENOENT : -ESRCH;
}

/* The file as the process sees it: through map_files (the very inode it maps), else
 * through its root. */
static void file_path(pid_t pid, const struct bin_mapping *m, bool via_root, char *buf, size_t len)
{
	if (via_root)
		snprintf(buf, len, "/proc/%d/root%s", (int)pid, m->path);
	else
		snprintf(buf, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
			 m->end);
}

/* Finds the version string in the file at path. Returns 0, -ENOENT or -errno. */
static int file_version(const char *path, struct known *k)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	struct stat st;
	void *map;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > MAX_ENGINE_FILE) {
		close(fd);
		return -EFBIG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	const char *at = memmem(map, (size_t)st.st_size, POWERED, strlen(POWERED));
	if (at) {
		size_t off = (size_t)(at - (const char *)map) + strlen(POWERED);
		size_t left = (size_t)st.st_size - off;
		err = php_layout__parse_version(at + strlen(POWERED), left < 16 ? left : 16,
						&k->major, &k->minor, k->version,
						sizeof(k->version));
		err = err < 0 ? -ENOENT : 0;
	}
	munmap(map, (size_t)st.st_size);
	return err;
}

/* Looks at an engine file not seen before: fills k's status, version and symbols. */
static void inspect(void *value, const struct bin_mapping *m)
{
	struct known *k = value;
	pid_t pid = m->pid;
	char path[PATH_MAX + 64];
	struct elf_lookup *e;
	uint64_t v, bias;
	bool via_root = !strstr(m->path, " (deleted)");

	file_path(pid, m, via_root, path, sizeof(path));
	e = elf_lookup__open(path);
	if (!e && via_root) {
		via_root = false;
		file_path(pid, m, false, path, sizeof(path));
		e = elf_lookup__open(path);
	}
	k->status = -ENOENT;
	if (!e)
		return;
	if (elf_lookup__bias(e, m->start, m->pgoff, &bias) < 0)
		goto out;
	k->seg = m->start - bias;
	if (file_version(path, k) < 0) {
		if (elf_lookup__symbol(e, "executor_globals", 0, &v) == 0 ||
		    elf_lookup__symbol(e, "executor_globals_offset", 0, &v) == 0) {
			k->status = -ENOTSUP;
			snprintf(k->reason, sizeof(k->reason), "unknown php version in '%.60s'",
				 m->path);
		}
		goto out;
	}
	if (elf_lookup__symbol(e, "executor_globals", 0, &k->eg) == 0) {
		struct php_layout l;
		k->status = 0;
		if (php_layout__for_version(k->major, k->minor, &l) < 0) {
			k->status = -ENOTSUP;
			snprintf(k->reason, sizeof(k->reason), "unsupported php %s", k->version);
		}
	} else if (elf_lookup__symbol(e, "executor_globals_offset", 0, &v) == 0 ||
		   elf_lookup__symbol(e, "executor_globals_id", 0, &v) == 0 ||
		   elf_lookup__symbol(e, "tsrm_get_ls_cache", 0, &v) == 0) {
		/* ZTS: executor_globals is per thread, behind the thread's TSRM cache in
		 * its TLS, which another process cannot find without stopping the thread */
		k->status = -ENOTSUP;
		snprintf(k->reason, sizeof(k->reason), "unsupported php %s (ZTS)", k->version);
	}
out:
	elf_lookup__free(e);
}

int php_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason)
{
	struct bin_mapping m;
	struct known one, *k;
	int err = engine_mapping(p->pid, &m);

	if (err < 0)
		return -ENOENT;
	k = bincache__get_mapped(&known, sizeof(struct known), NR_KNOWN, &m, &one, inspect);
	if (k->status == -ENOTSUP)
		snprintf(skip_reason, 128, "%s", k->reason);
	if (k->status < 0)
		return k->status;
	if (php_layout__for_version(k->major, k->minor, &rp->l) < 0)
		return -ENOTSUP;
	snprintf(rp->version, sizeof(rp->version), "%s", k->version);
	rp->eg_cur = k->eg + (m.start - k->seg) + rp->l.eg_current_execute_data;
	return 0;
}
