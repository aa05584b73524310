/* Function names of Go binaries from the runtime's own table, .gopclntab, which the Go
 * linker keeps even in stripped binaries (go build -ldflags='-s -w'). Formats of Go 1.2,
 * 1.16, 1.18 and 1.20+ (magics 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1), either
 * byte order, 4- or 8-byte pointers. The table is untrusted: every offset is checked. */
#ifndef KILN_SYMBOLS_GOPCLNTAB_H
#define KILN_SYMBOLS_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symtab.h"

/* Adds every function of the pclntab at data (size bytes, as in the file) to t, with ELF
 * virtual addresses. Go 1.18+ entries are offsets from the start of the text, which the
 * header holds; text_start (the address of .text, or 0) stands in when the header's is 0
 * (not yet relocated). Returns the number of functions
 * added, or -EINVAL when data is not a pclntab or is malformed (then nothing is added). */
int gopclntab__load(const uint8_t *data, size_t size, uint64_t text_start, struct symtab *t);

/* Finds a pclntab header in buf (for binaries whose section headers were stripped).
 * Returns its offset, or -1. */
ssize_t gopclntab__scan(const uint8_t *buf, size_t size);

#endif
