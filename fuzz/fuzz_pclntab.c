/* Go's pclntab (symbols/gopclntab.h), every header version. */
#include "fuzz.h"

#include "symbols/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab t;

	symtab_init(&t);
	if (gopclntab__load(data, size, 0x401000, &t) > 0)
		symtab__finish(&t, SYMTAB_FIRST_WINS, 0);
	symtab_release(&t);
	return 0;
}
