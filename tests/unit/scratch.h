/* A scratch directory for the unit tests that need files: made under /tmp from a name,
 * removed again with everything in it. */
#ifndef KILN_TESTS_SCRATCH_H
#define KILN_TESTS_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

/* Makes /tmp/kiln-test-NAME.XXXXXX into dir (size bytes). Returns 0, or -1. */
static inline int scratch__make(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "/tmp/kiln-test-%s.XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

static inline int scratch__unlink(const char *path, const struct stat *st, int flag,
				  struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Removes dir and all it holds. Returns 0, or -1 with what failed on stderr. */
static inline int scratch__remove(const char *dir)
{
	if (nftw(dir, scratch__unlink, 16, FTW_DEPTH | FTW_PHYS)) {
		fprintf(stderr, "failed to remove '%s'\n", dir);
		return -1;
	}
	return 0;
}

#endif
