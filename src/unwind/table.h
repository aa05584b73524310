/* A binary's call-frame information as a compact table of rows ("stack deltas"): for each
 * pc range, how to find the canonical frame address (CFA) and the caller's rbp. When a
 * binary is first met only its FDEs' pc ranges are listed (sorted); the rows of an FDE are
 * compiled with libdw the first time a pc in it is looked up, and kept. Lookups are two
 * binary searches: the FDE, then the row within it. Internal to src/unwind/. */
#ifndef KILN_UNWIND_TABLE_H
#define KILN_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <libelf.h>

struct hashmap;

/* How the CFA is found at a pc. The return address is always at CFA-8 on x86_64. */
enum cfa_rule {
	CFA_RSP,	/* rsp + off */
	CFA_RBP,	/* rbp + off */
	CFA_PLT,	/* the PLT's expression: rsp + off + ((rip & 15) >= aux ? 8 : 0) */
	CFA_NONE,	/* no CFI covers this pc */
	CFA_BAD,	/* CFI exists but uses a rule we do not support (signal frames, ...) */
	CFA_END,	/* the return address is undefined: outermost frame (_start, clone) */
	CFA_SIGNAL,	/* a signal frame (__restore_rt): rsp points at the kernel's ucontext;
			 * the interrupted rsp is at rsp+off, its rip at rsp+off+8, its rbp at
			 * rsp+aux, and its pc is exact (no call before it) */
	CFA_GO_SWITCH,	/* Go's runtime.asmcgocall, which calls C on the g0 stack: its caller is
			 * found by the frame pointer, which points into the goroutine's stack,
			 * outside the sample's copy (the unwinder reads it from the process) */
};

/* Where the caller's rbp is. */
enum rbp_rule {
	RBP_SAME,	/* unchanged by this frame */
	RBP_AT_CFA,	/* saved at CFA + aux */
	RBP_LOST,	/* not recoverable */
	RBP_GO,		/* a Go frame's: saved at CFA - 16 when rbp == CFA - 16 (the frame has
			 * set it up), else unchanged (frameless, prologue, epilogue) */
};

/* How to step out of a frame: shared by every row with the same rule (a binary has a few
 * hundred distinct ones for tens of thousands of rows). */
struct unwind_rule {
	int32_t off;
	int16_t aux;
	uint8_t cfa;		/* enum cfa_rule */
	uint8_t rbp;		/* enum rbp_rule */
};

/* An executable PT_LOAD segment, to turn a file offset into a vaddr. */
struct unwind_load {
	uint64_t offset, vaddr, filesz;
};

/* Where an FDE's rows come from, by precedence: .eh_frame, the binary's .debug_frame
 * (FDEs that no .eh_frame FDE overlaps), the separate debug file's .debug_frame (the
 * same), and the rows kiln adds for the PLT stubs that have no FDE. SRC_GO: a Go
 * function's rows from .gopclntab (unwind/gotab.h), compiled when the table is listed;
 * they take precedence over any CFI FDE that overlaps them. */
enum unwind_src { SRC_EH, SRC_DF, SRC_DBG, SRC_PLT, SRC_GO };

/* One FDE: 16 bytes whether compiled or not. */
struct unwind_fde {
	uint32_t lo, hi;	/* [lo, hi), relative to the table's base */
	uint32_t first;		/* its first row in pcs and rule_of, once compiled */
	unsigned int nrows : 28, src : 3, compiled : 1;
};

/* A CFI section the FDEs were listed from, to recognise the same binary when read again. */
struct unwind_section {
	uint64_t addr, offset, size;
};

struct unwind_table {
	uint64_t base;			/* vaddr that pcs are relative to */
	struct unwind_fde *fdes;	/* sorted by lo */
	size_t nfde, compiled;		/* FDEs, and those compiled */
	/* row i covers [pcs[i], next row of its FDE or the FDE's end) with
	 * rules[rule_of[i]]: 6 bytes a row */
	uint32_t *pcs;
	uint16_t *rule_of;
	size_t nrows, rows_alloc;
	struct unwind_rule *rules;	/* deduplicated */
	size_t nrules;
	struct hashmap *rule_ids;	/* rule -> index in rules */
	struct unwind_load loads[8];
	int nloads;
	struct unwind_section secs[3];	/* .eh_frame, .debug_frame, the debug file's */
	bool has_cfi;		/* some CFI section was found */
	bool fp_built;		/* the code keeps frame pointers (Go, -fno-omit-frame-pointer) */
	bool go;		/* Go functions have SRC_GO rows (from .gopclntab) */
	bool eh_by_table;	/* .eh_frame's FDEs were listed by .eh_frame_hdr's table */
	size_t nfdes, fp_fdes;	/* FDEs sampled to decide fp_built, and those with an rbp frame */
};

