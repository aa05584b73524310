/* The CPython frame decoders (runtimes/python_code.h): line tables of every kind and
 * string and bytes objects under the layouts of 2.7, 3.8, 3.11 and 3.12. The first byte
 * picks the layout and the table kind. */
#include "fuzz.h"

#include "runtimes/python_code.h"
#include "runtimes/python_layout.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int minors[][2] = { { 2, 7 }, { 3, 8 }, { 3, 11 }, { 3, 12 } };
	struct py_layout l;
	struct strbuf out = STRBUF_INIT;
	uint64_t bsize;
	size_t off;

	if (size < 3)
		return 0;
	if (py_layout__for_version(minors[data[0] & 3][0], minors[data[0] & 3][1], &l))
		return 0;
	py_code__line(l.line_kind, data + 3, size - 3, data[1], (int64_t)data[2] * 2 - 2);
	py_code__string(&l, data + 1, size - 1, 0, &out);
	py_code__bytes(&l, data + 1, size - 1, 0, &bsize, &off);
	strbuf_release(&out);
	return 0;
}
