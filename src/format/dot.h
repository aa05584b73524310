/* A profile as a Graphviz DOT call graph, the shape of `pprof -dot` and of Pyroscope's
 * PROFILE_FORMAT_DOT: one box per function (frame name) with its flat and cumulative
 * values and their shares of the total, one edge per caller → callee pair weighted by
 * the samples that went through it, the heaviest max_nodes functions by cumulative
 * value (the others and their edges left out, as the legend says). A function
 * recursing counts once per stack in its cumulative value, and an edge once per stack. */
#ifndef KILN_FORMAT_DOT_H
#define KILN_FORMAT_DOT_H

#include <stddef.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* Nodes shown when the caller gives none (pprof's -nodecount default). */
#define DOT_DEFAULT_NODES 80

/* Appends p (sample type 0) as a digraph titled title, unit the value's unit ("samples",
 * "bytes", ...), at most max_nodes functions (0: DOT_DEFAULT_NODES). */
void dot__write(struct strbuf *out, const struct profile *p, const char *title,
		const char *unit, size_t max_nodes);

#endif
