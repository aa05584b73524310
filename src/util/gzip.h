/* gzip both ways, through zlib, into a strbuf: what the agent's uploads, the server's
 * requests and responses and the pprof format all use. */
#ifndef KILN_UTIL_GZIP_H
#define KILN_UTIL_GZIP_H

#include <stddef.h>

#include "util/strbuf.h"

/* Appends data gzip-compressed at a zlib level from 1 (fastest) to 9 (smallest) to out.
 * Returns 0, or a negative errno. */
int gzip__compress_level(struct strbuf *out, const void *data, size_t len, int level);
/* The same at level 6, zlib's default. */
int gzip__compress(struct strbuf *out, const void *data, size_t len);
/* Appends data gzip- or zlib-decoded to out (concatenated gzip members too). Returns 0,
 * -EFBIG when more than limit bytes come out, -EINVAL on corrupt or truncated input,
 * -ENOMEM. */
int gzip__decompress(struct strbuf *out, const void *data, size_t len, size_t limit);
/* The same, saying in err why input is corrupt ("truncated", or zlib's message). */
int gzip__decompress_why(struct strbuf *out, const void *data, size_t len, size_t limit,
			 char *err, size_t errlen);

#endif
