/* gzip through zlib: see gzip.h. */
#include "util/gzip.h"

#include <errno.h>
#include <stdint.h>
#include <zlib.h>

#include "util/log.h"

#define GZIP_WINDOW 31	/* 15-bit window, gzip header */
#define ANY_WINDOW 47	/* 15-bit window, gzip or zlib header by its magic */

int gzip__compress_level(struct strbuf *out, const void *data, size_t len, int level)
{
	z_stream zs = { 0 };
	int rc;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (deflateInit2(&zs, level, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	strbuf_grow(out, deflateBound(&zs, (uLong)len));
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out->buf + out->len;
	zs.avail_out = (uInt)(out->alloc - out->len - 1);
	rc = deflate(&zs, Z_FINISH);	/* deflateBound: one call is enough */
	if (rc == Z_STREAM_END)
		strbuf_commit(out, zs.total_out);
	deflateEnd(&zs);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

int gzip__compress(struct strbuf *out, const void *data, size_t len)
{
	return gzip__compress_level(out, data, len, Z_DEFAULT_COMPRESSION);
}

int gzip__decompress_why(struct strbuf *out, const void *data, size_t len, size_t limit,
			 char *err, size_t errlen)
{
	z_stream zs = { 0 };
	size_t start = out->len;
	int rc;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (inflateInit2(&zs, ANY_WINDOW) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	do {
		if (out->len - start >= limit) {
			inflateEnd(&zs);
			return -EFBIG;
		}
		strbuf_grow(out, 65536);
		zs.next_out = (Bytef *)out->buf + out->len;
		zs.avail_out = (uInt)(out->alloc - out->len - 1);
		rc = inflate(&zs, Z_NO_FLUSH);
		strbuf_commit(out, (size_t)((char *)zs.next_out - (out->buf + out->len)));
		/* Concatenated gzip members: continue with the next one. */
		if (rc == Z_STREAM_END && zs.avail_in) {
			if (inflateReset(&zs) != Z_OK)
				break;
			rc = Z_OK;
		}
	} while (rc == Z_OK);
	if (rc != Z_STREAM_END && err)
		errmsg(err, errlen, "%s", rc == Z_BUF_ERROR ? "truncated" :
			  zs.msg ? zs.msg : "inflate failed");
	inflateEnd(&zs);
	if (rc != Z_STREAM_END)
		return -EINVAL;
	return out->len - start > limit ? -EFBIG : 0;
}

int gzip__decompress(struct strbuf *out, const void *data, size_t len, size_t limit)
{
	return gzip__decompress_why(out, data, len, limit, NULL, 0);
}
