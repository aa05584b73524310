/* Per-version CPython layouts (see python_layout.h). The offsets are those of LP64
 * release builds; each was checked against the release's own debug info
 * (gdb: print &((PyThreadState *)0)->frame, ...). */
#include "runtimes/python_layout.h"

#include <errno.h>
#include <string.h>

/* Fields common to every version: the object header and bytes objects. */
static void common(struct py_layout *l, int major, int minor)
{
	memset(l, 0, sizeof(*l));
	l->major = major;
	l->minor = minor;
	l->ts_native_tid = PY_NO_FIELD;
	l->cframe_current = PY_NO_FIELD;
	l->fr_is_entry = PY_NO_FIELD;
	l->fr_owner = PY_NO_FIELD;
	l->co_qualname = PY_NO_FIELD;
	l->co_code = PY_NO_FIELD;
	l->str_size = 16;
	l->str_data = 32;
	l->uni_ascii_size = 48;
	l->uni_compact_size = 72;
}

/* <= 3.10: PyFrameObject chains; thread ids are pthread_t values. */
static void frame_objects(struct py_layout *l, uint16_t lasti, uint16_t first, uint16_t name,
			  uint16_t file, uint16_t lines)
{
	l->frame_kind = PY_FRAME_OBJECT;
	l->is_next = 0;
	l->is_tstate_head = 8;
	l->ts_next = 8;
	l->ts_interp = 16;
	l->ts_frame = 24;
	l->ts_thread_id = 176;
	l->ts_read = 184;
	l->fr_back = 24;
	l->fr_code = 32;
	l->fr_instr = lasti;
	l->fr_read = (uint16_t)((lasti + 4 + 7) & ~7);
	l->co_firstlineno = first;
	l->co_name = name;
	l->co_filename = file;
	l->co_lines = lines;
	l->co_read = (uint16_t)(lines + 8);
	l->lasti_units = 1;
}

int py_layout__for_version(int major, int minor, struct py_layout *l)
{
	common(l, major, minor);
	if (major == 2 && minor == 7) {
		frame_objects(l, 120, 96, 88, 80, 104);
		l->line_kind = PY_LINES_LNOTAB27;
		l->ts_next = 0;
		l->ts_interp = 8;
		l->ts_frame = 16;
		l->ts_thread_id = 144;
		l->ts_read = 152;
		l->str_data = 36;
		l->py2_str = 1;
		return 0;
	}
	if (major != 3)
		return -ENOTSUP;
	switch (minor) {
	case 6:
		frame_objects(l, 120, 36, 104, 96, 112);
		l->line_kind = PY_LINES_LNOTAB36;
		l->ts_thread_id = 152;
		l->ts_read = 160;
		return 0;
	case 7:
		frame_objects(l, 104, 36, 104, 96, 112);
		l->line_kind = PY_LINES_LNOTAB36;
		l->rt_interp_head = 24;
		return 0;
	case 8:
	case 9:
	case 10:
		frame_objects(l, minor == 10 ? 96 : 104, 40, 112, 104, 120);
		l->line_kind = minor == 10 ? PY_LINES_LINETABLE310 : PY_LINES_LNOTAB36;
		l->lasti_units = minor == 10 ? 2 : 1;
		l->rt_interp_head = 32;
		return 0;
	case 11:
	case 12:
		l->line_kind = PY_LINES_LOCATIONS311;
		l->rt_interp_head = 40;
		l->is_next = 0;
		l->is_tstate_head = minor == 11 ? 16 : 72;
		l->ts_next = 8;
		l->ts_interp = 16;
		l->ts_frame = 56;	/* cframe */
		l->ts_thread_id = minor == 11 ? 152 : 136;
		l->ts_native_tid = minor == 11 ? 160 : 144;
		l->ts_read = 168;
		l->co_firstlineno = minor == 11 ? 72 : 68;
		l->co_filename = 112;
		l->co_name = 120;
		l->co_qualname = 128;
		l->co_lines = 136;
		l->co_code = minor == 11 ? 184 : 192;
		l->co_read = 144;
		l->fr_read = 72;
		if (minor == 11) {
			l->frame_kind = PY_FRAME_311;
			l->cframe_current = 8;
			l->fr_code = 32;
			l->fr_back = 48;
			l->fr_instr = 56;
			l->fr_is_entry = 68;
			l->fr_owner = 69;
		} else {
			l->frame_kind = PY_FRAME_312;
			l->cframe_current = 0;
			l->fr_code = 0;
			l->fr_back = 8;
			l->fr_instr = 56;
			l->fr_owner = 70;
			l->uni_ascii_size = 40;
			l->uni_compact_size = 56;
		}
		return 0;
	default:
		return -ENOTSUP;
	}
}

