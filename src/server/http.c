/* Request and response helpers of the HTTP server. */
#include "server/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/log.h"

const char *req__arg(const struct request *r, const char *name)
{
	return r->conn ? MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name) : NULL;
}

const char *req__header(const struct request *r, const char *name)
{
	if (!r->conn) {
		for (size_t i = 0; i < r->nr_hdrs; i++)
			if (r->hdrs[2 * i + 1] && !strcasecmp(r->hdrs[2 * i], name))
				return r->hdrs[2 * i + 1];
		return NULL;
	}
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
