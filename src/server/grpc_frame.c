/* gRPC's framing of a unary call's message, its status codes and grpc-message's
 * percent-encoding (server/grpc.h), without I/O. */
#include "server/grpc.h"

#include <errno.h>
#include <stdio.h>

#include "util/log.h"
#include "util/strbuf.h"

int grpc__unframe(const void *body, size_t size, const void **msg, size_t *len,
		  bool *compressed, char *err, size_t errlen)
{
	const unsigned char *b = body;
	uint32_t n;

	if (size < 5) {
		errmsg(err, errlen, "request of %zu bytes has no gRPC message (5-byte prefix)", size);
		return -EINVAL;
	}
	if (b[0] > 1) {
		errmsg(err, errlen, "invalid gRPC message flag %u", b[0]);
		return -EINVAL;
	}
	n = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
	if ((size_t)n != size - 5) {
		errmsg(err, errlen, "gRPC message says %u bytes, the request has %zu after the "
		       "prefix: a unary call carries exactly one message", n, size - 5);
		return -EINVAL;
	}
	*compressed = b[0] == 1;
	*msg = b + 5;
	*len = n;
	return 0;
}

void grpc__frame(struct strbuf *out, const void *msg, size_t len)
{
	unsigned char p[5] = { 0, (unsigned char)(len >> 24), (unsigned char)(len >> 16),
			       (unsigned char)(len >> 8), (unsigned char)len };

	strbuf_add(out, p, 5);
	strbuf_add(out, msg, len);
}

enum grpc_code grpc__code_of(unsigned status)
{
	switch (status) {
	case 200: return GRPC_OK;
	case 401: return GRPC_UNAUTHENTICATED;
	case 403: return GRPC_PERMISSION_DENIED;
	case 404: return GRPC_UNIMPLEMENTED;
	case 413: case 429: case 507: return GRPC_RESOURCE_EXHAUSTED;
	case 503: return GRPC_UNAVAILABLE;
	default: return status >= 400 && status < 500 ? GRPC_INVALID_ARGUMENT : GRPC_INTERNAL;
	}
}

void grpc__percent_encode(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c > 0x7e || c == '%')
			strbuf_addf(out, "%%%02X", c);
		else
			strbuf_addch(out, (char)c);
	}
}
