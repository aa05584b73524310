/* Collapsed stacks: gProfiler's .col files and Brendan Gregg's folded format.
 *
 * A .col file starts with "# {json}" (the profile's metadata), then one line per stack:
 * frames separated by ';', root first, a space and the sample count. In the agent's files
 * the first three frames are gProfiler's prefix: app-metadata index, container name (may
 * be empty) and process name. Folded text is the same without the header. */
#ifndef KILN_FORMAT_COL_H
#define KILN_FORMAT_COL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/* Number of prefix frames in the agent's .col stacks (index; container; process). */
#define COL_PREFIX_FRAMES 3

/* Writes p as a .col file: the header line (when with_header) and every stack with a
 * non-zero count. Returns 0, or a negative errno when the write failed. */
int col__write(FILE *f, const struct profile *p, bool with_header);

/* Parses collapsed text into p, adding to what p holds. An optional "# {json}" first line
 * replaces p's metadata. Blank lines and other lines starting with '#' are skipped.
 * Returns 0, or -EINVAL with a message naming the line in err (when err is not NULL). */
int col__parse(struct profile *p, const char *text, size_t len, char *err, size_t errlen);

/* Adds count samples of the stack written in text[0..len) as frames separated by ';',
 * root first, without a count (Pyroscope's "lines" format is one such stack per line).
 * Returns the stack's index in p. */
size_t col__add_stack(struct profile *p, const char *text, size_t len, uint64_t count);

/* Rewrites a frame name in place so that it cannot break the line format: ';' becomes
 * '|' (as gProfiler does for Java signatures), control characters become spaces.
 * Returns name. */
char *col__sanitize_frame(char *name);

#endif
