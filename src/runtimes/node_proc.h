/* The Node.js reader's state for one process, shared by its parts: node_layout.c reads
 * V8's postmortem metadata (the v8dbg_* symbols of the node binary) and decodes V8's
 * objects from bytes, node_walk.c finds the JavaScript frames of a sample by their frame
 * pointers, node.c keeps the functions, scripts and code objects seen and names them.
 * Internal to src/runtimes/node*.c. */
#ifndef KILN_RUNTIMES_NODE_PROC_H
#define KILN_RUNTIMES_NODE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/runtime.h"
#include "util/hashmap.h"

#define ND_MAX_JS 96		/* JavaScript frames kept per sample (the newest) */
#define ND_MAX_INLINE 16	/* functions inlined into one optimized frame, kept */

/* Where V8 keeps things, for one V8 version: offsets in bytes, from the v8dbg_* symbols
 * where the binary has them, else from the version's known values. */
struct nd_layout {
	int major, minor, build;
	/* frame slots, relative to fp */
	int fp_context, fp_function, fp_bytecode_array, fp_bytecode_offset;
	int ft_entry, ft_construct_entry;	/* frame type markers of entry frames */
	/* instance types */
	int map_instance_type;
	uint16_t t_jsfunction_first, t_jsfunction_last;
	uint16_t t_sfi, t_scope_info, t_script, t_code, t_fixed_array, t_first_nonstring;
	/* object fields */
	int jsf_shared, jsf_code;	/* jsf_code < 0: none (13.6: a dispatch handle) */
	int sfi_name_or_scope_info, sfi_script_or_debug_info;
	int sfi_function_data;		/* its BytecodeArray (or other data); -1 unknown */
	int script_name, script_source, script_line_ends;
	int code_deopt_data, code_positions, code_entry, code_size, code_flags;
	int code_header;	/* > 0: the instructions follow the Code's header of this size
				 * (V8 10.2); 0: code_entry points to them (11.3 on) */
	int is_header;		/* 11.3 on: the InstructionStream's header (map, Code, ...) */
	uint32_t code_kind_mask, kind_baseline, kind_maglev, kind_turbofan;
	int deopt_inlined_count, deopt_literals, deopt_inlining_positions;	/* indices */
	int deopt_sfi;		/* index of the code's own function; -1 unknown */
	int deopt_sfi_wrapper;	/* >= 0: that slot holds a SharedFunctionInfoWrapper, whose
				 * function is at this offset (13.6) */
	int ba_positions, ba_header;	/* BytecodeArray: its source positions, its bytecodes */
	int str_length, seq_chars, cons_first, cons_second, thin_actual, ext_data;
	int scope_flags, scope_nr_context_locals, scope_first_vars;
	int fa_length, fa_data;
};

/* A JavaScript function as first seen (SharedFunctionInfo): rt_frame.id indexes these. */
struct nd_fn {
	uint64_t sfi, name_or_scope, script;	/* identity: the address may be reused */
	char *name;			/* "alpha", "(anonymous)" */
	char *file;			/* the script's name, "" when none */
	int64_t script_index;		/* in runtime_proc.scripts, -1 when none */
};

/* A script's line ends, read once. */
struct nd_script {
	uint64_t addr;
	uint64_t source;		/* its source string: another script a GC moved to
					 * addr has another */
	uint32_t *ends;			/* offsets of the '\n's, NULL when unknown */
	uint32_t nr_ends;
	bool tried;
};

/* An optimized code object's inlining data, read once: its source positions (code
 * offset -> position), the functions inlined and where. */
struct nd_code {
	uint64_t code, entry;
	uint32_t size;
	/* its source position table and deoptimization data, as the Code pointed at them
	 * when read: other code that a GC put at the same address, of the same size, does
	 * not point at the same ones */
	uint64_t positions, deopt;
	uint32_t nr_pos;
	uint32_t *pc_off;		/* ascending code offsets */
	uint64_t *pos;			/* their source positions */
	uint32_t nr_inl;
	int32_t *inl_fn;		/* per inlining: index in fns (-1 unknown) */
	uint64_t *inl_pos;		/* per inlining: the call's source position */
	uint64_t sfi;			/* its own function (0: unknown) */
	uint32_t nr_lits;
	int32_t *lit_fn;		/* the inlined functions, by literal index (-1) */
	bool baseline;			/* Sparkplug's: pc_off holds the end of each
					 * bytecode's code, pos its bytecode offset */
	uint64_t ba;			/* ... decoded beside this BytecodeArray */
	uint8_t unread;			/* times read with positions inlined by more
					 * functions than its inlining table held */
};

