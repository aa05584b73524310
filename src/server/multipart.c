#include "server/multipart.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"
#include "util/strbuf.h"

int multipart__boundary(const char *content_type, char *out, size_t outlen)
{
	const char *p = content_type;
	size_t n = 0;

	while ((p = strchr(p, ';'))) {
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "boundary=", 9))
			continue;
		p += 9;
		bool quoted = *p == '"';
		if (quoted)
			p++;
		while (*p && (quoted ? *p != '"' : (*p != ';' && *p != ' ' && *p != '\t'))) {
			if (n + 1 >= outlen)
				return -EINVAL;
			out[n++] = *p++;
		}
		out[n] = 0;
		return n ? 0 : -EINVAL;
	}
	return -EINVAL;
}

static const char *find_bytes(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	return nlen <= hlen ? memmem(hay, hlen, needle, nlen) : NULL;
}

/* True when the header block [h, end) has Content-Disposition with name="<name>". */
static bool part_named(const char *h, const char *end, const char *name)
{
	while (h < end) {
		const char *eol = find_bytes(h, (size_t)(end - h), "\r\n", 2);
		const char *lend = eol ? eol : end;
		if ((size_t)(lend - h) > 20 && !strncasecmp(h, "content-disposition:", 20)) {
			struct strbuf want = STRBUF_INIT;
			strbuf_addf(&want, "name=\"%s\"", name);
			for (const char *p = h + 20; p + want.len <= lend; p++) {
				/* name= must not be the tail of filename= */
				if (!strncmp(p, want.buf, want.len) &&
				    (p == h + 20 || p[-1] == ' ' || p[-1] == ';')) {
					strbuf_release(&want);
					return true;
				}
			}
			strbuf_release(&want);
		}
		h = eol ? eol + 2 : end;
	}
	return false;
}

int multipart__find(const char *body, size_t len, const char *boundary, const char *name,
		    const char **data, size_t *dlen, char *err, size_t errlen)
{
	struct strbuf delim = STRBUF_INIT;
	const char *end = body + len, *p;
	int ret = -ENOENT;

	strbuf_addf(&delim, "--%s", boundary);
	p = find_bytes(body, len, delim.buf, delim.len);
	if (!p) {
		errmsg(err, errlen, "multipart body has no boundary '%s'", boundary);
		ret = -EINVAL;
		goto out;
	}
	/* From here on delimiters are preceded by CRLF. */
	strbuf_reset(&delim);
	strbuf_addf(&delim, "\r\n--%s", boundary);
	p += delim.len - 2;
	for (;;) {
		const char *hdr, *hend, *next;
		if (end - p >= 2 && p[0] == '-' && p[1] == '-')
			break;	/* closing delimiter */
		hdr = find_bytes(p, (size_t)(end - p), "\r\n", 2);
		if (!hdr) {
			errmsg(err, errlen, "multipart part has no headers");
			ret = -EINVAL;
			break;
		}
		/* The headers end at the first empty line; from the delimiter line's CRLF, so
		 * that a part without headers ends there and not at a later part's. */
		hend = find_bytes(hdr, (size_t)(end - hdr), "\r\n\r\n", 4);
		hdr += 2;
		if (!hend) {
			errmsg(err, errlen, "multipart part headers do not end");
			ret = -EINVAL;
			break;
		}
		next = find_bytes(hend + 4, (size_t)(end - hend - 4), delim.buf, delim.len);
		if (!next) {
			errmsg(err, errlen, "multipart part is not terminated by its boundary");
			ret = -EINVAL;
			break;
		}
		if (part_named(hdr, hend, name)) {
			*data = hend + 4;
			*dlen = (size_t)(next - hend - 4);
			ret = 0;
			break;
		}
		p = next + delim.len;
	}
out:
	strbuf_release(&delim);
	return ret;
}
