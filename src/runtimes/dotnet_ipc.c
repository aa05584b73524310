/* The diagnostics IPC client (dotnet_ipc.h). A message is a 20-byte header {magic
 * "DOTNET_IPC_V1\0", u16 size of header and payload, u8 command set, u8 command id, u16
 * 0} and a payload, little-endian; strings are u32 UTF-16 units with the NUL, then
 * UTF-16LE. Replies are set 0xff: id 0 OK, id 0xff Error with an HRESULT. */
#include "runtimes/dotnet_ipc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/procfs.h"
#include "util/strbuf.h"

static const char ipc_magic[14] = "DOTNET_IPC_V1";

#define SET_EVENTPIPE 0x02
#define CMD_STOP_TRACING 0x01
#define CMD_COLLECT_TRACING 0x02

/* The process's TMPDIR from its environment, "/tmp" when it has none. */
static void proc_tmpdir(pid_t pid, char *out, size_t size)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;

	snprintf(out, size, "/tmp");
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (strbuf_read_file(&sb, path) >= 0)
		for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
			if (!strncmp(sb.buf + i, "TMPDIR=", 7) && sb.buf[i + 7] == '/')
				snprintf(out, size, "%s", sb.buf + i + 7);
	strbuf_release(&sb);
}

int dotnet_ipc__socket_path(pid_t pid, char *path, size_t size)
{
	char tmp[256], dir[320], prefix[64];
	pid_t nspid = procfs__nspid(pid);
	DIR *d;
	struct dirent *e;
	int ret = -ENOENT;

	proc_tmpdir(pid, tmp, sizeof(tmp));
	snprintf(dir, sizeof(dir), "/proc/%d/root%s", (int)pid, tmp);
	snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-", (int)(nspid > 0 ? nspid : pid));
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || n < 7 ||
		    strcmp(e->d_name + n - 7, "-socket"))
			continue;
		if ((size_t)snprintf(path, size, "%s/%s", dir, e->d_name) < size)
			ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

int dotnet_ipc__connect(pid_t pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[512];
	int fd, err = dotnet_ipc__socket_path(pid, path, sizeof(path));

	if (err)
		return err;
	/* sun_path is short: reach a long path through its directory's fd */
	char *slash = strrchr(path, '/');
	int dfd;
	*slash = '\0';
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, slash + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
	} else if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
	}
	close(dfd);
	return err ? err : fd;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

int dotnet_ipc__send(int fd, uint8_t set, uint8_t id, const void *payload, size_t len,
		     int timeout_ms)
{
	unsigned char *msg;
	size_t total = 20 + len, off = 0;
	int err = 0;

	if (total > UINT16_MAX)
		return -EMSGSIZE;
	msg = xmalloc(total);
	memcpy(msg, ipc_magic, 14);
	msg[14] = (unsigned char)(total & 0xff);
	msg[15] = (unsigned char)(total >> 8);
	msg[16] = set;
	msg[17] = id;
	msg[18] = msg[19] = 0;
	if (len)
		memcpy(msg + 20, payload, len);
	while (!err && off < total) {
		ssize_t n;
		if ((err = wait_fd(fd, POLLOUT, timeout_ms)))
			break;
		n = send(fd, msg + off, total - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			err = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	free(msg);
	return err;
}

long dotnet_ipc__read(int fd, void *buf, size_t cap, int timeout_ms)
{
	int err = wait_fd(fd, POLLIN, timeout_ms);
	ssize_t n;

	if (err)
		return err == -ETIMEDOUT ? -EAGAIN : err;
	n = recv(fd, buf, cap, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
	return n;
}

/* Reads exactly len bytes within timeout_ms in all. */
static int read_full(int fd, unsigned char *buf, size_t len, int timeout_ms)
{
	size_t off = 0;

	while (off < len) {
		long n = dotnet_ipc__read(fd, buf + off, len - off, timeout_ms);
		if (n == -EAGAIN)
			return -ETIMEDOUT;
		if (n < 0)
			return (int)n;
		if (!n)
			return -ECONNRESET;
		off += (size_t)n;
	}
	return 0;
}

int dotnet_ipc__recv_reply(int fd, void *reply, size_t cap, size_t *len, uint32_t *hresult,
			   int timeout_ms)
{
	unsigned char h[20], body[256];
	size_t size;
	int err = read_full(fd, h, sizeof(h), timeout_ms);

	if (err)
		return err;
	size = (size_t)h[14] | (size_t)h[15] << 8;
	if (memcmp(h, ipc_magic, 14) || size < 20 || size - 20 > sizeof(body) || h[16] != 0xff)
		return -EPROTO;
	if ((err = read_full(fd, body, size - 20, timeout_ms)))
		return err;
	size -= 20;
	if (h[17] == 0xff) {
		if (hresult && size >= 4)
			*hresult = (uint32_t)body[0] | (uint32_t)body[1] << 8 |
				   (uint32_t)body[2] << 16 | (uint32_t)body[3] << 24;
		return -EREMOTEIO;
	}
	if (h[17] != 0)
		return -EPROTO;
	if (reply)
		memcpy(reply, body, size < cap ? size : cap);
	if (len)
		*len = size;
	return 0;
}

static void put_le(struct strbuf *sb, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		strbuf_addch(sb, (char)(v >> (8 * i) & 0xff));
}

static void put_string(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);

	put_le(sb, n + 1, 4);
	for (size_t i = 0; i <= n; i++)
		put_le(sb, (unsigned char)s[i], 2);
}

static void put_provider(struct strbuf *sb, uint64_t keywords, uint32_t level, const char *name)
{
	put_le(sb, keywords, 8);
	put_le(sb, level, 4);
	put_string(sb, name);
	put_string(sb, "");
}

int dotnet_ipc__start_session(pid_t pid, int sample, uint64_t *session)
{
	struct strbuf p = STRBUF_INIT;
	unsigned char reply[8];
	size_t len = 0;
	int fd = dotnet_ipc__connect(pid), err;

	if (fd < 0)
		return fd;
	put_le(&p, 16, 4);	/* circular buffer, MB */
	put_le(&p, 1, 4);	/* format: NetTrace */
	put_le(&p, sample ? 2 : 1, 4);
	if (sample)
		put_provider(&p, 0xF00000000000ull, 5, "Microsoft-DotNETCore-SampleProfiler");
	put_provider(&p, 0x10, 5, "Microsoft-Windows-DotNETRuntime");	/* JIT, verbose */
	err = dotnet_ipc__send(fd, SET_EVENTPIPE, CMD_COLLECT_TRACING, p.buf, p.len,
			       DOTNET_IPC_TIMEOUT_MS);
	strbuf_release(&p);
	if (!err)
		err = dotnet_ipc__recv_reply(fd, reply, sizeof(reply), &len, NULL,
					     DOTNET_IPC_TIMEOUT_MS);
	if (!err && len < 8)
		err = -EPROTO;
	if (err) {
		close(fd);
		return err;
	}
	*session = 0;
	for (int i = 0; i < 8; i++)
		*session |= (uint64_t)reply[i] << (8 * i);
	return fd;
}

int dotnet_ipc__stop_session(pid_t pid, uint64_t session)
{
	unsigned char p[8];
	int fd = dotnet_ipc__connect(pid), err;

	if (fd < 0)
		return fd;
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(session >> (8 * i));
	err = dotnet_ipc__send(fd, SET_EVENTPIPE, CMD_STOP_TRACING, p, sizeof(p),
			       DOTNET_IPC_TIMEOUT_MS);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
