/* Files of src/ui/ linked into the binary (scripts/gen-assets.sh), so that the web UI and
 * every standalone flamegraph need no network and no files beside the binary. */
#ifndef KILN_UI_ASSETS_H
#define KILN_UI_ASSETS_H

#include <stddef.h>

struct asset {
	const char *name;	/* base name, e.g. "flamegraph.js" */
	const char *data;	/* contents, followed by a NUL byte */
	size_t size;		/* bytes, without the NUL */
};

/* Returns the embedded file called name, or NULL when there is none. */
const struct asset *asset__find(const char *name);

#endif
