/* Whole reads and writes on file descriptors: the loops that retry after EINTR and carry
 * on after a short transfer. (Reading a whole file into memory: strbuf_read_fd.) */
#ifndef KILN_UTIL_IO_H
#define KILN_UTIL_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes all len bytes of buf to fd. Returns 0, or a negative errno (-EIO when the file
 * takes no more). */
int io__write_all(int fd, const void *buf, size_t len);

/* Reads exactly len bytes of fd at offset off into buf. Returns 0, or a negative errno
 * (-EIO when the file ends first). */
int io__pread_all(int fd, void *buf, size_t len, uint64_t off);

#endif
