/* Helpers for the Python reader's tests: finding the CPython builds installed on this
 * machine (Debian's python3 and every pyenv version), starting a workload under one and
 * reading its stacks through python_runtime. Header-only: included by test_python*.c. */
#ifndef KILN_TESTS_PYTHON_HARNESS_H
#define KILN_TESTS_PYTHON_HARNESS_H

#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtimes/runtime.h"
#include "util/strbuf.h"

#define MAX_PYTHONS 32

/* Fills paths[] with the installed interpreters; returns how many. */
static inline int find_pythons(char paths[][512], int max)
{
	int n = 0;
	if (access("/usr/bin/python3", X_OK) == 0)
		snprintf(paths[n++], 512, "/usr/bin/python3");
	const char *root = getenv("PYENV_ROOT");
	const char *home = getenv("HOME");
	char pattern[600];
	if (root)
		snprintf(pattern, sizeof(pattern), "%s/versions/*/bin/python", root);
	else
		snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions/*/bin/python", home ? home : "/root");
	glob_t g;
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && n < max; i++)
			snprintf(paths[n++], 512, "%s", g.gl_pathv[i]);
		globfree(&g);
	}
	return n;
}

/* The path of a workload, from the directory the tests run in (the repository root). */
static inline void workload_path(const char *name, char *out, size_t size)
{
	char cwd[400];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	snprintf(out, size, "%s/tests/workloads/%s", cwd, name);
}

/* Starts `python script arg` and waits for its "ready" line. Returns the pid, or -1. */
static inline pid_t start_python(const char *python, const char *script, const char *arg)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(python, python, script, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char buf[16] = { 0 };
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (pid < 0 || n <= 0 || strncmp(buf, "ready", 5) != 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	return pid;
}

static inline void stop_python(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The line of the "# LINE:<tag>" marker in file, or -1. */
static inline int marker_line(const char *file, const char *tag)
{
	FILE *f = fopen(file, "r");
	char line[512], want[128];
	int n = 0, found = -1;
	snprintf(want, sizeof(want), "# LINE:%s", tag);
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		char *p = strstr(line, want);
		if (p && (p[strlen(want)] == '\n' || p[strlen(want)] == 0)) {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Random sleep of 200-1200 us between reads, so that reads do not lock onto the
 * workload's own period. */
static inline void jitter_sleep(void)
{
	usleep(200 + (useconds_t)(rand() % 1000));
}

#endif
