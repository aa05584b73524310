/* Go's function table and pc-value tables (see gofunc.h). The layouts, as the runtime of
 * each version defines them (runtime/symtab.go, runtime2.go):
 *
 *   header: magic u32, 0, 0, quantum u8, ptrsize u8, then pointer-sized fields:
 *     1.2:   nfunc, then the functab
 *     1.16:  nfunc, nfiles, funcnametab, cutab, filetab, pctab, pcln (= functab)
 *     1.18+: nfunc, nfiles, textStart, funcnametab, cutab, filetab, pctab, pcln
 *   functab: nfunc + 1 (entry, funcoff) pairs, pointers before 1.18, u32 since (entry
 *     relative to textStart); the last entry is the end of the last function.
 *   _func at funcoff (from the table's start in 1.2, from pcln since): entry (pointer, u32
 *     since 1.18), nameoff, args, deferreturn, pcsp, pcfile, pcln, npcdata, [cuOffset
 *     1.16+], [startLine 1.20+], funcID u8, flag u8 (1.17+), pad u8, nfuncdata u8, then
 *     u32 pcdata[npcdata] and funcdata[nfuncdata] (pointer-aligned pointers before 1.18,
 *     u32 since).
 *   pc-value table: (value delta zig-zag uvarint, pc delta uvarint * quantum) pairs from
 *     value -1 at the entry; a value delta of 0 ends the table, except the first. */
#include "symbols/gofunc.h"

#include <errno.h>
#include <string.h>

/* Reads n (1, 4 or 8) bytes at off; false when out of bounds. */
static bool rd(const struct gofunc_tab *t, uint64_t off, unsigned n, uint64_t *out)
{
	uint64_t v = 0;

	if (off > t->size || t->size - off < n)
		return false;
	for (unsigned i = 0; i < n; i++) {
		unsigned b = t->big_endian ? i : n - 1 - i;

		v = (v << 8) | t->data[off + b];
	}
	*out = v;
	return true;
}

