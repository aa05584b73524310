#include "symbols/debugfile.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_DIR "/usr/lib/debug"

static char debuginfod_cache[4096];	/* "" when none: set once, before threads */

void debugfile__set_debuginfod_cache(const char *dir)
{
	snprintf(debuginfod_cache, sizeof(debuginfod_cache), "%s", dir ? dir : "");
}

int debugfile__crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	*crc = (uint32_t)c;
	return 0;
}

static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* True when the file at fd is an ELF whose build-id is id. */
static bool same_build_id(int fd, const void *id, size_t len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	ssize_t n;
	bool ok = false;

	if (!e)
		return false;
	n = elf_kind(e) == ELF_K_ELF ? dwelf_elf_gnu_build_id(e, &got) : -1;
	ok = n > 0 && (size_t)n == len && !memcmp(got, id, len);
	elf_end(e);
	return ok;
}

static int by_build_id(const char *root, const unsigned char *id, size_t len)
{
	char hex[2 * 64 + 1], path[4096];
	size_t i;
	int pass, fd;

	if (len < 2 || len > 64)
		return -ENOENT;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (pass = 0; pass < 2; pass++) {
		const char *r = pass ? "" : root;

		if (!pass && !*root)
			continue;
		snprintf(path, sizeof(path), "%s" DEBUG_DIR "/.build-id/%.2s/%s.debug", r, hex,
			 hex + 2);
		fd = open_regular(path);
		if (fd < 0)
			continue;
		if (same_build_id(fd, id, len))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* What debuginfod fetched before, in libdebuginfod's layout: <cache>/<hex>/debuginfo
 * (a failed fetch leaves an empty file there, which is not an ELF). */
static int by_debuginfod_cache(const unsigned char *id, size_t len)
{
	char hex[2 * 64 + 1], path[4096 + 160];
	int fd;

	if (len < 2 || len > 64)
		return -ENOENT;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(path, sizeof(path), "%s/%s/debuginfo", debuginfod_cache, hex);
	fd = open_regular(path);
	if (fd < 0)
		return -ENOENT;
	if (same_build_id(fd, id, len))
		return fd;
	close(fd);
	return -ENOENT;
}

static int try_link(const char *path, uint32_t want)
{
	uint32_t crc;
	int fd = open_regular(path);

	if (fd < 0)
		return fd;
	if (debugfile__crc32(fd, &crc) < 0 || crc != want) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int by_debuglink(const char *root, const char *path, const char *link, uint32_t crc)
{
	char dir[4096], cand[8192];
	const char *slash, *deleted;
	size_t dlen;
	int pass, fd;

	/* A debuglink is a plain file name; anything with a '/' is not to be trusted. */
	if (!*link || strchr(link, '/') || !strcmp(link, "..") || !path || path[0] != '/')
		return -ENOENT;
	deleted = strstr(path, " (deleted)");
	dlen = deleted ? (size_t)(deleted - path) : strlen(path);
	slash = memrchr(path, '/', dlen);
	dlen = (size_t)(slash - path);
	if (dlen >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	for (pass = 0; pass < 2; pass++) {
		const char *r = pass ? "" : root;
		static const char *const fmt[] = { "%s%s/%s", "%s%s/.debug/%s",
						   "%s" DEBUG_DIR "%s/%s" };
		size_t i;

		if (!pass && !*root)
			continue;
		for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
			snprintf(cand, sizeof(cand), fmt[i], r, dir, link);
			fd = try_link(cand, crc);
			if (fd >= 0)
				return fd;
		}
	}
	return -ENOENT;
}

int debugfile__open(Elf *elf, const char *root, const char *path)
{
	const void *id;
	const char *link;
	GElf_Word crc = 0;
	ssize_t n;
	int fd;

	if (!root)
		root = "";
	elf_version(EV_CURRENT);
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0) {
		fd = by_build_id(root, id, (size_t)n);
		if (fd >= 0)
			return fd;
	}
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link) {
		fd = by_debuglink(root, path, link, crc);
		if (fd >= 0)
			return fd;
	}
	if (n > 0 && *debuginfod_cache)
		return by_debuginfod_cache(id, (size_t)n);
	return -ENOENT;
}
