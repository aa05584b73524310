/* HotSpot dynamic attach in C: see java_attach.h for the protocol. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "jvm/protocol.h"
#include "runtimes/inject.h"
#include "runtimes/java_attach.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/log.h"
#include "util/strbuf.h"

static bool is_java_name(const char *s)
{
	return !strcmp(s, "java");
}

/* 0 not a JVM, 1 HotSpot, 2 OpenJ9 */
static int jvm_kind(pid_t pid)
{
	char path[64], line[512];
	int kind = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "/libjvm.so")) {
			kind = 1;
			break;
		}
		if (strstr(line, "/libj9vm")) {
			kind = 2;
			break;
		}
	}
	fclose(f);
	return kind;
}

static bool looks_like_java(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			if (is_java_name(buf))
				return true;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *base = strrchr(buf, '/');
	return is_java_name(base ? base + 1 : buf);
}

bool jvm__is_jvm_lib(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "libjvm.so") || !strncmp(base, "libj9vm", 7);
}

int jvm__check(pid_t pid)
{
	if (jvm_kind(pid))
		return 1;
	return looks_like_java(pid) ? -EAGAIN : 0;
}

int jvm__list(pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (jvm__check((pid_t)pid) <= 0)
			continue;
		if (n < max)
			pids[n] = (pid_t)pid;
		n++;
	}
	closedir(d);
	return (int)n;
}

/* Whether one of pid's threads is called name (comm, at most 15 characters). */
static bool has_thread(pid_t pid, const char *name)
{
	char path[96], buf[32];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		ssize_t n;
		int fd;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		found = !strcmp(buf, name);
	}
	closedir(d);
	return found;
}

static bool cmdline_has(pid_t pid, const char *opt)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64];
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (strbuf_read_file(&sb, path) == 0) {
		for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
			if (!strcmp(sb.buf + i, opt))
				found = true;
	}
	strbuf_release(&sb);
	return found;
}

static ino_t mntns_of(const char *pid)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	return stat(path, &st) < 0 ? 0 : st.st_ino;
}

int jvm_target__probe(pid_t pid, struct jvm_target *t, char *reason)
{
	char path[64], line[256], self[32];
	unsigned long long sigcgt = 0;
	bool have_ids = false;
	int kind;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->pid = t->nspid = pid;
	kind = jvm_kind(pid);
	if (!kind)
		return -ENOENT;
	if (kind == 2) {
		errmsg(reason, JVM_REASON_MAX, "OpenJ9 JVM is not supported");
		return -ENOTSUP;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		if (sscanf(line, "Uid: %u %u", &a, &b) == 2) {
			t->uid = b;
			have_ids = true;
		} else if (sscanf(line, "Gid: %u %u", &a, &b) == 2) {
			t->gid = b;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* the last field is the pid in the innermost namespace */
			char *last = strrchr(line, '\t');
			if (!last)
				last = line + 5;
			t->nspid = (pid_t)strtol(last + 1, NULL, 10);
		} else if (sscanf(line, "SigCgt: %llx", &sigcgt) == 1) {
			t->sigquit_caught = sigcgt & (1ull << (SIGQUIT - 1));
		}
	}
	fclose(f);
	if (!have_ids || t->nspid <= 0)
		return -ENOENT;
	/* A process that only maps libjvm.so (a JNI host, a launcher of another name) may
	 * catch SIGQUIT itself, for its own reasons, with the JVM's signal handling off
	 * (-Xrs): it gets the signal only once HotSpot's Signal Dispatcher thread, which
	 * answers it by starting the attach listener, exists. (JDK 8 does not name its
	 * threads: there, only a process called java is signalled, as before.) */
	if (t->sigquit_caught && !looks_like_java(pid) && !has_thread(pid, "Signal Dispatch"))
		t->sigquit_caught = false;
	if (cmdline_has(pid, "-XX:+DisableAttachMechanism")) {
		errmsg(reason, JVM_REASON_MAX, "JVM runs with -XX:+DisableAttachMechanism");
		return -ENOTSUP;
	}
	snprintf(self, sizeof(self), "%d", (int)getpid());
	snprintf(path, sizeof(path), "%d", (int)pid);
	t->other_mntns = mntns_of(self) != mntns_of(path);
	return 0;
}

int jvm_target__place_lib(const struct jvm_target *t, const char *lib, char *out, size_t size)
{
	if (!t->other_mntns) {
		snprintf(out, size, "%s", lib);
		return 0;
	}
	return inject__copy_into_root(t->pid, lib, "libkiln-jvm", out, size);
}

static bool is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Creates .attach_pid<nspid> where HotSpot looks (cwd, then /tmp) and sends SIGQUIT;
 * waits for the socket. */
