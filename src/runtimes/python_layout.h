/* Where CPython keeps what the Python reader needs, per interpreter version (x86_64 and
 * other LP64 targets): the runtime's interpreter list, thread states, frames, code
 * objects and strings. 2.7 and 3.6-3.12 come from tables checked against each release's
 * headers (and its debug info); 3.13 reads the _Py_DebugOffsets the interpreter publishes
 * at the start of _PyRuntime. */
#ifndef KILN_RUNTIMES_PYTHON_LAYOUT_H
#define KILN_RUNTIMES_PYTHON_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define PY_NO_FIELD 0xffffu

enum py_frame_kind {
	PY_FRAME_OBJECT,	/* <= 3.10: a PyFrameObject per _PyEval_EvalFrameDefault call */
	PY_FRAME_311,		/* _PyInterpreterFrame with is_entry */
	PY_FRAME_312,		/* _PyInterpreterFrame, activations split by C-stack shim frames */
};

enum py_line_kind {
	PY_LINES_LNOTAB27,	/* (addr, line) unsigned byte pairs, byte offsets */
	PY_LINES_LNOTAB36,	/* same with signed line deltas (3.6-3.9) */
	PY_LINES_LINETABLE310,	/* (sdelta, ldelta) pairs, -128 = no line (3.10) */
	PY_LINES_LOCATIONS311,	/* the 3.11+ location table, code units */
};

struct py_layout {
	int major, minor;
	enum py_frame_kind frame_kind;
	enum py_line_kind line_kind;
	uint16_t rt_interp_head;	/* in _PyRuntime (3.7+) */
	uint16_t is_next, is_tstate_head;	/* PyInterpreterState */
	uint16_t ts_next, ts_interp, ts_frame;	/* PyThreadState; ts_frame: frame, cframe or current_frame */
	uint16_t ts_thread_id, ts_native_tid;	/* native_tid: PY_NO_FIELD before 3.11 */
	uint16_t ts_read;		/* bytes to read of a PyThreadState */
	uint16_t cframe_current;	/* _PyCFrame.current_frame (3.11, 3.12), else PY_NO_FIELD */
	uint16_t fr_back, fr_code, fr_instr;	/* f_back/previous, f_code/executable, f_lasti/prev_instr */
	uint16_t fr_is_entry, fr_owner;	/* 3.11 is_entry, 3.11+ owner; else PY_NO_FIELD */
	uint16_t fr_read;		/* bytes to read of a frame */
	uint16_t co_firstlineno, co_name, co_qualname, co_filename, co_lines, co_code;
	uint16_t co_read;		/* bytes to read of a code object (fingerprint window) */
	uint16_t str_data, str_size;	/* bytes/str objects: ob_sval, ob_size */
	uint16_t uni_ascii_size, uni_compact_size;	/* sizeof PyASCIIObject, PyCompactUnicodeObject */
	uint8_t lasti_units;		/* bytes per f_lasti unit (2 on 3.10), 0 for instruction pointers */
	uint8_t py2_str;		/* names are 2.7 str objects */
};

#define PY_OWNED_BY_CSTACK 3	/* _PyInterpreterFrame.owner of 3.12+ entry shims */
#define PY_DEBUG_COOKIE "xdebugpy"
#define PY_DEBUG_OFFSETS_3_13_SIZE 536	/* bytes of _Py_DebugOffsets up to bytes_object.ob_sval */

/* Fills *out for CPython major.minor from the built-in tables. Returns 0, or -ENOTSUP
 * for a version without one (3.13+ needs py_layout__from_debug_offsets). */
int py_layout__for_version(int major, int minor, struct py_layout *out);

/* Fills *out from the _Py_DebugOffsets bytes at the start of _PyRuntime (buf, len bytes;
 * at least PY_DEBUG_OFFSETS_3_13_SIZE). Checks the cookie, the version (3.13 layout) and
 * that every offset is plausible. Returns 0, -EINVAL (not debug offsets, or implausible),
 * or -ENOTSUP (a version whose _Py_DebugOffsets layout is unknown); *hexversion is set
 * whenever the cookie matched. */
int py_layout__from_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *out,
				  uint64_t *hexversion);

#endif