static uint64_t rd64(const uint8_t *buf, size_t off)
{
	uint64_t v;
	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Stores a published offset after checking it is a plausible struct offset. */
static int put(uint16_t *dst, uint64_t v, uint64_t limit)
{
	if (v >= limit)
		return -EINVAL;
	*dst = (uint16_t)v;
	return 0;
}

int py_layout__from_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *l,
				  uint64_t *hexversion)
{
	if (len < PY_DEBUG_OFFSETS_3_13_SIZE || memcmp(buf, PY_DEBUG_COOKIE, 8) != 0)
		return -EINVAL;
	uint64_t hex = rd64(buf, 8);
	*hexversion = hex;
	int major = (int)(hex >> 24 & 0xff), minor = (int)(hex >> 16 & 0xff);
	if (major != 3 || minor != 13)
		return -ENOTSUP;
	if (rd64(buf, 16) != 0)	/* free-threaded builds keep thread states elsewhere */
		return -ENOTSUP;
	common(l, major, minor);
	l->frame_kind = PY_FRAME_312;
	l->line_kind = PY_LINES_LOCATIONS311;
	l->uni_ascii_size = 40;
	l->uni_compact_size = 56;
	int err = 0;
	/* runtime_state at 24, interpreter_state at 48, thread_state at 152,
	 * interpreter_frame at 224, code_object at 272, bytes_object at 512. */
	err |= put(&l->rt_interp_head, rd64(buf, 40), 0x10000);
	err |= put(&l->is_next, rd64(buf, 64), 0x10000);
	err |= put(&l->is_tstate_head, rd64(buf, 72), 0x10000);
	err |= put(&l->ts_next, rd64(buf, 168), 0x1000);
	err |= put(&l->ts_interp, rd64(buf, 176), 0x1000);
	err |= put(&l->ts_frame, rd64(buf, 184), 0x1000);
	err |= put(&l->ts_thread_id, rd64(buf, 192), 0x1000);
	err |= put(&l->ts_native_tid, rd64(buf, 200), 0x1000);
	err |= put(&l->fr_back, rd64(buf, 232), 0x100);
	err |= put(&l->fr_code, rd64(buf, 240), 0x100);
	err |= put(&l->fr_instr, rd64(buf, 248), 0x100);
	err |= put(&l->fr_owner, rd64(buf, 264), 0x100);
	err |= put(&l->co_filename, rd64(buf, 280), 0x400);
	err |= put(&l->co_name, rd64(buf, 288), 0x400);
	err |= put(&l->co_qualname, rd64(buf, 296), 0x400);
	err |= put(&l->co_lines, rd64(buf, 304), 0x400);
	err |= put(&l->co_firstlineno, rd64(buf, 312), 0x400);
	err |= put(&l->co_code, rd64(buf, 344), 0x400);
	err |= put(&l->str_size, rd64(buf, 520), 0x100);
	err |= put(&l->str_data, rd64(buf, 528), 0x100);
	if (err)
		return -EINVAL;
	uint16_t ts_max = l->ts_next;
	const uint16_t ts_fields[] = { l->ts_interp, l->ts_frame, l->ts_thread_id, l->ts_native_tid };
	for (size_t i = 0; i < 4; i++)
		ts_max = ts_fields[i] > ts_max ? ts_fields[i] : ts_max;
	l->ts_read = (uint16_t)(ts_max + 8);
	uint16_t fr_max = l->fr_back;
	const uint16_t fr_fields[] = { l->fr_code, l->fr_instr, l->fr_owner };
	for (size_t i = 0; i < 3; i++)
		fr_max = fr_fields[i] > fr_max ? fr_fields[i] : fr_max;
	l->fr_read = (uint16_t)((fr_max + 8) & ~7);
	uint16_t co_max = l->co_firstlineno;
	const uint16_t co_fields[] = { l->co_filename, l->co_name, l->co_qualname, l->co_lines };
	for (size_t i = 0; i < 4; i++)
		co_max = co_fields[i] > co_max ? co_fields[i] : co_max;
	l->co_read = (uint16_t)(co_max + 8);
	l->lasti_units = 0;
	return 0;
}
