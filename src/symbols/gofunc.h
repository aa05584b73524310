/* The Go runtime's function table, .gopclntab, read as the runtime reads it: functions by
 * pc, and their pc-value tables (pcsp, the stack-pointer delta at each pc, which unwinds
 * a Go frame exactly; pcdata such as the inline-tree index). Layouts of Go 1.13–1.15
 * (magic 0xfffffffb), 1.16–1.17 (0xfffffffa), 1.18–1.19 (0xfffffff0) and 1.20+
 * (0xfffffff1), either byte order, 8-byte pointers. A gofunc_tab is a view over bytes the
 * caller owns; every offset read from them is checked: a corrupt or truncated table gives
 * errors, never a read outside them. */
#ifndef KILN_SYMBOLS_GOFUNC_H
#define KILN_SYMBOLS_GOFUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* _func flags (Go 1.17+; internal/abi FuncFlag). */
#define GOFUNC_TOPFRAME 1	/* the outermost frame of its stack (goexit, mstart) */
#define GOFUNC_SPWRITE 2	/* writes SP: cannot be unwound by pcsp past the write */

/* PCDATA_InlTreeIndex, in every supported version; FUNCDATA_InlTree is 4 before Go 1.16
 * and 3 since (gofunc_tab__inltree_funcdata()). */
#define GOFUNC_PCDATA_INLTREE 2

struct gofunc_tab {
	const uint8_t *data;
	size_t size;
	unsigned version;	/* 113 (the 1.2 layout), 116, 118 or 120 */
	bool big_endian;
	unsigned quantum;	/* pc quantum: 1 on x86_64 */
	uint64_t nfunc;
	uint64_t text_start;	/* what 1.18+ entries are relative to */
	uint64_t names;		/* offset of funcnametab (the table's start before 1.16) */
	uint64_t pctab;		/* offset that pc-value offsets are relative to */
	uint64_t ftab;		/* offset of the functab */
	uint64_t end_pc;	/* end of the last function */
};

/* One function. */
struct gofunc {
	uint64_t entry, end;	/* [entry, end) in the binary's vaddrs */
	uint64_t off;		/* offset of its _func in the table */
	const char *name;	/* NUL-terminated, inside the table; "" when out of bounds */
	uint32_t pcsp;		/* offset of its pcsp table (0: none) */
	uint32_t npcdata;
	uint8_t funcid, flag, nfuncdata;
};

/* Reads the header of the pclntab at data (size bytes). text_start stands in for the
 * header's text start when that is 0 (Go 1.26 keeps it in moduledata only; the caller
 * gives moduledata's, or the .text section's address). Returns 0, or -EINVAL when data
 * is not a pclntab of a supported layout (4-byte pointers are not). */
int gofunc_tab_init(struct gofunc_tab *t, const uint8_t *data, size_t size, uint64_t text_start);

/* Reads function i (0 <= i < t->nfunc) into f. Returns 0, or -EINVAL when its entry is
 * out of bounds or out of order. */
int gofunc_tab__func(const struct gofunc_tab *t, uint64_t i, struct gofunc *f);

/* Finds the function whose range holds pc. Returns its index, or -1. */
int64_t gofunc_tab__find(const struct gofunc_tab *t, uint64_t pc);

/* The offset of f's pcdata table idx (0: none). */
uint32_t gofunc_tab__pcdata(const struct gofunc_tab *t, const struct gofunc *f, uint32_t idx);

/* The raw funcdata word idx of f: an absolute address before Go 1.18, an offset from
 * moduledata's gofunc since (UINT32_MAX: none). Returns false when f has no such slot. */
bool gofunc_tab__funcdata(const struct gofunc_tab *t, const struct gofunc *f, uint32_t idx,
			  uint64_t *out);

/* The funcdata index of the inline tree in t's Go version. */
uint32_t gofunc_tab__inltree_funcdata(const struct gofunc_tab *t);

/* Walks a pc-value table: each step yields a range [lo, hi) of f and its value. */
struct gopcvalue {
	const uint8_t *p, *end;
	uint64_t pc, fn_end;
	int64_t val;
	unsigned quantum;
	bool first, done;
};

/* Starts walking the table at offset off (from gofunc_tab__func or __pcdata) of f.
 * Returns false when off is 0 or out of bounds. */
bool gopcvalue_init(struct gopcvalue *it, const struct gofunc_tab *t, const struct gofunc *f,
		    uint32_t off);

/* The next range: true with [*lo, *hi) and *val, false at the table's end or where it is
 * malformed (a varint running out of bounds, a range past the function's end). */
bool gopcvalue_next(struct gopcvalue *it, uint64_t *lo, uint64_t *hi, int32_t *val);

/* The value of table off of f at pc. Returns 0, or -ENOENT when no range holds pc. */
int gofunc_tab__value(const struct gofunc_tab *t, const struct gofunc *f, uint32_t off,
		      uint64_t pc, int32_t *val);

#endif
