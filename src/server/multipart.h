/* multipart/form-data bodies (RFC 7578), as the Pyroscope SDKs send profiles: finds one
 * named part without copying. Takes untrusted input. */
#ifndef KILN_SERVER_MULTIPART_H
#define KILN_SERVER_MULTIPART_H

#include <stddef.h>

/* Extracts the boundary parameter of a Content-Type header value into out (at most
 * outlen - 1 bytes, 70 by RFC 2046). Returns 0, or -EINVAL when there is none. */
int multipart__boundary(const char *content_type, char *out, size_t outlen);

/* Finds the part whose Content-Disposition has name="<name>" in body. On success sets
 * data and dlen to the part's content (pointing into body) and returns 0; returns -ENOENT
 * when no such part exists and -EINVAL (with a message in err) when the body is not
 * well-formed multipart. */
int multipart__find(const char *body, size_t len, const char *boundary, const char *name,
		    const char **data, size_t *dlen, char *err, size_t errlen);

#endif
