/* Where CRuby keeps what the Ruby reader needs, per interpreter version (x86_64 and other
 * LP64 targets): the execution context, control frames, instruction sequences, method
 * entries, strings, arrays and the thread list. One table for 2.7-3.4 (ruby_layout.c says
 * how each column was checked). Internal to src/runtimes/ruby*.c. */
#ifndef KILN_RUNTIMES_RUBY_LAYOUT_H
#define KILN_RUNTIMES_RUBY_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define RB_NO_FIELD 0xffffu

enum rb_tid_kind {
	RB_TID_PTHREAD,		/* rb_thread_t.thread_id is a pthread_t: glibc's tid in it */
	RB_TID_THREAD,		/* rb_thread_t.tid (3.1) */
	RB_TID_NATIVE,		/* rb_thread_t.nt->tid (3.2+) */
};

enum rb_str_kind {
	RB_STR_31,		/* heap len @16, ptr @24; embedded chars @16, length in flags */
	RB_STR_32,		/* len @16 (both forms), heap ptr @24, embedded chars @24 */
};

struct rb_layout {
	int major, minor;
	/* rb_execution_context_t */
	uint16_t ec_vm_stack, ec_vm_stack_size, ec_cfp, ec_thread_ptr;
	/* rb_control_frame_t */
	uint16_t cfp_pc, cfp_iseq, cfp_ep, cfp_size;
	/* rb_iseq_t, rb_iseq_constant_body */
	uint16_t iseq_body;
	uint16_t body_type, body_encoded, body_pathobj, body_label, body_first_lineno;
	uint16_t body_ii_body, body_ii_positions, body_ii_size, body_succ;
	uint16_t body_read;		/* bytes of a body read: past the last field above */
	uint16_t insn_entry_size;	/* sizeof(struct iseq_insn_info_entry); line_no @0 */
	/* rb_method_entry_t, rb_method_definition_t */
	uint16_t me_def, def_original_id;
	/* thread list: 2.7 vm->living_threads, 3.0+ main ractor's threads.set */
	uint16_t list_head;		/* in the VM (2.7) or the ractor */
	uint16_t ractor_running_ec;	/* RB_NO_FIELD on 2.7 */
	uint16_t th_node, th_ec, th_tid;	/* th_tid: thread_id, tid or nt */
	uint16_t nt_tid;		/* in struct rb_native_thread (3.2+) */
	enum rb_tid_kind tid_kind;
	enum rb_str_kind str_kind;
	uint8_t has_ractor;		/* ruby_single_main_ractor holds the thread list */
};

/* Frame kinds and flags of ep[0] (vm_core.h, the same 2.5 to 3.4). */
#define RB_FRAME_MAGIC_MASK 0x7fff0001ull
#define RB_FRAME_MAGIC_CFUNC 0x55550001ull
#define RB_FRAME_MAGIC_IFUNC 0x66660001ull
#define RB_FRAME_MAGIC_DUMMY 0x79990001ull
#define RB_FRAME_FLAG_FINISH 0x0020ull	/* pushed by a vm_exec call from C */
#define RB_T_MASK 0x1full
#define RB_T_STRING 0x05ull
#define RB_T_ARRAY 0x07ull
#define RB_T_IMEMO 0x1aull
#define RB_IMEMO_MENT 6			/* (flags >> 12) & 0xf of a method entry */
#define RB_FL_USER1 (1ull << 13)	/* RSTRING_NOEMBED, RARRAY_EMBED_FLAG */
#define RB_METHOD_TYPE_CFUNC 1		/* rb_method_definition_t.type, low 4 bits */
#define RB_ID_ENTRY_UNIT 512		/* ids per page of the global symbol table */

/* Fills *out for CRuby major.minor from the table. Returns 0, or -ENOTSUP for a version
 * without a column. */
int rb_layout__for_version(int major, int minor, struct rb_layout *out);

/* Parses a ruby_version string ("3.1.2") into major and minor. Returns 0 or -EINVAL. */
int rb_layout__parse_version(const char *s, size_t len, int *major, int *minor);

/* The insns_info entry of the instruction at position pos (VALUE units into
 * iseq_encoded, already moved back by one as rb_vm_get_sourceline does) from a succinct
 * index table: span holds the span_len bytes of the table at the offset
 * rb_layout__succ_span gives for pos. nr_entries is insns_info.size. Returns the entry
 * index (0-based), or -1 when span is too short or the rank is implausible. */
int rb_layout__succ_index(const uint8_t *span, size_t span_len, uint32_t pos, uint32_t nr_entries);

/* The byte range of a succinct index table that rb_layout__succ_index reads for pos:
 * [*off, *off + *len). */
void rb_layout__succ_span(uint32_t pos, size_t *off, size_t *len);

#endif
