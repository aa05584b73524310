/* HotSpot's attach protocol as kiln speaks it, against a fake JVM: a child that does what
 * HotSpot's attach listener does (on SIGQUIT, when .attach_pid<pid> exists, listen on
 * /tmp/.java_pid<pid>, read one "1\0cmd\0a1\0a2\0a3\0" request, answer) with the replies
 * of JDK 8, 9+ and 21+, a refusal, a JVM still starting, garbage and silence, and one
 * that never starts its listener. No JVM is needed; finding real JVMs is left to the e2e
 * tests (java_*.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtimes/java_attach.h"

#define REQ_MAX 1024

static volatile sig_atomic_t quit_seen;

static void on_quit(int sig)
{
	quit_seen = 1;
}

/* What the fake JVM tells the test, through a pipe, after its one connection. */
struct report {
	bool trigger_seen;	/* .attach_pid<pid> existed when SIGQUIT came */
	size_t req_len;
	char req[REQ_MAX];
};

static bool trigger_exists(void)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), ".attach_pid%d", (int)getpid());
	if (stat(path, &st) == 0)
		return true;
	snprintf(path, sizeof(path), "/tmp/.attach_pid%d", (int)getpid());
	return stat(path, &st) == 0;
}

/* The child: answers one request with reply (reply_len bytes), or never listens. */
static void fake_jvm(int ready_fd, int report_fd, const char *reply, size_t reply_len,
		     bool listens)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct report r = { 0 };
	int srv, fd, nuls = 0;

	signal(SIGQUIT, listens ? on_quit : SIG_IGN);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	while (!quit_seen)
		usleep(1000);	/* killed by the test when it never comes */
	r.trigger_seen = trigger_exists();
	/* as HotSpot does: bound under a temporary name and renamed once it listens, so a
	 * client never finds the socket before it takes connections */
	char sock[64];
	snprintf(sock, sizeof(sock), "/tmp/.java_pid%d", (int)getpid());
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.tmp", sock);
	srv = socket(AF_UNIX, SOCK_STREAM, 0);
	if (srv < 0 || bind(srv, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(srv, 1) < 0 ||
	    rename(addr.sun_path, sock) < 0)
		_exit(2);
	fd = accept(srv, NULL, NULL);
	if (fd < 0)
		_exit(3);
	while (nuls < 5 && r.req_len < sizeof(r.req)) {
		ssize_t n = read(fd, r.req + r.req_len, 1);
		if (n <= 0)
			break;
		nuls += r.req[r.req_len++] == '\0';
	}
	if (reply_len && write(fd, reply, reply_len) != (ssize_t)reply_len)
		_exit(4);
	close(fd);
	close(srv);
	unlink(sock);
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(5);
	_exit(0);
}

/* Generous: the attach is a few ms, but a machine at a load of 15 once took over 5 s. */
#define ATTACH_MS 30000

struct fake {
	pid_t pid;
	int report_fd;
};

static struct fake start_fake(const char *reply, bool listens)
{
	struct fake f;
	int ready[2], report[2];
	char c;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(report), 0);
	f.pid = fork();
	assert_true(f.pid >= 0);
	if (f.pid == 0) {
		/* a failed assertion ends the test without reaping us: go with it rather than
		 * wait in accept() forever, holding the runner's output open */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* and end when the attach failed in a way that left us waiting (in accept(), a
		 * read): the test's read of our report then fails instead of waiting with us */
		alarm(2 * ATTACH_MS / 1000);
		close(ready[0]);
		close(report[0]);
		fake_jvm(ready[1], report[1], reply, reply ? strlen(reply) : 0, listens);
	}
	close(ready[1]);
	close(report[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);	/* its SIGQUIT handler is in place */
	close(ready[0]);
	f.report_fd = report[0];
	return f;
}

static struct jvm_target target_of(const struct fake *f)
{
	struct jvm_target t = { .pid = f->pid, .nspid = f->pid, .uid = geteuid(),
				.gid = getegid(), .sigquit_caught = true };
	return t;
}

