/* Pyroscope's multipart ingest body (server/multipart.h): the first line is the
 * Content-Type, the rest the body; every part name Pyroscope sends is looked up. */
#include "fuzz.h"

#include "server/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t clen = nl ? (size_t)(nl - data) : size;
	char *ctype = fuzz_cstr(data, clen), boundary[128];
	static const char *const names[] = { "profile", "prev_profile", "sample_type_config" };

	if (!multipart__boundary(ctype, boundary, sizeof(boundary))) {
		const char *body = nl ? (const char *)nl + 1 : "";
		size_t blen = nl ? size - clen - 1 : 0;
		for (size_t i = 0; i < 3; i++) {
			const char *part;
			size_t plen;
			char err[128];
			multipart__find(body, blen, boundary, names[i], &part, &plen, err, sizeof(err));
		}
	}
	free(ctype);
	return 0;
}
