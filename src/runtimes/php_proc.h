/* The PHP reader's state for one process, shared by its parts: php_attach.c finds the
 * engine, php.c walks and names the frames. Internal to src/runtimes/php*.c. */
#ifndef KILN_RUNTIMES_PHP_PROC_H
#define KILN_RUNTIMES_PHP_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/php_layout.h"
#include "runtimes/runtime.h"
#include "util/hashmap.h"

#define PHP_MAX_FRAMES 128	/* PHP frames kept per sample */
#define PHP_MAX_STEPS 256	/* execute_data visited per sample */
#define PHP_CHAIN 64		/* frame addresses remembered from the last sample */

/* A function by name: rt_frame.id is an index in runtime_proc.fns. The same function
 * found at several addresses (compiled again per request) is one. */
struct php_fn {
	char *name;			/* "Class::method", "func", "<main>", "<eval>" */
	char *file;			/* NULL for an internal function */
};

struct runtime_proc {
	pid_t pid;
	struct php_layout l;
	char version[16];		/* "8.2.36" */
	uint64_t eg_cur;		/* &executor_globals.current_execute_data */
	uint32_t nr_chain;
	uint64_t chain[PHP_CHAIN];	/* the execute_data of the last sample, newest first,
					 * the whole stack: read again in one batch */
	struct hashmap *fn_by_addr;	/* function address -> its fingerprint and index */
	struct hashmap *fn_by_name;	/* kind, name and file -> index + 1 */
	struct php_fn **fns;		/* rt_frame.id is an index in this array */
	size_t nr_fns, alloc_fns;
};

#define PHP_UNKNOWN_FN UINT64_MAX	/* rt_frame.id of a frame whose function is unreadable */

/* The index of the function at addr with fingerprint f, named (its names read) on first
 * sight or when the address now holds another function; PHP_UNKNOWN_FN when they cannot
 * be read (php.c). */
uint64_t php_fn_index(struct runtime_proc *rp, uint64_t addr, const struct php_fn_print *f);

/* Reads the PHP stack of process rp (its main thread) into frames[0..max), root first,
 * each marked as the sample contract says (RT_FRAME_ENTRY, RT_FRAME_TRUNCATED). Returns
 * the number of frames (0: it runs no PHP code now), -EAGAIN when the stack moved while
 * it was read, or a negative errno (php_walk.c). */
int php_walk__stack(struct runtime_proc *rp, struct rt_frame *frames, int max);

/* Copies len bytes at addr of process pid. Returns the number of bytes copied (short
 * when the range crosses an unmapped page), or a negative errno (-EFAULT for addr 0). */
ssize_t php_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Whether a file name is one a PHP engine lives in: php, php-fpm, php-cgi with an
 * optional version (php8.2, php-fpm8.2), or libphp*.so (an embedding web server). */
bool php_file_name_matches(const char *path);

/* Finds the engine in process p and fills rp's layout, version and eg_cur. Returns 0;
 * -ENOENT when p runs no PHP engine; another negative errno with a reason written into
 * skip_reason (size 128) when it runs one that cannot be profiled (an unknown version, a
 * ZTS build). */
int php_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason);
/* Frees what php_attach__find remembers across processes (the engine files it has
 * looked at). */
void php_attach__forget(void);

#endif
