/* perf script text (format/perfscript.h), with every option the first byte sets. */
#include "fuzz.h"

#include "format/perfscript.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfscript_options o = { 0 };
	struct profile *p;
	char err[256];
	size_t skipped;

	if (!size)
		return 0;
	o.annotate_kernel = data[0] & 1;
	o.annotate_jit = data[0] & 2;
	o.include_pid = data[0] & 4;
	o.include_tid = data[0] & 8;
	o.count_samples = data[0] & 16;
	p = profile__new();
	perfscript__parse(p, (const char *)data + 1, size - 1, &o, &skipped, err, sizeof(err));
	profile__free(p);
	return 0;
}
