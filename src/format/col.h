/* Collapsed stacks: gProfiler's .col files and Brendan Gregg's folded format.
 *
 * A .col file starts with "# {json}" (the profile's metadata), then one line per stack:
 * frames separated by ';', root first, a space and the sample count. In the agent's files
 * the first three fields are gProfiler's prefix: app-metadata index, container name (may
 * be empty) and process name. Folded text is the same without the header.
 *
 * The prefix and the escaping live here alone. In a profile the container and the process
 * are the labels COL_LABEL_CONTAINER and COL_LABEL_PROCESS; col__write turns them into the
 * prefix, col__split_prefix turns a prefix read by col__parse back into them. Frame names
 * and label values are kept verbatim in profiles and escaped when written. Only the count
 * (sample type 0) is written. */
#ifndef KILN_FORMAT_COL_H
#define KILN_FORMAT_COL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/* Number of prefix frames in the agent's .col stacks (index; container; process). */
#define COL_PREFIX_FRAMES 3

#define COL_LABEL_CONTAINER "container"
#define COL_LABEL_PROCESS "process"

/* Writes p as a .col file: the header line (when with_header) and every stack with a
 * non-zero count. With the header, a stack whose labels have a process starts with the
 * prefix "0;<container>;<process>;" (without, folded text, frames only). Frame names and
 * label values are escaped as col__sanitize_frame says. Returns 0, or a negative errno
 * when the write failed. */
int col__write(FILE *f, const struct profile *p, bool with_header);

/* Parses collapsed text into p, adding to what p holds, every field a frame (the prefix
 * too: see col__split_prefix). An optional "# {json}" first line
 * replaces p's metadata. Blank lines and other lines starting with '#' are skipped.
 * Returns 0, or -EINVAL with a message naming the line in err (when err is not NULL). */
int col__parse(struct profile *p, const char *text, size_t len, char *err, size_t errlen);

/* Adds count samples of the stack written in text[0..len) as frames separated by ';',
 * root first, without a count (Pyroscope's "lines" format is one such stack per line).
 * Returns the stack's index in p. */
size_t col__add_stack(struct profile *p, const char *text, size_t len, uint64_t count);

/* True when every stack of p starts with gProfiler's prefix: a numeric app-metadata
 * index, the container, the process (false for a profile without stacks). */
bool col__has_prefix(const struct profile *p);

/* A copy of p (metadata, sample types and period too) in which, when col__has_prefix(p),
 * the prefix of each stack becomes its container label (when not empty) and process
 * label, added to its other labels. When keep_process, the process name also stays as
 * the stack's root frame, as gProfiler's studio shows it. The caller frees the copy. */
struct profile *col__split_prefix(const struct profile *p, bool keep_process);

/* The agent's profile as a flamegraph shows it: a copy of p in which the process label of
 * each stack that has one is also its root frame, and the stacks without one are split as
 * col__split_prefix(p, true) does when they all have the prefix (JVM stacks merged with
 * their prefix in frames). The caller frees the copy. */
struct profile *col__process_root(const struct profile *p);

/* Rewrites a frame name in place so that it cannot break the line format: ';' becomes
 * '|' (as gProfiler does for Java signatures), control characters become spaces.
 * Returns name. */
char *col__sanitize_frame(char *name);

#endif