struct runtime_proc {
	pid_t pid;
	struct nd_layout l;
	char version[32];		/* V8's: "11.3.244" */
	uint64_t blob, blob_size;	/* the embedded builtins' code */
	uint64_t blob_var, blob_size_var;	/* where the process keeps them */
	uint64_t blob_ino, blob_off;	/* the file that holds them, at offset: V8 maps a
					 * copy near its JIT code (short builtin calls) */
	/* The interpreter's bytecode sizes at operand scales 1, 2 and 4, from the binary's
	 * interpreter::Bytecodes::kBytecodeSizes (.symtab: none in a stripped libnode):
	 * they step through a baseline frame's bytecodes. nr_bytecodes 0: unknown. */
	uint8_t bc_sizes[3][256];
	uint32_t nr_bytecodes;
	struct hashmap *fn_by_sfi;	/* sfi address -> index + 1 */
	struct nd_fn **fns;
	size_t nr_fns, alloc_fns;
	struct hashmap *script_by_addr;	/* script address -> index + 1 */
	struct nd_script *scripts;
	size_t nr_scripts, alloc_scripts;
	struct hashmap *code_by_addr;	/* code address -> struct nd_code * */
	struct hashmap *code_by_pc;	/* pc -> its code object's address, 0: none */
	struct hashmap *bc_by_addr;	/* BytecodeArray address -> struct nd_code * (its
					 * positions; entry: the table's address) */
	uint64_t unreadable;		/* frames whose objects could not be read */
};

/* A range to read from the process. */
struct nd_span {
	uint64_t addr;
	size_t len;
	void *out;
};

/* Reads spans[0..n) of process pid in order, in one system call per 64 spans; a span
 * that cannot be read whole is zeroed. Returns the number read whole. */
size_t nd_read_spans(pid_t pid, const struct nd_span *spans, size_t n);
/* Reads len bytes at addr whole: 0 or a negative errno. */
int nd_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Fills l for V8 version major.minor from the known values, then from the v8dbg_*
 * values that get(name) finds (returns false when the binary has no such symbol).
 * Returns 0, or -ENOTSUP for a version whose layout is not known. */
int nd_layout__fill(struct nd_layout *l, int major, int minor, int build,
		    bool (*get)(void *ctx, const char *name, int32_t *out), void *ctx);

static inline uint64_t nd_rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	__builtin_memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Tagged values (64-bit builds without pointer compression). */
static inline bool nd_is_smi(uint64_t v)
{
	return (v & 1) == 0;
}
static inline int32_t nd_smi(uint64_t v)
{
	return (int32_t)(v >> 32);
}
static inline bool nd_is_heap(uint64_t v)
{
	return (v & 3) == 1 && v > 4096;
}
static inline uint64_t nd_untag(uint64_t v)
{
	return v & ~(uint64_t)3;
}

/* The first instruction of the Code at tagged address code, whose header is hdr. */
static inline uint64_t nd_code_entry(const struct nd_layout *l, uint64_t code, const uint8_t *hdr)
{
	return l->code_header > 0 ? nd_untag(code) + (uint64_t)l->code_header
				  : nd_rd64(hdr, (size_t)l->code_entry);
}

/* Decoders of V8 data read from the process (node_layout.c); bytes are untrusted. */

/* Decodes a source position table (ByteArray data, len bytes) into at most max (code
 * offset, source position) entries. Returns the number decoded. */
uint32_t nd_decode_positions(const uint8_t *b, size_t len, uint32_t *pc_off, uint64_t *pos,
			     uint32_t max);
/* Decodes Sparkplug's bytecode offset table (table_len bytes: one unsigned VLQ a range of
 * code, the prologue's, then one per bytecode) beside the nr_bytes bytecodes it was made
 * for, stepped with sizes[scale][bytecode] (V8's kBytecodeSizes, nr_sizes bytecodes).
 * Writes each range's end offset into pc_end and its bytecode offset into bc_off (-1 the
 * prologue), at most table_len entries. Returns how many, or 0 when the table and the
 * bytecodes do not match (an entry too many or too few, a range past code_size). */