static int start_listener(const struct jvm_target *t, const char *sock, int timeout_ms,
			  char *reason)
{
	char trigger[PATH_MAX];
	int fd, waited = 0, step = 20;

	if (!t->sigquit_caught) {
		/* SIGQUIT would kill a JVM that has not installed its handler yet (or -Xrs) */
		errmsg(reason, JVM_REASON_MAX, "JVM does not handle SIGQUIT (starting up, or -Xrs)");
		return -EAGAIN;
	}
	snprintf(trigger, sizeof(trigger), "/proc/%d/cwd/.attach_pid%d", (int)t->pid,
		 (int)t->nspid);
	fd = open(trigger, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(trigger, sizeof(trigger), "/proc/%d/root/tmp/.attach_pid%d", (int)t->pid,
			 (int)t->nspid);
		fd = open(trigger, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		int err = -errno;
		errmsg(reason, JVM_REASON_MAX, "failed to create '%s': %s", trigger, strerror(-err));
		return err;
	}
	if (geteuid() == 0 && fchown(fd, t->uid, t->gid) < 0)
		log_debug("failed to chown '%s': %s", trigger, strerror(errno));
	close(fd);
	if (kill(t->pid, SIGQUIT) < 0) {
		int err = -errno;
		unlink(trigger);
		errmsg(reason, JVM_REASON_MAX, "failed to signal the JVM: %s", strerror(-err));
		return err;
	}
	while (!is_socket(sock) && waited < timeout_ms) {
		clock__sleep_ms(step);
		waited += step;
		if (step < 200)
			step *= 2;
	}
	unlink(trigger);
	if (!is_socket(sock)) {
		errmsg(reason, JVM_REASON_MAX, "JVM did not start its attach listener in %d ms",
		       timeout_ms);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Connects as the JVM's user: HotSpot accepts only clients with its euid/egid (or root,
 * on newer JDKs). setresuid/setresgid as raw syscalls change only this thread. */
static int connect_as(const struct jvm_target *t, const char *sock)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	bool switched = geteuid() == 0 && t->uid != 0;
	int fd, err = 0;

	if (strlen(sock) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (switched && (syscall(SYS_setresgid, -1, t->gid, -1) < 0 ||
			 syscall(SYS_setresuid, -1, t->uid, -1) < 0))
		switched = false;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		err = -errno;
	if (switched) {
		syscall(SYS_setresuid, -1, 0, -1);
		syscall(SYS_setresgid, -1, 0, -1);
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int jvm_target__command(const struct jvm_target *t, const char *cmd, const char *const args[3],
			int timeout_ms, char *reply, size_t reply_size, char *reason)
{
	char sock[PATH_MAX];
	struct strbuf req = STRBUF_INIT, resp = STRBUF_INIT;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, err, code;

	snprintf(sock, sizeof(sock), "/proc/%d/root/tmp/.java_pid%d", (int)t->pid, (int)t->nspid);
	if (!is_socket(sock)) {
		err = start_listener(t, sock, timeout_ms, reason);
		if (err < 0)
			return err;
	}
	fd = connect_as(t, sock);
	if (fd < 0) {
		errmsg(reason, JVM_REASON_MAX, "failed to connect to '%s': %s", sock, strerror(-fd));
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	strbuf_add(&req, "1", 2);
	strbuf_add(&req, cmd, strlen(cmd) + 1);
	for (int i = 0; i < 3; i++) {
		const char *a = args && args[i] ? args[i] : "";
		strbuf_add(&req, a, strlen(a) + 1);
	}
	err = 0;
	for (size_t off = 0; off < req.len;) {
		ssize_t n = send(fd, req.buf + off, req.len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (!err)
		err = strbuf_read_fd(&resp, fd);
	close(fd);
	strbuf_release(&req);
	if (err < 0 || resp.len == 0) {
		if (!err)
			err = -EPROTO;
		errmsg(reason, JVM_REASON_MAX, "no reply from the JVM: %s", strerror(-err));
		strbuf_release(&resp);
		return err;
	}
	char *end;
	code = (int)strtol(resp.buf, &end, 10);
	if (end == resp.buf) {
		errmsg(reason, JVM_REASON_MAX, "unexpected reply from the JVM: '%.60s'", resp.buf);
		strbuf_release(&resp);
		return -EPROTO;
	}
	if (*end == '\n')
		end++;
	if (reply && reply_size)
		snprintf(reply, reply_size, "%s", end);
	strbuf_release(&resp);
	return code < 0 ? 1 : code;
}

int jvm_target__load(const struct jvm_target *t, const char *lib, const char *options,
		     int timeout_ms, char *reason)
{
	const char *args[3] = { lib, "true", options };
	char reply[512] = "", *p;
	int code;

	code = jvm_target__command(t, "load", args, timeout_ms, reply, sizeof(reply), reason);
	if (code < 0)
		return code;
	reply[strcspn(reply, "\n")] = '\0';
	/* JDK 9+: "return code: N"; JDK 8: a bare N; JDK 21+ answers 0 and, on failure, a
	 * message instead. */
	p = strstr(reply, "return code: ");
	if (p)
		p += strlen("return code: ");
	else if (reply[0] == '-' || (reply[0] >= '0' && reply[0] <= '9'))
		p = reply;
	if (code == 0 && ((p && atoi(p) == 0) || (!p && reply[0] == '\0')))
		return 0;
	if (strstr(reply, "live phase") || (p && atoi(p) == KILN_JVM_RC_NOT_LIVE)) {	/* the JVM is still starting: try again */
		errmsg(reason, JVM_REASON_MAX, "JVM is starting up");
		return -EAGAIN;
	}
	errmsg(reason, JVM_REASON_MAX, "JVM refused the agent: %s",
	       reply[0] ? reply : "no message");
	return -EPROTO;
}
