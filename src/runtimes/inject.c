/* kiln's libraries for other processes: see inject.h. */
#include "runtimes/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"
#include "util/strbuf.h"

int inject__beside_self(const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return snprintf(buf, size, "%s/%s", exe, name) < (int)size ? 0 : -ENAMETOOLONG;
}

int inject__copy_into_root(pid_t pid, const char *lib, const char *stem, char *out,
			   size_t size)
{
	char dst[PATH_MAX + 64], tmp[PATH_MAX + 96];
	struct strbuf data = STRBUF_INIT;
	struct stat st;
	int fd, err;

	if (stat(lib, &st) < 0)
		return -errno;
	if (snprintf(out, size, "/tmp/%s-%llx-%llx.so", stem, (unsigned long long)st.st_size,
		     (unsigned long long)st.st_mtime) >= (int)size)
		return -ENAMETOOLONG;
	snprintf(dst, sizeof(dst), "/proc/%d/root%s", (int)pid, out);
	if (stat(dst, &st) == 0)
		return 0;
	err = strbuf_read_file(&data, lib);
	if (err < 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.%d", dst, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = io__write_all(fd, data.buf, data.len);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, dst) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	strbuf_release(&data);
	return err;
}