uint32_t nd_decode_baseline(const uint8_t *table, size_t table_len, const uint8_t *bytecodes,
			    uint32_t nr_bytes, const uint8_t (*sizes)[256], uint32_t nr_sizes,
			    uint32_t code_size, uint32_t *pc_end, uint64_t *bc_off);
/* The script offset (-1: none) and inlining id (0: the outer function) of a source
 * position. */
int32_t nd_pos_offset(uint64_t pos);
uint32_t nd_pos_inlining(uint64_t pos);
/* The 1-based line of script offset off given the line ends, 0 when unknown. */
uint32_t nd_line_of(const uint32_t *ends, uint32_t nr, int32_t off);
/* The offset in a ScopeInfo (bytes b, len of them) of the slot that holds the function's
 * name, or -1. */
int nd_scope_name_slot(const struct nd_layout *l, const uint8_t *b, size_t len);

/* Reads the V8 String at tagged address v into a new C string (at most max bytes; other
 * than ASCII shown as '?'), or NULL (node_layout.c). */
char *nd_read_string(struct runtime_proc *rp, uint64_t v, size_t max);
/* The instance type of the heap object at tagged address v, or -1. */
int nd_instance_type(struct runtime_proc *rp, uint64_t v);

/* Finds the JavaScript frames of a sample (node_walk.c): root first, RT_FRAME_ENTRY on
 * the first frame after each entry frame. Returns the number written. */
int nd_walk(struct runtime_proc *rp, const struct rt_native *n, struct rt_frame *frames, int max);

/* The index in rp->fns of the function whose SharedFunctionInfo is at tagged address sfi
 * (its first ND_SFI_READ bytes in hdr when already read, else NULL), reading its names on
 * first sight or when the address holds another function now (node.c); -1 when it
 * cannot be read. */
#define ND_SFI_READ 48	/* 13.6: the script at 40 */
#define ND_JSF_READ 56	/* bytes of a JSFunction read: map .. code */
#define ND_CODE_READ 64	/* of a Code: map .. instruction size */
int32_t nd_fn_index(struct runtime_proc *rp, uint64_t sfi, const uint8_t *hdr);
/* The 1-based line of script offset off in function i's script, 0 when unknown. */
uint32_t nd_fn_line(struct runtime_proc *rp, int32_t i, int32_t off);
/* The inlining data of optimized code at tagged address code (header hdr already read),
 * read on first sight (node.c); NULL when it cannot be read. */
struct nd_code *nd_code_get(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr);
/* Whether optimized code c is the code of the function whose SharedFunctionInfo is at
 * tagged address sfi; when it says it is another's, that one's into *own (node.c). */
bool nd_code_of(struct runtime_proc *rp, struct nd_code *c, uint64_t sfi, uint64_t *own);

/* The 1-based line of bytecode offset off of function i, whose BytecodeArray at tagged
 * address ba has header hdr (ND_BA_READ bytes, already read); 0 when unknown (node.c). */
#define ND_BA_READ 40
uint32_t nd_bytecode_line(struct runtime_proc *rp, int32_t i, uint64_t ba, const uint8_t *hdr,
			  int32_t off);
/* The bytecode offset that Sparkplug code at tagged address code (header hdr) runs at
 * code offset off, for the BytecodeArray at ba (header bah) of its frame; its table is
 * read on first sight (node.c). -1 when unknown: the prologue, no bytecode sizes, or a
 * table that does not match the bytecodes. */
int32_t nd_baseline_offset(struct runtime_proc *rp, uint64_t code, const uint8_t *hdr, uint64_t ba,
			   const uint8_t *bah, uint32_t off);
/* Frees a struct nd_code (node.c). Accepts NULL. */
void nd_code_free(struct nd_code *c);

/* Finds V8 in process p and fills rp (node_attach.c): in the file called node, nodejs or
 * libnode.so*, else in a large executable mapping that exports V8's postmortem symbols
 * (node under another name: a single executable application, a copied binary). Returns
 * 0, -ENOENT when p runs no node, or -ENOTSUP with a reason in skip_reason (size 128). */
int nd_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason);
/* Whether path names a node binary or libnode by its file name (runtime_ops.likely). */
bool nd_attach__is_node_file(const char *path);

#endif
