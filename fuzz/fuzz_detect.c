/* `kiln report`'s input: format detection, then the detected parser (format/detect.h). */
#include "fuzz.h"

#include "format/detect.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	char err[256];

	input__detect(data, size);
	input__load(p, data, size, INPUT_UNKNOWN, NULL, err, sizeof(err));
	profile__free(p);
	return 0;
}
