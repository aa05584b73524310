/* What the agent reads from /proc: the name, namespace pid, container and executable
 * mappings of this process and of children forked for the purpose (one renamed, one in a
 * PID namespace of its own, one in a cgroup named like a container, one mapping anonymous
 * code), and the errors for a process that does not exist. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/procfs.h"

#define NO_PID 0x7ffffff0	/* above any pid_max */

/* A child that does what setup says, reports one word through a pipe, and waits to be
 * killed. */
struct child {
	pid_t pid;
	uint64_t word;
};

static void child_wait(int fd, uint64_t word)
{
	if (write(fd, &word, sizeof(word)) != sizeof(word))
		_exit(1);
	for (;;)
		pause();
}

static struct child spawn(uint64_t (*setup)(void))
{
	struct child c = { 0 };
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		close(fds[0]);
		child_wait(fds[1], setup ? setup() : 0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c.word, sizeof(c.word)), sizeof(c.word));
	close(fds[0]);
	return c;
}

static void reap(struct child *c)
{
	int status;

	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	c->pid = 0;
}

static uint64_t rename_self(void)
{
	prctl(PR_SET_NAME, "kiln-child:1", 0, 0, 0);
	return 0;
}

static void test_comm(void **state)
{
	char buf[64], small[5];
	struct child c;

	prctl(PR_SET_NAME, "kiln-procfs", 0, 0, 0);
	assert_int_equal(procfs__comm(getpid(), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "kiln-procfs");	/* no newline */
	assert_int_equal(procfs__comm(getpid(), small, sizeof(small)), 0);
	assert_string_equal(small, "kiln");

	c = spawn(rename_self);
	assert_int_equal(procfs__comm(c.pid, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "kiln-child:1");
	reap(&c);
	assert_int_equal(procfs__comm(NO_PID, buf, sizeof(buf)), -ENOENT);
}

static void test_nspid(void **state)
{
	pid_t pid;
	int fds[2], status;
	uint64_t word = 0;

	assert_int_equal(procfs__nspid(getpid()), getpid());
	assert_int_equal(procfs__nspid(NO_PID), NO_PID);

	/* A grandchild in a new PID namespace is pid 1 there. */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t inner;
		close(fds[0]);
		if (unshare(CLONE_NEWPID) < 0)
			child_wait(fds[1], 0);	/* not allowed here: reported as 0 */
		inner = fork();
		if (inner == 0)
			for (;;)
				pause();
		child_wait(fds[1], (uint64_t)inner);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &word, sizeof(word)), sizeof(word));
	close(fds[0]);
	if (word) {
		assert_int_equal(procfs__nspid((pid_t)word), 1);
		kill((pid_t)word, SIGKILL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!word)
		skip();	/* no CAP_SYS_ADMIN: no PID namespace to look into */
}

#define CONTAINER_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char cgroup_dir[PATH_MAX];
static struct child cgroup_child;

static int cgroup_teardown(void **state)
{
	reap(&cgroup_child);
	if (cgroup_dir[0])
		rmdir(cgroup_dir);
	cgroup_dir[0] = '\0';
	return 0;
}

/* Puts a child in a cgroup named as Docker names a container's ("docker-<id>.scope"),
 * in whichever hierarchy lets us make one, and reads its container back. */
static void test_container(void **state)
{
	static const char *const roots[] = { "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified",
					      "/sys/fs/cgroup", NULL };
	char buf[64], path[PATH_MAX + 32];
	FILE *fp;

	procfs__container(NO_PID, buf, sizeof(buf));
	assert_string_equal(buf, "");
	for (const char *const *r = roots; *r && !cgroup_dir[0]; r++) {
		snprintf(cgroup_dir, sizeof(cgroup_dir), "%s/kiln-test-%d-docker-%s.scope", *r,
			 (int)getpid(), CONTAINER_ID);
		if (mkdir(cgroup_dir, 0755) < 0)
			cgroup_dir[0] = '\0';
	}
	if (!cgroup_dir[0])
		skip();	/* no cgroup hierarchy we may write to */
	cgroup_child = spawn(NULL);
	procfs__container(cgroup_child.pid, buf, sizeof(buf));
	assert_string_equal(buf, "");	/* not yet in it */
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%d\n", (int)cgroup_child.pid);
	assert_int_equal(fclose(fp), 0);
	procfs__container(cgroup_child.pid, buf, sizeof(buf));
	assert_string_equal(buf, "0123456789ab");
	procfs__container(cgroup_child.pid, buf, 5);
	assert_string_equal(buf, "0123");
}

struct maps_seen {
	int n;
	uint64_t last_start;
	bool ordered, all_exec;
	uint64_t want;		/* an address to find */
	char path[PATH_MAX];	/* of the mapping holding it */
	uint64_t start;
};

static void on_map(void *ctx, const struct mapping *m)
{
	struct maps_seen *w = ctx;

	if (w->n && m->start < w->last_start)
		w->ordered = false;
	if (!(m->prot & PROT_EXEC) || m->end <= m->start || !m->path || !m->path[0])
		w->all_exec = false;
	w->last_start = m->start;
	w->n++;
	if (w->want >= m->start && w->want < m->end) {
		snprintf(w->path, sizeof(w->path), "%s", m->path);
		w->start = m->start;
	}
}

static void test_maps_self(void **state)
{
	struct maps_seen w = { .ordered = true, .all_exec = true };
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int ret;

	assert_true(n > 0);
	exe[n] = '\0';
	w.want = (uint64_t)(uintptr_t)&test_maps_self;
	ret = procfs__maps(getpid(), on_map, &w);
	assert_true(ret >= 2);	/* this binary and the C library at least */
	assert_int_equal(ret, w.n);
	assert_true(w.ordered);
	assert_true(w.all_exec);
	assert_string_equal(w.path, exe);
	assert_int_equal(procfs__maps(NO_PID, on_map, &w), -ENOENT);
}

/* Anonymous executable memory, as a JIT makes it. */
static uint64_t map_code(void)
{
	void *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p;
}

static void test_maps_child(void **state)
{
	struct maps_seen w = { .ordered = true, .all_exec = true };
	struct child c = spawn(map_code);

	assert_true(c.word != 0);
	w.want = c.word + 4096;
	assert_true(procfs__maps(c.pid, on_map, &w) > 0);
	reap(&c);
	assert_true(w.ordered);
	assert_true(w.all_exec);
	assert_int_equal(w.start, c.word);
	assert_string_equal(w.path, "//anon");
	/* gone: an error, no callback */
	w.n = 0;
	assert_true(procfs__maps(c.pid, on_map, &w) < 0);
	assert_int_equal(w.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_nspid),
		cmocka_unit_test_teardown(test_container, cgroup_teardown),
		cmocka_unit_test(test_maps_self),
		cmocka_unit_test(test_maps_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
