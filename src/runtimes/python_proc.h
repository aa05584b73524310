/* The Python reader's state for one process, shared by its parts: python_attach.c finds
 * the interpreter, python_thread.c maps threads to thread states, python.c reads and
 * names the frames. Internal to src/runtimes/python*.c. */
#ifndef KILN_RUNTIMES_PYTHON_PROC_H
#define KILN_RUNTIMES_PYTHON_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/python_layout.h"
#include "runtimes/runtime.h"
#include "util/hashmap.h"

/* A code object as first seen: the fields that identify it (an address may be reused by
 * another code object later) and what naming it needs. */
struct py_code {
	uint64_t addr;
	uint64_t type, name, qualname, file, lines;	/* fingerprint: ob_type and pointers */
	int32_t firstlineno;
	char *func;		/* qualname (3.11+) or name, UTF-8 */
	char *path;		/* co_filename */
	uint8_t *tab;		/* line table bytes (NULL when unreadable) */
	uint32_t tab_len;
};

#define PY_MAX_FRAMES 128	/* Python frames kept per sample */
#define PY_MAX_STEPS 256	/* frames visited per sample, C-stack shims included */
#define PY_CHAIN 64		/* frame addresses remembered per thread */

struct py_thread {
	uint64_t tstate;
	uint64_t ident;		/* native_thread_id (3.11+) or pthread_t */
	uint64_t cframe;	/* 3.11/3.12: the _PyCFrame of the last read */
	uint32_t nr_chain;
	uint64_t chain[PY_CHAIN];	/* the frames of the last read, newest first: read
					 * again in one batch when the stack has not moved */
};

/* One frame as read at sample time, before it is named. */
struct py_raw_frame {
	uint64_t code;
	uint64_t instr;		/* f_lasti (as a signed int) or the instruction pointer */
	uint32_t flags;
	uint32_t index;		/* into rp->codes, after validation */
};

/* Reads the Python stack of thread pt (whose state ts was just read) into raw[0..max),
 * newest first, checked against a second read of the thread state and the newest frame
 * (the thread may run on while it is read), with each frame's code object looked up in
 * the cache by code_index. Returns the number of frames, -EAGAIN when the stack moved
 * while it was read, or a negative errno; *truncated is set when frames beyond these
 * exist or could not be read. */
int py_walk__stack(struct runtime_proc *rp, struct py_thread *pt, const uint8_t *ts,
		   struct py_raw_frame *raw, int max, bool *truncated);
/* The same in two reads, when the thread's stack still has the frames of its previous
 * read (the common case of a busy thread): one batch of the thread state and those
 * frames, then the check. Returns -EAGAIN when the stack differs (use py_walk__stack). */
int py_walk__fast(struct runtime_proc *rp, struct py_thread *pt, struct py_raw_frame *raw, int max,
		  bool *truncated);
/* The cached thread of host tid, or NULL (no read). */
struct py_thread *py_thread__find(struct runtime_proc *rp, pid_t tid);
/* Returns the cache index of the code object at addr, whose first l.co_read bytes are
 * co, loading it on first sight or when the address now holds another code object.
 * Returns -1 when it is not a readable code object (python.c). */
int64_t py_code_index(struct runtime_proc *rp, uint64_t addr, const uint8_t *co);

struct runtime_proc {
	pid_t pid, nspid;
	int pending;			/* a python* executable whose interpreter is not mapped
					 * yet (sampled while starting): tries left to find it */
	uint64_t last_try_ns;
	struct py_layout l;
	char version[16];		/* "3.11" */
	uint64_t interp_head;		/* address of the pointer to the first interpreter */
	uint64_t code_type, str_type, bytes_type;	/* ob_type values, 0 when unknown */
	int pthread_tid_off;		/* tid in glibc/musl struct pthread (<= 3.10), -1 unknown */
	struct hashmap *threads;	/* host tid -> struct py_thread * */
	uint64_t last_scan_ns;
	struct hashmap *code_by_addr;	/* code address -> index + 1 (as a pointer value) */
	struct py_code **codes;		/* rt_frame.id is an index in this array */
	size_t nr_codes, alloc_codes;
};

/* Copies len bytes at addr of process pid. Returns the number of bytes copied (short
 * when the range crosses an unmapped page), or a negative errno. */
ssize_t py_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* The same, succeeding only when all len bytes were copied: 0 or a negative errno. */
int py_read_all(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Finds the interpreter in process p and fills rp's layout and addresses (attach).
 * Returns 0; -ENOENT when p runs no CPython; another negative errno with a reason
 * written into skip_reason (size 128) when it runs one that cannot be profiled. */
int py_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason);
/* Frees what py_attach__find remembers across processes (the executables that hold no
 * CPython); the next lookups start afresh. For the end of the last session. */
void py_attach__forget(void);

/* Returns the thread state of host thread tid, rescanning the interpreter's threads
 * (at most every few milliseconds) when tid is unknown or its cached state no longer
 * belongs to it. ts receives the first l.ts_read bytes of the thread state (a buffer
 * of at least 512 bytes). Returns 0, -ESRCH when tid runs no Python, or a negative errno. */
int py_thread__state(struct runtime_proc *rp, pid_t tid, uint8_t *ts, struct py_thread **pt);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t py_now_ns(void);
/* Frees the thread cache. */
void py_thread__clear(struct runtime_proc *rp);

static inline uint64_t py_rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	__builtin_memcpy(&v, p + off, sizeof(v));
	return v;
}

#endif
