/* The self-contained flamegraph HTML file: the profile's stacks and the renderer
 * (src/ui/flamegraph.js and .css, the same renderer the web UI uses) inside one file that
 * needs no network when opened: click to zoom, search with highlight, tooltips with
 * samples and percentages, colours by runtime from the frame annotations. */
#ifndef KILN_FORMAT_HTML_H
#define KILN_FORMAT_HTML_H

#include <stdio.h>

#include "profile/profile.h"

struct html_options {
	const char *title;		/* shown at the top; NULL: "kiln flamegraph" */
	unsigned skip_frames;		/* leading frames of every stack to leave out, e.g. 2
					 * for a .col's app-metadata index and empty container */
};

/* Writes p as a standalone flamegraph page. Returns 0, or a negative errno when the
 * write failed. */
int html__write(FILE *f, const struct profile *p, const struct html_options *opts);

/* Writes a differential flamegraph of base (A) and new (B): frames that take a larger share
 * of B than of A are red, smaller green. Same return convention as html__write. */
int html__write_diff(FILE *f, const struct profile *base, const struct profile *new,
		     const struct html_options *opts);

#endif
