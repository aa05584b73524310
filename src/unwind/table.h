/* A binary's call-frame information compiled into a compact sorted table of rows
 * ("stack deltas"): for each pc range, how to find the canonical frame address (CFA) and
 * the caller's rbp. Built once per binary from .eh_frame and .debug_frame with libdw, then
 * looked up by binary search for each frame of each sample. Internal to src/unwind/. */
#ifndef KILN_UNWIND_TABLE_H
#define KILN_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

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
};

/* Where the caller's rbp is. */
enum rbp_rule {
	RBP_SAME,	/* unchanged by this frame */
	RBP_AT_CFA,	/* saved at CFA + aux */
	RBP_LOST,	/* not recoverable */
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

struct unwind_table {
	uint64_t base;			/* vaddr that row pcs are relative to */
	/* row i covers [pcs[i], pcs[i+1]) (pcs relative to base) with rules[rule_of[i]]:
	 * 6 bytes a row */
	uint32_t *pcs;
	uint16_t *rule_of;
	size_t nrows;
	struct unwind_rule *rules;
	size_t nrules;
	struct unwind_load loads[8];
	int nloads;
	bool has_cfi;		/* some CFI section was found */
	bool fp_built;		/* the code keeps frame pointers (Go, -fno-omit-frame-pointer) */
	size_t nfdes, fp_fdes;	/* FDEs seen, and those that set up an rbp frame */
};

/* What to compile: the binary and, optionally, its separate debug file. */
struct unwind_sources {
	Elf *elf;		/* the binary: .eh_frame, .debug_frame, program headers */
	Elf *debug;		/* separate debug file for .debug_frame, or NULL */
	bool rows_if_fp;	/* false: skip the rows when the binary is fp_built (smart mode) */
};

/* Compiles the table. Returns 0, or a negative errno when elf is not a usable x86_64 ELF
 * (then t is left empty). A binary without CFI gives 0 with has_cfi false and no rows.
 * Release t with unwind_table_release(). */
int unwind_table_build(struct unwind_table *t, const struct unwind_sources *src);
void unwind_table_release(struct unwind_table *t);

/* Bytes of memory the table holds. */
size_t unwind_table_bytes(const struct unwind_table *t);

/* Turns a file offset into a vaddr. Returns false when no executable segment holds it. */
bool unwind_table_vaddr(const struct unwind_table *t, uint64_t file_off, uint64_t *vaddr);

/* Returns the rule of the row that covers vaddr, or NULL when no CFI covers it. */
const struct unwind_rule *unwind_table_find(const struct unwind_table *t, uint64_t vaddr);

/* True when elf has a section called name with contents. */
bool unwind_elf_has_section(Elf *elf, const char *name);

#endif