/* Loads through the fake, checks the request it got, and returns load's result. */
static int load_via(const char *reply, char *reason)
{
	static const char want[] = "1\0load\0/opt/libkiln-jvm.so\0true\0interval=9\0";
	struct fake f = start_fake(reply, true);
	struct jvm_target t = target_of(&f);
	struct report r = { 0 };
	char sock[64];
	int ret, status;

	reason[0] = '\0';
	ret = jvm_target__load(&t, "/opt/libkiln-jvm.so", "interval=9", ATTACH_MS, reason);
	if (ret == -ETIMEDOUT)
		kill(f.pid, SIGKILL);	/* so the read below fails instead of waiting forever */
	assert_int_equal(read(f.report_fd, &r, sizeof(r)), sizeof(r));
	close(f.report_fd);
	assert_int_equal(waitpid(f.pid, &status, 0), f.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(r.trigger_seen);
	assert_int_equal(r.req_len, sizeof(want) - 1);
	assert_memory_equal(r.req, want, sizeof(want) - 1);
	/* the trigger file (in the JVM's cwd, which is ours) is removed once it listens */
	snprintf(sock, sizeof(sock), ".attach_pid%d", (int)f.pid);
	assert_int_not_equal(access(sock, F_OK), 0);
	snprintf(sock, sizeof(sock), "/tmp/.attach_pid%d", (int)f.pid);
	assert_int_not_equal(access(sock, F_OK), 0);
	return ret;
}

static void test_load_accepted(void **state)
{
	char reason[JVM_REASON_MAX];

	assert_int_equal(load_via("0\nreturn code: 0\n", reason), 0);	/* JDK 9+ */
	assert_int_equal(load_via("0\n0\n", reason), 0);			/* JDK 8 */
	assert_int_equal(load_via("0\n", reason), 0);			/* JDK 21+ */
}

static void test_load_refused(void **state)
{
	char reason[JVM_REASON_MAX];

	assert_int_equal(load_via("0\nreturn code: 100\n", reason), -EPROTO);
	assert_non_null(strstr(reason, "JVM refused the agent: return code: 100"));
	assert_int_equal(load_via("0\nAgent_OnAttach failed\n", reason), -EPROTO);	/* 21+ */
	assert_non_null(strstr(reason, "Agent_OnAttach failed"));
	assert_int_equal(load_via("100\nNo such file\n", reason), -EPROTO);
	assert_int_equal(load_via("0\nreturn code: 75\n", reason), -EAGAIN);	/* not live */
	assert_non_null(strstr(reason, "starting up"));
	assert_int_equal(load_via("0\nNot in live phase\n", reason), -EAGAIN);
	assert_int_equal(load_via("hello\n", reason), -EPROTO);
	assert_non_null(strstr(reason, "unexpected reply from the JVM: 'hello"));
	assert_int_equal(load_via(NULL, reason), -EPROTO);	/* closes without a word */
	assert_non_null(strstr(reason, "no reply from the JVM"));
}

static void test_command_reply(void **state)
{
	static const char want[] = "1\0jcmd\0a\0\0c\0";	/* a NULL argument is empty */
	const char *args[3] = { "a", NULL, "c" };
	struct fake f = start_fake("0\nline one\nline two\n", true);
	struct jvm_target t = target_of(&f);
	char reply[16], reason[JVM_REASON_MAX] = "";
	struct report r;
	int status;

	int ret = jvm_target__command(&t, "jcmd", args, ATTACH_MS, reply, sizeof(reply), reason);
	if (ret)
		kill(f.pid, SIGKILL);
	assert_int_equal(ret, 0);
	assert_string_equal(reply, "line one\nline t");	/* cut to the buffer */
	assert_int_equal(read(f.report_fd, &r, sizeof(r)), sizeof(r));
	close(f.report_fd);
	waitpid(f.pid, &status, 0);
	assert_int_equal(r.req_len, sizeof(want) - 1);
	assert_memory_equal(r.req, want, sizeof(want) - 1);
}

static void test_no_listener(void **state)
{
	struct fake f = start_fake(NULL, false);	/* ignores SIGQUIT */
	struct jvm_target t = target_of(&f);
	char reason[JVM_REASON_MAX] = "";
	int status;

	t.sigquit_caught = false;	/* SIGQUIT would kill it: not sent */
	assert_int_equal(jvm_target__load(&t, "/x.so", "", 200, reason), -EAGAIN);
	assert_non_null(strstr(reason, "SIGQUIT"));
	t.sigquit_caught = true;
	assert_int_equal(jvm_target__load(&t, "/x.so", "", 200, reason), -ETIMEDOUT);
	assert_non_null(strstr(reason, "did not start its attach listener in 200 ms"));
	kill(f.pid, SIGKILL);
	waitpid(f.pid, &status, 0);
	close(f.report_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_accepted),
		cmocka_unit_test(test_load_refused),
		cmocka_unit_test(test_command_reply),
		cmocka_unit_test(test_no_listener),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
