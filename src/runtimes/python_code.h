/* Decoding what the Python reader copies out of a CPython process: line tables (for the
 * line of an instruction) and string objects (for names and file names). Pure functions
 * over untrusted bytes: every length and offset is checked against the buffer. */
#ifndef KILN_RUNTIMES_PYTHON_CODE_H
#define KILN_RUNTIMES_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/python_layout.h"
#include "util/strbuf.h"

#define PY_NAME_MAX 256		/* longest name or file name kept, in bytes */

/* The line of the instruction at byte offset addr of a code object whose line table
 * (co_lnotab, co_linetable or the 3.11+ location table, by kind) is tab[0..len).
 * addr < 0 (a frame that has not started) gives firstlineno. Returns the line, or -1
 * when the table gives none or is malformed. */
int py_code__line(enum py_line_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		  int64_t addr);

/* Decodes the string object whose first len bytes are obj (a 3.x str, or a 2.7 str when
 * l->py2_str) into UTF-8 appended to out, at most PY_NAME_MAX bytes. type is the
 * expected ob_type (0: not checked). Returns 0, or -EINVAL when the bytes are not such a
 * string or it does not fit in obj. */
int py_code__string(const struct py_layout *l, const uint8_t *obj, size_t len, uint64_t type,
		    struct strbuf *out);

/* The size and the offset of the data of the bytes object (2.7: str) whose first len
 * bytes are obj. Returns 0, or -EINVAL. */
int py_code__bytes(const struct py_layout *l, const uint8_t *obj, size_t len, uint64_t type,
		   uint64_t *size, size_t *data_off);

#endif
