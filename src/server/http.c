/* Request and response helpers of the HTTP server, and gzip (zlib) both ways. */
#include "server/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "util/log.h"

const char *req__arg(const struct request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *req__header(const struct request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

int64_t req__now(void)
{
	return (int64_t)time(NULL);
}

void resp__json(struct response *resp, unsigned status, json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT);

	json_decref(v);
	if (!text)
		abort();
	resp->status = status;
	resp->content_type = "application/json";
	strbuf_reset(&resp->body);
	strbuf_addstr(&resp->body, text);
	free(text);
}

void resp__errorv(struct response *resp, unsigned status, const char *code, const char *fmt,
		  va_list ap)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	/* jansson refuses invalid UTF-8: keep the message ASCII. */
	for (size_t i = 0; i < msg.len; i++)
		if ((unsigned char)msg.buf[i] >= 0x80 || (unsigned char)msg.buf[i] < 0x20)
			msg.buf[i] = '?';
	/* gProfiler's client reads "message" from a 4xx body, older kiln clients "error" */
	resp__json(resp, status, code ? json_pack("{s:s,s:s}", "code", code, "message", msg.buf)
				       : json_pack("{s:s,s:s}", "error", msg.buf, "message", msg.buf));
	strbuf_release(&msg);
}

void resp__error(struct response *resp, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	resp__errorv(resp, status, NULL, fmt, ap);
	va_end(ap);
}

/* strbuf_setlen only shrinks: this grows len over bytes written into the buffer. */
static void set_len(struct strbuf *sb, size_t len)
{
	sb->len = len;
	sb->buf[len] = 0;
}

int gzip__compress(struct strbuf *out, const void *data, size_t len)
{
	return gzip__compress_level(out, data, len, 6);
}

int gzip__compress_level(struct strbuf *out, const void *data, size_t len, int level)
{
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	do {
		strbuf_grow(out, len / 4 + 4096);
		zs.next_out = (Bytef *)out->buf + out->len;
		zs.avail_out = (uInt)(out->alloc - out->len - 1);
		rc = deflate(&zs, Z_FINISH);
		set_len(out, out->alloc - 1 - zs.avail_out);
	} while (rc == Z_OK);
	deflateEnd(&zs);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

int gzip__decompress(struct strbuf *out, const void *data, size_t len, size_t limit)
{
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 47) != Z_OK)	/* 32 + 15: gzip or zlib header */
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	do {
		if (out->len >= limit) {
			inflateEnd(&zs);
			return -EFBIG;
		}
		strbuf_grow(out, 65536);
		zs.next_out = (Bytef *)out->buf + out->len;
		zs.avail_out = (uInt)(out->alloc - out->len - 1);
		rc = inflate(&zs, Z_NO_FLUSH);
		set_len(out, out->alloc - 1 - zs.avail_out);
		/* Concatenated gzip members: continue with the next one. */
		if (rc == Z_STREAM_END && zs.avail_in) {
			if (inflateReset(&zs) != Z_OK)
				break;
			rc = Z_OK;
		}
	} while (rc == Z_OK);
	inflateEnd(&zs);
	if (rc != Z_STREAM_END)
		return -EINVAL;
	return out->len > limit ? -EFBIG : 0;
}

int req__gunzip_body(struct request *r, struct response *resp, bool sniff)
{
	const char *enc = req__header(r, "Content-Encoding");
	bool gz = enc && (!strcasecmp(enc, "gzip") || !strcasecmp(enc, "x-gzip"));
	struct strbuf out = STRBUF_INIT;
	int ret;

	if (!gz && sniff && r->body.len >= 2 && (unsigned char)r->body.buf[0] == 0x1f &&
	    (unsigned char)r->body.buf[1] == 0x8b)
		gz = true;
	if (!gz)
		return 0;
	ret = gzip__decompress(&out, r->body.buf, r->body.len, r->srv->opts.max_decoded_bytes);
	if (ret == -EFBIG)
		resp__error(resp, 413, "request body is larger than %zu bytes once decompressed",
			    r->srv->opts.max_decoded_bytes);
	else if (ret)
		resp__error(resp, 400, "request body is not valid gzip");
	if (ret) {
		strbuf_release(&out);
		return ret;
	}
	strbuf_release(&r->body);
	r->body = out;
	return 0;
}
