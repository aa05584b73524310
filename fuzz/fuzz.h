/* Shared by the libFuzzer harnesses (fuzz/fuzz_*.c): each defines LLVMFuzzerTestOneInput
 * for one parser of outside input; `make fuzz` and `make fuzz-smoke` run them (fuzz/README). */
#ifndef KILN_FUZZ_H
#define KILN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (free it). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

#endif
