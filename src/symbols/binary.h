/* Opening the file behind a process's mapping, for the symbolizer and the unwinder.
 *
 * A profiled process may live in another mount namespace (a container), may have mapped a
 * file that was since deleted or replaced (a package upgrade), or may exit before its
 * samples are symbolized. binary__open() tries, in order:
 *   1. /proc/<pid>/map_files/<start>-<end>: the very file mapped, deleted or not, in any
 *      namespace (needs CAP_SYS_ADMIN, which the agent has as root);
 *   2. /proc/<pid>/root/<path>: the path as the process sees it, through its root;
 *   3. <path> on the host, only when the process shares kiln's PID namespace view
 *      (pid == nspid), i.e. it is probably not in a container.
 * Steps 2 and 3 reject a file whose inode differs from the mapping's (when known), so a
 * replaced binary is never read in place of the one that was mapped. */
#ifndef KILN_SYMBOLS_BINARY_H
#define KILN_SYMBOLS_BINARY_H

#include <stdbool.h>
#include <stddef.h>

#include "symbols/mapping.h"

/* True when m maps a file that binary__open() can try: its path starts with '/' and is not
 * "//anon" ("/memfd:x (deleted)" is true: map_files reaches it). "[vdso]", "[heap]",
 * "[anon:...]", NULL and empty paths are false. */
bool binary__has_file(const struct mapping *m);

/* Opens the file mapped by m in process p (see the order above), read-only and
 * close-on-exec. The caller owns the descriptor. Returns it, or a negative errno:
 * -ENOENT when m has no file or no way worked, -ESTALE when only a different file (other
 * inode) was found at the path. Never prints. */
int binary__open(const struct proc_ref *p, const struct mapping *m);

/* The base name of a mapping's path for "(module+0xOFF)": the part after the last '/',
 * without a trailing " (deleted)". Writes at most size bytes (NUL-terminated) into buf
 * and returns buf. "" or NULL paths give "unknown". */
char *binary__module_name(const char *path, char *buf, size_t size);

#endif
