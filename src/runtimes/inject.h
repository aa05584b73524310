/* The libraries kiln has other processes load (the JVM agent, libkiln-jvm.so, through the
 * attach socket; the node perf-map module, libkiln-nodeperf.so, through the inspector):
 * where kiln's own copy is, and a copy of it inside a process's /tmp for a process that
 * cannot open kiln's (another mount namespace, another user who may not read kiln's
 * directory). */
#ifndef KILN_RUNTIMES_INJECT_H
#define KILN_RUNTIMES_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* Writes the path of the file name in the directory of the running binary into buf.
 * Returns 0, or a negative errno (-ENAMETOOLONG when it does not fit in size). */
int inject__beside_self(const char *name, char *buf, size_t size);

/* Copies the library lib into process pid's /tmp, seen through /proc/<pid>/root, as
 * /tmp/<stem>-<size>-<mtime>.so (hex): a name of the build, so that a copy is made once
 * and never rewritten (it may be mapped; a new build gets a new name), written under a
 * temporary name and renamed, mode 0644. Writes that path, as the process sees it, into
 * out. Returns 0 (also when the copy was there), or a negative errno. */
int inject__copy_into_root(pid_t pid, const char *lib, const char *stem, char *out,
			   size_t size);

#endif
