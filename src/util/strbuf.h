/* A growable, always NUL-terminated byte string (after git's strbuf).
 *
 *   struct strbuf sb = STRBUF_INIT;
 *   strbuf_addf(&sb, "%s;%d", name, n);
 *   ... sb.buf, sb.len ...
 *   strbuf_release(&sb);
 *
 * Allocation failure aborts the process: a profiler that cannot allocate a few bytes
 * has nothing better to do, and it keeps every caller free of error paths for text. */
#ifndef KILN_UTIL_STRBUF_H
#define KILN_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;	/* never NULL: points at a static "" until the first growth */
	size_t len;
	size_t alloc;
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0 }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the contents and leaves sb as STRBUF_INIT. */
void strbuf_release(struct strbuf *sb);
/* Hands the buffer to the caller (free() it); sb is left empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
/* Counts n bytes written straight into the spare room strbuf_grow made (strbuf_setlen
 * only shrinks). */
void strbuf_commit(struct strbuf *sb, size_t n);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Reads all of fd (or the file at path) into sb. Returns 0, or a negative errno. */
int strbuf_read_fd(struct strbuf *sb, int fd);
int strbuf_read_file(struct strbuf *sb, const char *path);

/* Allocation helpers that abort on failure (same rationale as above). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
