/* JIT symbol maps, /tmp/perf-<pid>.map: one "START SIZE name" line per code blob (hex,
 * with or without 0x), appended to by the runtime as it compiles. Lines that do not
 * parse are counted and skipped, with one warning per map. */
#ifndef KILN_SYMBOLS_PERFMAP_H
#define KILN_SYMBOLS_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symtab.h"

struct perfmap {
	struct symtab tab;
	uint64_t size;		/* the file's size at the last read */
	uint64_t parsed;	/* bytes parsed: up to the end of the last complete line */
	uint64_t ino;
	size_t bad_lines;	/* since the file was first read */
	bool warned;
};

void perfmap_init(struct perfmap *pm);
/* Frees the contents and leaves pm as after perfmap_init(). */
void perfmap_release(struct perfmap *pm);

/* Brings the table up to date with the map at path: when the file grew, only the lines
 * added since the last read are parsed; another or a shorter file is read anew. Code
 * blobs appended later win over earlier ones at the same address.
 * Returns 1 when it was read, 0 when unchanged, or a negative errno (-ENOENT: no map;
 * the table then keeps what it had). */
int perfmap__refresh(struct perfmap *pm, const char *path);

/* The name of the blob covering addr, or NULL. Lives until the next refresh. */
const char *perfmap__find(const struct perfmap *pm, uint64_t addr);

size_t perfmap__memory(const struct perfmap *pm);

#endif
