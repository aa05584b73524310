/* pprof (format/pprof.h), raw or gzipped, then encoded again. */
#include "fuzz.h"

#include "format/pprof.h"
#include "profile/profile.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	char err[256];

	if (!pprof__parse(p, data, size, NULL, err, sizeof(err))) {
		struct strbuf out = STRBUF_INIT;
		pprof__write(&out, p);
		strbuf_release(&out);
	}
	profile__free(p);
	return 0;
}