static bool rd32(const struct gofunc_tab *t, uint64_t off, uint32_t *out)
{
	uint64_t v;

	if (!rd(t, off, 4, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

int gofunc_tab_init(struct gofunc_tab *t, const uint8_t *data, size_t size, uint64_t text_start)
{
	static const struct {
		uint32_t magic;
		unsigned version;
	} magics[] = { { 0xfffffffb, 113 }, { 0xfffffffa, 116 }, { 0xfffffff0, 118 },
		       { 0xfffffff1, 120 } };
	uint64_t hdr_text = 0, entsz, end;

	memset(t, 0, sizeof(*t));
	if (!data || size < 16 || data[4] || data[5] || data[6] < 1 || data[6] > 4 || data[7] != 8)
		return -EINVAL;
	uint32_t le = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
		      (uint32_t)data[3] << 24;
	uint32_t be = __builtin_bswap32(le);

	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (le == magics[i].magic || be == magics[i].magic) {
			t->version = magics[i].version;
			t->big_endian = le != magics[i].magic;
		}
	if (!t->version)
		return -EINVAL;
	t->data = data;
	t->size = size;
	t->quantum = data[6];
	if (!rd(t, 8, 8, &t->nfunc))
		goto bad;
	switch (t->version) {
	case 113:
		t->ftab = 16;
		break;
	case 116:
		if (!rd(t, 8 + 2 * 8, 8, &t->names) || !rd(t, 8 + 5 * 8, 8, &t->pctab) ||
		    !rd(t, 8 + 6 * 8, 8, &t->ftab))
			goto bad;
		break;
	default:
		if (!rd(t, 8 + 2 * 8, 8, &hdr_text) || !rd(t, 8 + 3 * 8, 8, &t->names) ||
		    !rd(t, 8 + 6 * 8, 8, &t->pctab) || !rd(t, 8 + 7 * 8, 8, &t->ftab))
			goto bad;
		t->text_start = hdr_text ? hdr_text : text_start;
		break;
	}
	entsz = t->version >= 118 ? 8 : 16;
	if (t->ftab >= size || t->names >= size || t->pctab >= size || t->nfunc == 0 ||
	    t->nfunc >= (size - t->ftab) / entsz)
		goto bad;
	if (!rd(t, t->ftab + t->nfunc * entsz, entsz / 2, &end))
		goto bad;
	t->end_pc = t->version >= 118 ? end + t->text_start : end;
	return 0;
bad:
	memset(t, 0, sizeof(*t));
	return -EINVAL;
}

/* Offsets in _func of the fields after entry, and the size of entry. */
static unsigned entry_size(const struct gofunc_tab *t)
{
	return t->version >= 118 ? 4 : 8;
}

static unsigned funcid_at(const struct gofunc_tab *t)
{
	/* entry, 7 u32 fields (nameoff .. npcdata), cuOffset (1.16+), startLine (1.20+) */
	return entry_size(t) + 28 + (t->version >= 116 ? 4 : 0) + (t->version >= 120 ? 4 : 0);
}

static bool functab(const struct gofunc_tab *t, uint64_t i, uint64_t *pc, uint64_t *funcoff)
{
	unsigned fs = t->version >= 118 ? 4 : 8;

	if (i > t->nfunc || !rd(t, t->ftab + i * 2 * fs, fs, pc) ||
	    (funcoff && !rd(t, t->ftab + i * 2 * fs + fs, fs, funcoff)))
		return false;
	if (t->version >= 118)
		*pc += t->text_start;
	return true;
}

int gofunc_tab__func(const struct gofunc_tab *t, uint64_t i, struct gofunc *f)
{
	uint64_t funcoff, v, base = t->version == 113 ? 0 : t->ftab;
	uint32_t nameoff;
	unsigned es = entry_size(t), fid = funcid_at(t);

	memset(f, 0, sizeof(*f));
	if (!t->data || i >= t->nfunc || !functab(t, i, &f->entry, &funcoff))
		return -EINVAL;
	if (i + 1 < t->nfunc) {
		if (!functab(t, i + 1, &f->end, NULL))
			return -EINVAL;
	} else {
		f->end = t->end_pc;
	}
	if (f->end < f->entry || funcoff > t->size - base)
		return -EINVAL;
	f->off = base + funcoff;
	if (!rd32(t, f->off + es, &nameoff) || !rd32(t, f->off + es + 12, &f->pcsp) ||
	    !rd32(t, f->off + es + 24, &f->npcdata) || !rd(t, f->off + fid, 1, &v))
		return -EINVAL;
	f->funcid = (uint8_t)v;
	if (t->version >= 116 && rd(t, f->off + fid + 1, 1, &v))
		f->flag = (uint8_t)v;
	if (!rd(t, f->off + fid + 3, 1, &v))
		return -EINVAL;
	f->nfuncdata = (uint8_t)v;
	f->name = "";
	if ((uint64_t)t->names + nameoff < t->size) {
		const char *s = (const char *)t->data + t->names + nameoff;

		if (memchr(s, '\0', t->size - t->names - nameoff))
			f->name = s;
	}
	return 0;
}

int64_t gofunc_tab__find(const struct gofunc_tab *t, uint64_t pc)
{
	uint64_t a = 0, b = t->nfunc, lo;

	if (!t->data || pc >= t->end_pc)
		return -1;
	while (a < b) {	/* first entry above pc */
		uint64_t mid = a + (b - a) / 2;

		if (!functab(t, mid, &lo, NULL))
			return -1;
		if (lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	return a == 0 ? -1 : (int64_t)(a - 1);
}

uint32_t gofunc_tab__pcdata(const struct gofunc_tab *t, const struct gofunc *f, uint32_t idx)
{
	uint32_t off;

	if (idx >= f->npcdata || !rd32(t, f->off + funcid_at(t) + 4 + 4ull * idx, &off))
		return 0;
	return off;
}

bool gofunc_tab__funcdata(const struct gofunc_tab *t, const struct gofunc *f, uint32_t idx,
			  uint64_t *out)
{
	uint64_t at = f->off + funcid_at(t) + 4 + 4ull * f->npcdata;

	if (idx >= f->nfuncdata)
		return false;
	if (t->version >= 118)
		return rd(t, at + 4ull * idx, 4, out);
	if (at & 4)	/* pointer-aligned (the table itself is) */
		at += 4;
	return rd(t, at + 8ull * idx, 8, out);
}

uint32_t gofunc_tab__inltree_funcdata(const struct gofunc_tab *t)
{
	return t->version >= 116 ? 3 : 4;
}

bool gopcvalue_init(struct gopcvalue *it, const struct gofunc_tab *t, const struct gofunc *f,
		    uint32_t off)
{
	uint64_t at = (t->version == 113 ? 0 : t->pctab) + off;

	memset(it, 0, sizeof(*it));
	if (!off || at >= t->size)
		return false;
	it->p = t->data + at;
	it->end = t->data + t->size;
	it->pc = f->entry;
	it->fn_end = f->end;
	it->val = -1;
	it->quantum = t->quantum;
	it->first = true;
	return true;
}

/* An unsigned LEB128 of at most 32 bits. */
static bool uvarint(struct gopcvalue *it, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (it->p >= it->end)
			return false;
		uint8_t b = *it->p++;

		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

bool gopcvalue_next(struct gopcvalue *it, uint64_t *lo, uint64_t *hi, int32_t *val)
{
	uint32_t uv, pcd;

	if (it->done || it->p >= it->end)
		return false;
	if (*it->p == 0 && !it->first) {
		it->done = true;
		return false;
	}
	if (!uvarint(it, &uv) || !uvarint(it, &pcd))
		goto bad;
	it->first = false;
	it->val += (int32_t)(-(uv & 1) ^ (uv >> 1));
	if (it->val < INT32_MIN || it->val > INT32_MAX)
		goto bad;
	uint64_t next = it->pc + (uint64_t)pcd * it->quantum;

	if (next > it->fn_end || next < it->pc)
		goto bad;
	*lo = it->pc;
	*hi = next;
	*val = (int32_t)it->val;
	it->pc = next;
	return true;
bad:
	it->done = true;
	return false;
}

int gofunc_tab__value(const struct gofunc_tab *t, const struct gofunc *f, uint32_t off,
		      uint64_t pc, int32_t *val)
{
	struct gopcvalue it;
	uint64_t lo, hi;
	int32_t v;

	if (!gopcvalue_init(&it, t, f, off))
		return -ENOENT;
	while (gopcvalue_next(&it, &lo, &hi, &v))
		if (pc >= lo && pc < hi) {
			*val = v;
			return 0;
		}
	return -ENOENT;
}
