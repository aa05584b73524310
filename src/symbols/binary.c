#include "symbols/binary.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"

bool binary__has_file(const struct mapping *m)
{
	return m->path && m->path[0] == '/' && strcmp(m->path, "//anon") != 0;
}

/* The path without " (deleted)", into buf. Returns false when it does not fit. */
static bool strip_deleted(const char *path, char *buf, size_t size)
{
	size_t len = strlen(path), sl = strlen(DELETED_SUFFIX);

	if (len >= sl && !strcmp(path + len - sl, DELETED_SUFFIX))
		len -= sl;
	if (len + 1 > size)
		return false;
	memcpy(buf, path, len);
	buf[len] = '\0';
	return true;
}

/* Opens path and checks that it is a regular file with m's inode (when m knows it). */
static int open_checked(const char *path, const struct mapping *m, bool check_dev)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	/* The device seen through an overlay mount differs from the one /proc/PID/maps shows,
	 * so the device is only compared on the host path, where both views agree. */
	if (m->ino && (st.st_ino != m->ino ||
		       (check_dev && (m->maj || m->min) &&
			(major(st.st_dev) != m->maj || minor(st.st_dev) != m->min)))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int binary__open(const struct proc_ref *p, const struct mapping *m)
{
	char path[4096], proc[4096 + 64];
	int fd, err = -ENOENT;

	if (!binary__has_file(m))
		return -ENOENT;
	if (p && p->pid > 0) {
		snprintf(proc, sizeof(proc), "/proc/%d/map_files/%llx-%llx", (int)p->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	if (!strip_deleted(m->path, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (p && p->pid > 0) {
		snprintf(proc, sizeof(proc), "/proc/%d/root%s", (int)p->pid, path);
		fd = open_checked(proc, m, false);
		if (fd >= 0)
			return fd;
		if (fd == -ESTALE)
			err = fd;
	}
	if (!p || p->pid <= 0 || p->nspid == p->pid || p->nspid <= 0) {
		fd = open_checked(path, m, true);
		if (fd >= 0)
			return fd;
		if (fd == -ESTALE)
			err = fd;
	}
	return err;
}

char *binary__module_name(const char *path, char *buf, size_t size)
{
	const char *base;
	char tmp[4096];

	if (!size)
		return buf;
	if (!path || !*path) {
		snprintf(buf, size, "unknown");
		return buf;
	}
	if (!strip_deleted(path, tmp, sizeof(tmp))) {
		snprintf(buf, size, "unknown");
		return buf;
	}
	base = strrchr(tmp, '/');
	base = base && base[1] ? base + 1 : tmp;
	snprintf(buf, size, "%s", base);
	return buf;
}
