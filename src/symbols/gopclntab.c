#include "symbols/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

enum go_version { GO_12, GO_116, GO_118 };

struct reader {
	const uint8_t *data;
	size_t size;
	bool big_endian;
	unsigned ptrsize;
};

/* Reads n (4 or 8) bytes at off; false when out of bounds. */
static bool rd(const struct reader *r, uint64_t off, unsigned n, uint64_t *out)
{
	uint64_t v = 0;
	unsigned i;

	if (off > r->size || r->size - off < n)
		return false;
	for (i = 0; i < n; i++) {
		unsigned b = r->big_endian ? i : n - 1 - i;

		v = (v << 8) | r->data[off + b];
	}
	*out = v;
	return true;
}

static bool rd_ptr(const struct reader *r, uint64_t off, uint64_t *out)
{
	return rd(r, off, r->ptrsize, out);
}

/* Recognizes a header at data; fills r and the version. */
static bool parse_magic(const uint8_t *data, size_t size, struct reader *r, enum go_version *v)
{
	static const struct {
		uint32_t magic;
		enum go_version v;
	} magics[] = { { 0xfffffffb, GO_12 }, { 0xfffffffa, GO_116 },
		       { 0xfffffff0, GO_118 }, { 0xfffffff1, GO_118 } };
	uint32_t le, be;
	size_t i;

	if (size < 16 || data[4] || data[5] ||
	    (data[6] != 1 && data[6] != 2 && data[6] != 4) || (data[7] != 4 && data[7] != 8))
		return false;
	le = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
	     (uint32_t)data[3] << 24;
	be = (uint32_t)data[3] | (uint32_t)data[2] << 8 | (uint32_t)data[1] << 16 |
	     (uint32_t)data[0] << 24;
	for (i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		if (le == magics[i].magic || be == magics[i].magic) {
			r->data = data;
			r->size = size;
			r->big_endian = be == magics[i].magic;
			r->ptrsize = data[7];
			*v = magics[i].v;
			return true;
		}
	}
	return false;
}

/* A NUL-terminated name at off, within bounds. */
static const char *name_at(const struct reader *r, uint64_t off, size_t *len)
{
	const char *s, *end;

	if (off >= r->size)
		return NULL;
	s = (const char *)r->data + off;
	end = memchr(s, '\0', r->size - off);
	if (!end || end == s)
		return NULL;
	*len = (size_t)(end - s);
	return s;
}

int gopclntab__load(const uint8_t *data, size_t size, uint64_t text_start, struct symtab *t)
{
	struct reader r;
	enum go_version v;
	uint64_t nfunc, ftab, names = 0, hdr_text = 0, i, entsz, fieldsz, end_entry;
	unsigned ps;
	size_t added = 0, first = t->nr;

	if (!data || !parse_magic(data, size, &r, &v))
		return -EINVAL;
	ps = r.ptrsize;
	if (!rd_ptr(&r, 8, &nfunc))
		return -EINVAL;
	switch (v) {
	case GO_12:
		ftab = 8 + ps;
		break;
	case GO_116:
		if (!rd_ptr(&r, 8 + 2 * ps, &names) || !rd_ptr(&r, 8 + 6 * ps, &ftab))
			return -EINVAL;
		break;
	default:
		if (!rd_ptr(&r, 8 + 2 * ps, &hdr_text) || !rd_ptr(&r, 8 + 3 * ps, &names) ||
		    !rd_ptr(&r, 8 + 7 * ps, &ftab))
			return -EINVAL;
		if (hdr_text)
			text_start = hdr_text;
		break;
	}
	/* Functab entries: (pc, funcoff) as pointers before 1.18, as uint32 offsets since. */
	fieldsz = v == GO_118 ? 4 : ps;
	entsz = 2 * fieldsz;
	if (ftab >= size || nfunc == 0 || nfunc > (size - ftab) / entsz)
		return -EINVAL;
	if (!rd(&r, ftab + nfunc * entsz, fieldsz, &end_entry))
		return -EINVAL;
	if (v == GO_118)
		end_entry += text_start;
	for (i = 0; i < nfunc; i++) {
		uint64_t pc, next, funcoff, fbase, nameoff32, nameoff;
		const char *name;
		size_t len;

		if (!rd(&r, ftab + i * entsz, fieldsz, &pc) ||
		    !rd(&r, ftab + i * entsz + fieldsz, fieldsz, &funcoff) ||
		    !rd(&r, ftab + (i + 1) * entsz, fieldsz, &next))
			goto bad;
		if (v == GO_118) {
			pc += text_start;
			next = i + 1 < nfunc ? next + text_start : end_entry;
		} else if (i + 1 == nfunc) {
			next = end_entry;
		}
		/* _func: entry (pointer, or uint32 offset since 1.18), then int32 nameoff */
		fbase = v == GO_12 ? 0 : ftab;
		if (funcoff > size - fbase ||
		    !rd(&r, fbase + funcoff + fieldsz, 4, &nameoff32))
			goto bad;
		nameoff = (uint64_t)(int64_t)(int32_t)nameoff32;
		if ((int32_t)nameoff32 < 0)
			goto bad;
		name = name_at(&r, names + nameoff, &len);
		if (!name || next < pc)
			goto bad;
		symtab__add(t, pc, next - pc, name, len);
		added++;
	}
	return added > 0x7fffffff ? 0x7fffffff : (int)added;
bad:
	symtab__rollback(t, first);	/* a malformed table names nothing */
	return -EINVAL;
}

ssize_t gopclntab__scan(const uint8_t *buf, size_t size)
{
	size_t off;

	if (size < 16)
		return -1;
	/* the header is pointer-aligned, so stepping by 4 finds it */
	for (off = 0; off + 16 <= size; off += 4) {
		const uint8_t *p = buf + off;
		struct reader r;
		enum go_version v;
		uint64_t nfunc;

		if (!((p[0] == 0xff && p[1] == 0xff && p[2] == 0xff) ||
		      (p[1] == 0xff && p[2] == 0xff && p[3] == 0xff)))
			continue;
		if (!parse_magic(p, size - off, &r, &v) || !rd_ptr(&r, 8, &nfunc))
			continue;
		if (nfunc > 0 && nfunc < (size - off) / 8)
			return (ssize_t)off;
	}
	return -1;
}
