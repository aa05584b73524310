/* A process's file mappings as the runtime readers look for their interpreter in them:
 * /proc/PID/maps read and parsed once per attach, not once per reader. Used by the
 * session's thread only. */
#ifndef KILN_RUNTIMES_PROCMAPS_H
#define KILN_RUNTIMES_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps that names a file (its path starts with '/'). */
struct procmap {
	uint64_t start, end, pgoff;
	uint64_t ino;
	uint32_t maj, min;
	bool exec;		/* mapped executable */
	const char *path;	/* "/usr/bin/python3.11", maybe ending in " (deleted)" */
};

/* Returns the file mappings of pid in address order and sets *n, or NULL with *n = 0 when
 * the maps cannot be read (the process is gone). Between procmaps__hold() and
 * procmaps__release() the maps of one pid are read once and shared by every caller; else
 * each call reads them again. The array is valid until the next call or release. */
const struct procmap *procmaps__get(pid_t pid, size_t *n);

/* Starts (hold) and ends (release) a span in which procmaps__get() of the same pid reuses
 * one read: runtime_set__attach() holds while every reader looks at one process. */
void procmaps__hold(void);
void procmaps__release(void);

/* Reads of /proc/PID/maps so far (for tests and benches). */
uint64_t procmaps__reads(void);

/* Parses the text of a maps file (buf, len bytes and a NUL at buf[len]; modified in
 * place: lines become strings) into *out (grown with xrealloc; *alloc its capacity). Returns the number of file
 * mappings. Lines that do not parse are skipped. */
size_t procmaps__parse(char *buf, size_t len, struct procmap **out, size_t *alloc);

#endif
