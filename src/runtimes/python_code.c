/* Line tables and strings of CPython code objects (see python_code.h). */
#include "runtimes/python_code.h"

#include <errno.h>
#include <string.h>

/* (addr_delta, line_delta) pairs, byte offsets: 2.7 (unsigned) and 3.6-3.9 (signed). */
static int line_lnotab(const uint8_t *tab, size_t len, int line, int64_t addr, int is_signed)
{
	int64_t a = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		a += tab[i];
		if (a > addr)
			break;
		line += is_signed ? (int8_t)tab[i + 1] : tab[i + 1];
	}
	return line;
}

/* 3.10: (start_delta, line_delta) pairs; each pair is the range [start, start + delta). */
static int line_310(const uint8_t *tab, size_t len, int line, int64_t addr)
{
	int64_t start = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t ldelta = (int8_t)tab[i + 1];
		int64_t end = start + tab[i];
		if (ldelta != -128)
			line += ldelta;
		if (addr >= start && addr < end)
			return ldelta == -128 ? -1 : line;
		start = end;
	}
	return -1;
}

/* Reads a 6-bit-chunk varint of the 3.11 location table. Returns -1 at the end. */
static int64_t varint(const uint8_t *tab, size_t len, size_t *pos)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		if (*pos >= len || shift > 30)
			return -1;
		uint8_t b = tab[(*pos)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			return (int64_t)v;
	}
}

static int64_t svarint(const uint8_t *tab, size_t len, size_t *pos, int *ok)
{
	int64_t v = varint(tab, len, pos);
	if (v < 0) {
		*ok = 0;
		return 0;
	}
	return (v & 1) ? -(v >> 1) : (v >> 1);
}

/* 3.11+ location table; unit is the code unit (2-byte) index. */
static int line_311(const uint8_t *tab, size_t len, int64_t line, int64_t unit)
{
	int64_t at = 0;
	size_t pos = 0;
	while (pos < len) {
		uint8_t b = tab[pos++];
		if (!(b & 0x80))
			return -1;
		int code = (b >> 3) & 15, length = (b & 7) + 1, ok = 1;
		if (code == 14) {
			line += svarint(tab, len, &pos, &ok);
			for (int k = 0; k < 3 && ok; k++)
				ok = varint(tab, len, &pos) >= 0;
		} else if (code == 13) {
			line += svarint(tab, len, &pos, &ok);
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
			pos += 2;
		} else if (code < 10) {
			pos += 1;
		}
		if (!ok || pos > len)
			return -1;
		if (unit < at + length)
			return code == 15 || line <= 0 || line > INT32_MAX ? -1 : (int)line;
		at += length;
	}
	return -1;
}

int py_code__line(enum py_line_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		  int64_t addr)
{
	if (addr < 0)
		return firstlineno;
	switch (kind) {
	case PY_LINES_LNOTAB27:
		return line_lnotab(tab, len, firstlineno, addr, 0);
	case PY_LINES_LNOTAB36:
		return line_lnotab(tab, len, firstlineno, addr, 1);
	case PY_LINES_LINETABLE310:
		return line_310(tab, len, firstlineno, addr);
	case PY_LINES_LOCATIONS311:
		return line_311(tab, len, firstlineno, addr / 2);
	}
	return -1;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Appends code point c as UTF-8; control characters become '?'. */
static void add_utf8(struct strbuf *out, uint32_t c)
{
	if (c < 0x20 || c == 0x7f || c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) {
		strbuf_addch(out, '?');
	} else if (c < 0x80) {
		strbuf_addch(out, (char)c);
	} else if (c < 0x800) {
		strbuf_addch(out, (char)(0xc0 | c >> 6));
		strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		strbuf_addch(out, (char)(0xe0 | c >> 12));
		strbuf_addch(out, (char)(0x80 | (c >> 6 & 0x3f)));
		strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
	} else {
		strbuf_addch(out, (char)(0xf0 | c >> 18));
		strbuf_addch(out, (char)(0x80 | (c >> 12 & 0x3f)));
		strbuf_addch(out, (char)(0x80 | (c >> 6 & 0x3f)));
		strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
	}
}

int py_code__bytes(const struct py_layout *l, const uint8_t *obj, size_t len, uint64_t type,
		   uint64_t *size, size_t *data_off)
{
	if (len < (size_t)l->str_data || len < (size_t)l->str_size + 8)
		return -EINVAL;
	if (type && rd64(obj + 8) != type)
		return -EINVAL;
	int64_t n = (int64_t)rd64(obj + l->str_size);
	if (n < 0 || n > (1 << 24))
		return -EINVAL;
	*size = (uint64_t)n;
	*data_off = l->str_data;
	return 0;
}

int py_code__string(const struct py_layout *l, const uint8_t *obj, size_t len, uint64_t type,
		    struct strbuf *out)
{
	size_t start = out->len;
	if (l->py2_str) {
		uint64_t n;
		size_t off;
		if (py_code__bytes(l, obj, len, type, &n, &off) < 0 || n > len - off)
			return -EINVAL;
		for (uint64_t i = 0; i < n && out->len - start < PY_NAME_MAX; i++)
			add_utf8(out, obj[off + i] < 0x80 ? obj[off + i] : '?');
		return 0;
	}
	if (len < 40 || (type && rd64(obj + 8) != type))
		return -EINVAL;
	int64_t n = (int64_t)rd64(obj + 16);
	uint32_t state;
	memcpy(&state, obj + 32, sizeof(state));
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (n < 0 || !compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -EINVAL;
	size_t off = ascii ? l->uni_ascii_size : l->uni_compact_size;
	if (off > len)
		return -EINVAL;
	if ((uint64_t)n > (len - off) / kind)	/* longer than what was read: keep the start */
		n = (int64_t)((len - off) / kind);
	for (int64_t i = 0; i < n && out->len - start < PY_NAME_MAX; i++) {
		const uint8_t *p = obj + off + (size_t)i * kind;
		uint32_t c = kind == 1 ? p[0] : kind == 2 ? (uint32_t)(p[0] | p[1] << 8)
			   : (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		add_utf8(out, c);
	}
	return 0;
}
