/* The inspector side of --nodejs-mode attach-maps without a node: what nodeinsp__probe
 * lets through (a process that would die of SIGUSR1, one whose inspector or perf map is
 * the user's), nodeinsp__listening on this process's own sockets, and nodeinsp__evaluate
 * against fake targets in network namespaces of their own (so that their 9229 is no other
 * test's): one that opens no port, one whose 9229 is already taken, and one that opens
 * 9229 on SIGUSR1 but answers garbage (the port is then reported as left open). The real
 * exchange with node is tests/e2e/node_attach_maps*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtimes/node_inspector.h"

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	usr1 = 1;
}

static int listen_on(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	memcpy(ifr.ifr_name, "lo", 3);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	err = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return err;
}

enum fake { FAKE_SILENT, FAKE_TAKEN, FAKE_GARBAGE };

/* A child in a network namespace of its own that handles SIGUSR1 as kind says; -1 when
 * namespaces cannot be made here (the caller skips). */
static pid_t fake_target(enum fake kind)
{
	int ready[2];
	char c = 0;

	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGUSR1, on_usr1);
		char ok = unshare(CLONE_NEWNET) == 0 && lo_up() == 0 ? 1 : 0;
		int taken = ok && kind == FAKE_TAKEN ? listen_on(9229) : -1;
		(void)taken;
		if (write(ready[1], &ok, 1) != 1 || !ok)
			_exit(1);
		for (;;) {
			pause();
			if (!usr1 || kind != FAKE_GARBAGE)
				continue;
			int l = listen_on(9229);
			for (;;) {
				char buf[512];
				int s = accept(l, NULL, NULL);
				if (s < 0)
					continue;
				if (read(s, buf, sizeof(buf)) > 0) {
					static const char reply[] = "HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nnot json";
					if (write(s, reply, sizeof(reply) - 1) < 0)
						_exit(1);
				}
				close(s);
			}
		}
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1 || !c) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* a child running sh with argv and envp, that catches SIGUSR1 when trap is set */
static pid_t spawn_sh(bool trap, const char *extra_arg, const char *env)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { "sh", "-c", trap ? "trap : USR1; while :; do sleep 1; done" : "sleep 30",
				 (char *)extra_arg, NULL };
		char *envp[] = { (char *)env, "PATH=/usr/bin:/bin", NULL };
		execve("/bin/sh", argv, env ? envp : envp + 1);
		_exit(127);
	}
	usleep(200 * 1000);	/* until sh has installed its trap */
	return pid;
}

static void test_probe(void **state)
{
	struct nodeinsp_target t;
	char reason[NODEINSP_REASON_MAX] = "";

	assert_int_equal(nodeinsp__probe(999999999, &t, reason), -ENOENT);
	pid_t plain = spawn_sh(false, NULL, NULL);
	assert_int_equal(nodeinsp__probe(plain, &t, reason), -EAGAIN);
	assert_non_null(strstr(reason, "SIGUSR1"));
	reap(plain);
	pid_t ok = spawn_sh(true, NULL, NULL);
	assert_int_equal(nodeinsp__probe(ok, &t, reason), 0);
	assert_int_equal(t.pid, ok);
	assert_false(t.other_netns);
	assert_true(t.same_pidns);
	reap(ok);
	pid_t inspect = spawn_sh(true, "--inspect=0.0.0.0:9230", NULL);
	assert_int_equal(nodeinsp__probe(inspect, &t, reason), -ENOTSUP);
	assert_string_equal(reason, "node runs with --inspect");
	reap(inspect);
	pid_t perf = spawn_sh(true, NULL, "NODE_OPTIONS=--max-old-space-size=100 --perf-basic-prof");
	assert_int_equal(nodeinsp__probe(perf, &t, reason), -ENOTSUP);
	assert_string_equal(reason, "node runs with --perf-basic-prof");
	reap(perf);
}

static void test_listening(void **state)
{
	assert_int_equal(nodeinsp__listening(getpid()), 0);
	int fd = listen_on(0);
	assert_true(fd >= 0);
	assert_int_equal(nodeinsp__listening(getpid()), 1);
	close(fd);
	assert_int_equal(nodeinsp__listening(getpid()), 0);
}

static void evaluate_fake(enum fake kind, int want, const char *reason_has)
{
	struct nodeinsp_target t;
	char reason[NODEINSP_REASON_MAX] = "", value[32] = "x";
	unsigned open_ms = 99;
	pid_t pid = fake_target(kind);

	if (pid < 0)
		skip();	/* no network namespaces here (not root, or a sandbox) */
	assert_int_equal(nodeinsp__probe(pid, &t, reason), 0);
	assert_true(t.other_netns);
	int err = nodeinsp__evaluate(&t, "1 + 1", 300, value, sizeof(value), &open_ms, reason);
	if (err != want)
		fail_msg("evaluate gave %d (%s), not %d", err, reason, want);
	if (!strstr(reason, reason_has))
		fail_msg("reason '%s' does not say '%s'", reason, reason_has);
	assert_int_equal(open_ms, 0);
	assert_int_equal(kill(pid, 0), 0);	/* alive: SIGUSR1 was handled, not fatal */
	reap(pid);
}

static void test_evaluate_silent(void **state)
{
	evaluate_fake(FAKE_SILENT, -ETIMEDOUT, "did not open in 300 ms");
}

static void test_evaluate_taken(void **state)
{
	evaluate_fake(FAKE_TAKEN, -EADDRINUSE, "port 9229 is taken");
}

static void test_evaluate_garbage(void **state)
{
	evaluate_fake(FAKE_GARBAGE, -EBUSY, "no webSocketDebuggerUrl");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_listening),
		cmocka_unit_test(test_evaluate_silent),
		cmocka_unit_test(test_evaluate_taken),
		cmocka_unit_test(test_evaluate_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
