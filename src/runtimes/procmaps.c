/* /proc/PID/maps for the runtime readers (see procmaps.h): one read and a hand-written
 * parse (sscanf was most of a reader's cost on a process it then rejected). */
#include "runtimes/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"

static struct {
	char *buf;
	size_t cap;
	struct procmap *v;
	size_t n, alloc;
	pid_t pid;		/* whose maps v holds, 0 none */
	bool held;
	uint64_t reads;
} pm;

/* Parses a hex number at *p, moving *p past it. Returns false when there is none. */
static bool hex(char **p, const char *end, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;

	while (s < end) {
		unsigned c = (unsigned char)*s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (x >> 60)
			return false;
		x = x << 4 | d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*v = x;
	return true;
}

static bool dec(char **p, const char *end, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		if (x > UINT64_MAX / 10 - 1)
			return false;
		x = x * 10 + (uint64_t)(*s++ - '0');
	}
	if (s == *p)
		return false;
	*p = s;
	*v = x;
	return true;
}

static bool skip(char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static void spaces(char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/* "start-end perms offset maj:min inode    path" */
static bool parse_line(char *s, char *end, struct procmap *m)
{
	uint64_t maj, min;
	char *perms;

	if (!hex(&s, end, &m->start) || !skip(&s, end, '-') || !hex(&s, end, &m->end) ||
	    !skip(&s, end, ' '))
		return false;
	perms = s;
	while (s < end && *s != ' ')
		s++;
	if (s - perms < 4 || !skip(&s, end, ' ') || !hex(&s, end, &m->pgoff) ||
	    !skip(&s, end, ' ') || !hex(&s, end, &maj) || !skip(&s, end, ':') ||
	    !hex(&s, end, &min) || !skip(&s, end, ' ') || !dec(&s, end, &m->ino))
		return false;
	spaces(&s, end);
	if (s >= end || *s != '/')
		return false;
	m->maj = (uint32_t)maj;
	m->min = (uint32_t)min;
	m->exec = perms[2] == 'x';
	m->path = s;
	return true;
}

size_t procmaps__parse(char *buf, size_t len, struct procmap **out, size_t *alloc)
{
	char *s = buf, *end = buf + len;
	size_t n = 0;

	while (s < end) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		char *eol = nl ? nl : end;
		struct procmap m;

		if (nl)
			*nl = '\0';	/* the last line ends at buf[len], a NUL */
		if (parse_line(s, eol, &m)) {
			if (n == *alloc) {
				*alloc = *alloc ? 2 * *alloc : 64;
				*out = xrealloc(*out, *alloc * sizeof(**out));
			}
			(*out)[n++] = m;
		}
		s = eol + 1;
	}
	return n;
}

/* Reads /proc/pid/maps whole into pm.buf, NUL-terminated. Returns its length or -errno. */
static ssize_t read_maps(pid_t pid)
{
	char path[64];
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	pm.reads++;
	for (;;) {
		if (pm.cap - len < 4097) {
			pm.cap = pm.cap ? 2 * pm.cap : 65536;
			pm.buf = xrealloc(pm.buf, pm.cap);
		}
		ssize_t r = read(fd, pm.buf + len, pm.cap - len - 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	pm.buf[len] = '\0';
	return (ssize_t)len;
}

const struct procmap *procmaps__get(pid_t pid, size_t *n)
{
	ssize_t len;

	if (pm.held && pm.pid == pid && pid > 0) {
		*n = pm.n;
		return pm.v;
	}
	pm.pid = 0;
	pm.n = 0;
	*n = 0;
	len = read_maps(pid);
	if (len < 0)
		return NULL;
	pm.n = procmaps__parse(pm.buf, (size_t)len, &pm.v, &pm.alloc);
	pm.pid = pid;
	*n = pm.n;
	return pm.v;
}

void procmaps__hold(void)
{
	pm.held = true;
	pm.pid = 0;
}

void procmaps__release(void)
{
	pm.held = false;
	pm.pid = 0;
	if (pm.cap > (1u << 20)) {	/* a huge map (a JVM with thousands of mappings) */
		free(pm.buf);
		pm.buf = NULL;
		pm.cap = 0;
	}
}

uint64_t procmaps__reads(void)
{
	return pm.reads;
}
