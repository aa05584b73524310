/* Where the Zend engine (PHP 7.4-8.4, x86-64 and other LP64 targets, NTS builds) keeps
 * what the PHP reader needs: executor_globals.current_execute_data, the zend_execute_data
 * chain, zend_function / zend_op_array, class entries, zend_string and zend_op. And the
 * pure decoding of what the reader copies out of a process: every length and offset is
 * checked against the buffer, because the bytes are another process's memory.
 *
 * The offsets of 8.2 were checked on Debian bookworm's php8.2 (8.2.36) by reading a live
 * process (tests/e2e/php_*.sh name the right functions, files and lines); the others come
 * from the gdb struct dumps of each release's debug build that phpspy publishes, which
 * agree field by field with the OpenTelemetry profiler's table (docs/agent.md). */
#ifndef KILN_RUNTIMES_PHP_LAYOUT_H
#define KILN_RUNTIMES_PHP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define PHP_NAME_MAX 256	/* longest name or file name kept, in bytes */

/* zend_function.type */
#define PHP_INTERNAL_FUNCTION 1
#define PHP_USER_FUNCTION 2
#define PHP_EVAL_CODE 4
/* zend_execute_data.This.u1.type_info: the frame was entered from native code (the
 * script's main frame, a callback of an internal function): it starts an execute_ex
 * activation. 7.4+. */
#define PHP_CALL_TOP (1u << 17)

#define PHP_ED_READ 56		/* bytes read of a zend_execute_data */
#define PHP_FN_READ 192		/* bytes read of a zend_function (fingerprint window) */
#define PHP_STR_READ 24		/* header bytes of a zend_string before its chars */

struct php_layout {
	int major, minor;
	uint16_t eg_current_execute_data;	/* in zend_executor_globals */
	uint16_t ed_opline, ed_func, ed_this_type_info, ed_prev;	/* zend_execute_data */
	uint16_t fn_type, fn_name, fn_scope;	/* zend_function.common */
	uint16_t op_filename, op_line_start;	/* zend_op_array; line_end follows line_start */
	uint16_t ce_name;			/* zend_class_entry.name */
	uint16_t str_len, str_val;		/* zend_string */
	uint16_t op_lineno;			/* zend_op.lineno */
};

/* Fills *out for PHP major.minor from the built-in table. Returns 0, or -ENOTSUP for a
 * version without one. */
int php_layout__for_version(int major, int minor, struct php_layout *out);

/* Parses the version in the bytes that follow "X-Powered-By: PHP/" ("8.2.36", at most
 * len bytes, not NUL-terminated) into *major, *minor and ver ("8.2.36", size vlen).
 * Returns 0, or -EINVAL when it is not a version. */
int php_layout__parse_version(const char *s, size_t len, int *major, int *minor, char *ver,
			      size_t vlen);

/* Decodes the zend_string whose first len bytes are buf (header and chars) into out, at
 * most PHP_NAME_MAX bytes; non-printable bytes become '?'. Returns 0, or -EINVAL when
 * the length is implausible (negative, above 1 MiB) or the buffer is shorter than the
 * header. A string longer than the buffer keeps what the buffer holds. */
int php_layout__string(const struct php_layout *l, const uint8_t *buf, size_t len,
		       struct strbuf *out);

/* The bytes of one zend_function that tell one function from another at the same address:
 * type, function_name, scope and for user code filename, line_start and line_end. */
struct php_fn_print {
	uint8_t type;
	uint64_t name, scope, file;
	uint32_t line_start, line_end;
};

/* Reads the fingerprint out of the first len bytes of a zend_function (fn). Returns 0, or
 * -EINVAL when fn is too short or its type is none of internal, user or eval code. */
int php_layout__fn_print(const struct php_layout *l, const uint8_t *fn, size_t len,
			 struct php_fn_print *out);

/* The line of a frame of a user function: the current opline's lineno when it lies in
 * [line_start, line_end] (an opline the VM has not saved yet points at an older frame's
 * op, or anywhere), else line_start. 0 when neither is known. */
uint32_t php_layout__line(const struct php_fn_print *f, bool have_lineno, uint32_t lineno);

static inline uint64_t php_rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	__builtin_memcpy(&v, p + off, sizeof(v));
	return v;
}

static inline uint32_t php_rd32(const uint8_t *p, size_t off)
{
	uint32_t v;
	__builtin_memcpy(&v, p + off, sizeof(v));
	return v;
}

#endif
