/* The Ruby reader's state for one process, shared by its parts: ruby_attach.c finds the
 * interpreter and its threads, ruby_walk.c reads a thread's control frames, ruby.c keeps
 * the instruction sequences and C functions it has seen and names them. Internal to
 * src/runtimes/ruby*.c. */
#ifndef KILN_RUNTIMES_RUBY_PROC_H
#define KILN_RUNTIMES_RUBY_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/ruby_layout.h"
#include "runtimes/runtime.h"
#include "util/hashmap.h"

#define RB_MAX_FRAMES 128	/* control frames kept per sample (the newest) */
#define RB_CFUNC_ID (1ull << 63)	/* rt_frame.id of a C function: this bit | index */

/* An instruction sequence as first seen: the fields that identify it (its address may
 * be reused by another one after a GC) and what naming it and its lines needs. */
struct rb_iseq_info {
	uint64_t iseq, body;
	uint64_t pathobj, label, encoded, ii_body, succ;	/* fingerprint */
	uint32_t ii_size;
	char *name;		/* the label: "foo", "block in foo", "<main>" */
	char *path;		/* the file */
};

#define RB_EC_READ 24		/* bytes of an execution context read: vm_stack .. cfp */

struct rb_thread {
	uint64_t th;		/* rb_thread_t */
	uint64_t ec;		/* its execution context at the last read */
	uint64_t ident;		/* pthread_t, tid or rb_native_thread *: checked at each read */
};

struct runtime_proc {
	pid_t pid, nspid;
	struct rb_layout l;
	char version[24];		/* "3.1.2" */
	uint64_t ractor_var;		/* &ruby_single_main_ractor (3.0+) or &ruby_current_vm_ptr */
	uint64_t symbols;		/* ruby_global_symbols, 0 when not found */
	uint64_t last_op_id;		/* tLAST_OP_ID: larger IDs carry a serial << 4 */
	struct hashmap *threads;	/* host tid -> struct rb_thread * */
	uint64_t last_scan_ns;
	struct hashmap *iseq_by_addr;	/* iseq address -> index + 1 */
	struct rb_iseq_info **iseqs;	/* rt_frame.id of a Ruby frame indexes this */
	size_t nr_iseqs, alloc_iseqs;
	struct hashmap *line_cache;	/* (iseq index, position) -> line + 1 */
	struct hashmap *cfunc_by_id;	/* method ID -> index + 1 */
	char **cfuncs;			/* names of C functions, by RB_CFUNC_ID index */
	size_t nr_cfuncs, alloc_cfuncs;
	size_t unnamed;			/* reads of a C function's name that failed */
};

/* Copies len bytes at addr of process pid. Returns the number of bytes copied (short
 * when the range crosses an unmapped page), or a negative errno. */
ssize_t rb_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* The same, succeeding only when all len bytes were copied: 0 or a negative errno. */
int rb_read_all(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Reads len bytes at each of addrs[0..n) into out + i * len, in one system call (per
 * 256). Returns how many of them, from the first, were read whole (the rest are zeroed;
 * a 0 address stops the reads). */
size_t rb_read_many(pid_t pid, const uint64_t *addrs, size_t n, size_t len, uint8_t *out);
/* A range to read: len bytes at addr into out. */
struct rb_span {
	uint64_t addr;
	size_t len;
	void *out;
};
/* The same for spans[0..n) of any lengths, in order. */
size_t rb_read_spans(pid_t pid, const struct rb_span *spans, size_t n);

/* Finds the interpreter in process p and fills rp's layout and addresses. Returns 0;
 * -ENOENT when p runs no CRuby; another negative errno with a reason written into
 * skip_reason (size 128) when it runs one that cannot be profiled. */
int rb_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason);

/* Returns the execution context of host thread tid, rescanning the interpreter's
 * threads (at most every few milliseconds) when tid is unknown or its cached thread no
 * longer belongs to it. Returns 0 with *ec set, -ESRCH when tid runs no Ruby thread, or
 * a negative errno. When the context is the one of the thread's last read, its first
 * RB_EC_READ bytes were read with the thread, in the same system call, into head and
 * *have_head is set. */
int rb_thread__ec(struct runtime_proc *rp, pid_t tid, uint64_t *ec, uint8_t *head,
		  bool *have_head);
/* Frees the thread cache. */
void rb_thread__clear(struct runtime_proc *rp);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rb_now_ns(void);

/* Reads the Ruby string object at addr into a new C string, or NULL (not a string, or
 * unreadable). */
char *rb_read_string(struct runtime_proc *rp, uint64_t addr);
/* Reads element i of the Ruby array object at addr. Returns 0 or a negative errno. */
int rb_read_array_entry(struct runtime_proc *rp, uint64_t addr, uint64_t i, uint64_t *out);

/* Reads the control frames of execution context ec into frames[0..max), root first, as
 * runtime.h's sample() does; head, when not NULL, holds its first RB_EC_READ bytes, just
 * read. Returns the number written or a negative errno. */
int rb_walk__stack(struct runtime_proc *rp, uint64_t ec, const uint8_t *head,
		   struct rt_frame *frames, int max);

/* Returns the cache index of the instruction sequence at iseq whose body (body_read
 * bytes at body) is b, loading it on first sight or when the address now holds another
 * one. Returns -1 when it cannot be read (ruby.c). */
int64_t rb_iseq_index(struct runtime_proc *rp, uint64_t iseq, uint64_t body, const uint8_t *b);
/* Returns the line of position pos of iseq index i, 0 when unknown (ruby.c). */
uint32_t rb_iseq_line(struct runtime_proc *rp, size_t i, uint32_t pos);
/* Returns the RB_CFUNC_ID index naming the C function whose method ID is id (0: an
 * unknown one), reading its name on first sight (ruby.c). */
uint64_t rb_cfunc_index(struct runtime_proc *rp, uint64_t id);

static inline uint64_t rb_rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	__builtin_memcpy(&v, p + off, sizeof(v));
	return v;
}

#endif
