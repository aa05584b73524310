#include "util/strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char strbuf_empty[1];

static void die_oom(size_t n)
{
	fprintf(stderr, "kiln: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		die_oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	if (n)	/* s may be NULL when n is 0 */
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *p;

	if (len)
		*len = sb->len;
	p = sb->alloc ? sb->buf : xstrdup("");
	strbuf_init(sb, 0);
	return p;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		die_oom(SIZE_MAX);
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n = n * 3 / 2 + 16;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, n);
	} else {
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
	}
	sb->alloc = n;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	sb->len = len < sb->len ? len : sb->len;
	sb->buf[sb->len] = '\0';
}

void strbuf_commit(struct strbuf *sb, size_t n)
{
	if (!n)
		return;
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if (!sb->alloc || (size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

int strbuf_read_fd(struct strbuf *sb, int fd)
{
	for (;;) {
		strbuf_grow(sb, 8192);
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
	}
	return 0;
}

int strbuf_read_file(struct strbuf *sb, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = strbuf_read_fd(sb, fd);
	close(fd);
	return err;
}