/* What to read: the binary and, optionally, its separate debug file. */
struct unwind_sources {
	Elf *elf;		/* the binary: .eh_frame, .debug_frame, program headers */
	Elf *debug;		/* separate debug file for .debug_frame, or NULL */
	bool rows_if_fp;	/* unused: fp_built binaries are listed too, for their leaves */
	/* the binary's frame-pointer verdict when already known (UNWIND_FP_*): not decided
	 * again from its FDEs */
	uint8_t fp_known;
};

enum { UNWIND_FP_UNKNOWN, UNWIND_FP_NO, UNWIND_FP_YES };

/* The open CFI sections of a binary: needed only to compile FDEs not compiled yet. They
 * read the Elf handles of the sources they were opened from. */
struct unwind_cfi {
	Dwarf_CFI *eh, *df, *dbg;
	Dwarf *df_dw, *dbg_dw;
};

/* Lists the FDEs of the binary in src, decides fp_built from an even sample of them
 * (compiling about 256; src->fp_known skips that), compiles the rows of its Go functions (a Go binary), and opens
 * cfi for the FDEs to be compiled later (closed when none are left). Returns 0, or
 * a negative errno when src->elf is not a usable x86_64 ELF (then t is empty and cfi
 * closed). A binary without CFI gives 0 with has_cfi false and no FDEs. Release t with
 * unwind_table_release(), cfi with unwind_cfi_close(), in any order. */
int unwind_table_init(struct unwind_table *t, const struct unwind_sources *src,
		      struct unwind_cfi *cfi);
void unwind_table_release(struct unwind_table *t);

/* Opens cfi again from src, a fresh read of the binary t was listed from, to compile more
 * of its FDEs. Returns 0, or -ESTALE when src does not match t (program headers or CFI
 * sections moved or resized, a debug file missing): then cfi is closed. */
int unwind_cfi_open(struct unwind_cfi *cfi, const struct unwind_table *t,
		    const struct unwind_sources *src);
void unwind_cfi_close(struct unwind_cfi *cfi);	/* accepts a closed one */

/* Heap bytes libdw and libelf hold for cfi (caches of parsed FDEs, decompressed
 * .debug_frame), about; 0 when closed. */
size_t unwind_cfi_bytes(const struct unwind_cfi *cfi, const struct unwind_table *t);

/* Bytes of memory the table holds: FDEs, rows, rules. */
size_t unwind_table_bytes(const struct unwind_table *t);

/* Turns a file offset into a vaddr. Returns false when no executable segment holds it. */
bool unwind_table_vaddr(const struct unwind_table *t, uint64_t file_off, uint64_t *vaddr);

/* Returns the rule of the row that covers vaddr, or NULL when no CFI covers it. The FDE
 * that covers vaddr is compiled from cfi the first time (an FDE libdw cannot read gives
 * no rows: NULL). With cfi NULL an FDE not compiled yet is not compiled: NULL is returned
 * and *need_cfi (when not NULL) set true. The pointer is valid until the next call. */
const struct unwind_rule *unwind_table_find(struct unwind_table *t, uint64_t vaddr,
					    const struct unwind_cfi *cfi, bool *need_cfi);

/* Where lazily read CFI (unwind_elf_open_lazy()) must be read before vaddr is looked up:
 * returns 1 with *off the .eh_frame offset of the FDE not compiled yet that covers vaddr,
 * 0 when nothing is to be read (no such FDE, compiled, from another source), -1 when
 * .eh_frame_hdr of elf does not name it. */
int unwind_table_eh_entry(const struct unwind_table *t, Elf *elf, uint64_t vaddr, uint64_t *off);

/* True when elf has a section called name with contents. */
bool unwind_elf_has_section(Elf *elf, const char *name);

#endif
