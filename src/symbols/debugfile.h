/* Finding a binary's separate debug file (what Debian's -dbgsym and Fedora's -debuginfo
 * packages install), for symbols and for .debug_frame:
 *   1. by build-id: <root>/usr/lib/debug/.build-id/xx/rest.debug;
 *   2. by .gnu_debuglink name, accepted only when its CRC-32 matches:
 *      <dir>/<name>, <dir>/.debug/<name>, /usr/lib/debug<dir>/<name>,
 *   3. by build-id in the debuginfod cache, when one is set (src/symbols/debuginfod.h):
 *      <cache>/<build-id>/debuginfo, what was fetched earlier (never fetched here),
 * where <dir> is the binary's directory as the process sees it. Every candidate of 1 and
 * 2 is tried under root (the process's root, "/proc/PID/root") first and then on the
 * host, since a container's debug files may live in either. */
#ifndef KILN_SYMBOLS_DEBUGFILE_H
#define KILN_SYMBOLS_DEBUGFILE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* Opens the debug file of elf, which was mapped from path (as the process sees it, may end
 * in " (deleted)") in a process whose root is root ("" or NULL for the host). A file
 * found by build-id is checked to carry the same build-id. Returns a read-only descriptor
 * the caller owns, or a negative errno (-ENOENT when there is none). Never prints. */
int debugfile__open(Elf *elf, const char *root, const char *path);

/* Sets the debuginfod cache directory for every later debugfile__open() of the process
 * (NULL: none). Call before other threads may open debug files. */
void debugfile__set_debuginfod_cache(const char *dir);

/* The CRC-32 of a whole file as .gnu_debuglink defines it (zlib's crc32). Returns 0 and
 * sets *crc, or a negative errno. */
int debugfile__crc32(int fd, uint32_t *crc);

#endif
