/* .col and folded stacks (format/col.h), then written back: what parses must render. */
#include "fuzz.h"

#include <stdio.h>

#include "format/col.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	char err[256];

	if (!col__parse(p, (const char *)data, size, err, sizeof(err))) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			col__write(f, p, true);
			fclose(f);
		}
	}
	profile__free(p);
	return 0;
}
