#include "agent/procfs.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/strbuf.h"

int procfs__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	ret = strbuf_read_file(&sb, path);
	if (ret == 0) {
		while (sb.len && (sb.buf[sb.len - 1] == '\n'))
			sb.buf[--sb.len] = '\0';
		snprintf(buf, len, "%s", sb.buf);
	}
	strbuf_release(&sb);
	return ret;
}

pid_t procfs__nspid(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	pid_t ns = pid;
	const char *line;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (strbuf_read_file(&sb, path) < 0)
		goto out;
	line = strstr(sb.buf, "\nNSpid:");
	if (!line)
		goto out;
	line += 7;
	for (;;) {
		char *end;
		long v;
		while (*line == ' ' || *line == '\t')
			line++;
		v = strtol(line, &end, 10);
		if (end == line)
			break;
		if (v > 0 && v <= 0x7fffffff)
			ns = (pid_t)v;
		line = end;
	}
out:
	strbuf_release(&sb);
	return ns;
}

/* Finds a run of exactly 64 hex digits in s (a container id). */
static const char *find_container_id(const char *s, const char *end)
{
	for (const char *p = s; p + 64 <= end; p++) {
		int n = 0;
		if (p > s && isxdigit((unsigned char)p[-1]))
			continue;
		while (p + n < end && isxdigit((unsigned char)p[n]))
			n++;
		if (n == 64)
			return p;
		p += n;
	}
	return NULL;
}

static void docker_name(const char *id, char *buf, size_t len)
{
	char path[160];
	json_t *root, *name;

	snprintf(path, sizeof(path), "/var/lib/docker/containers/%.64s/config.v2.json", id);
	root = json_load_file(path, 0, NULL);
	if (!root)
		return;
	name = json_object_get(root, "Name");
	if (json_is_string(name)) {
		const char *n = json_string_value(name);
		if (*n == '/')
			n++;
		if (*n)
			snprintf(buf, len, "%s", n);
	}
	json_decref(root);
}

void procfs__container(pid_t pid, char *buf, size_t len)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	const char *id;

	if (len)
		buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (strbuf_read_file(&sb, path) < 0)
		goto out;
	id = find_container_id(sb.buf, sb.buf + sb.len);
	if (!id)
		goto out;
	snprintf(buf, len, "%.12s", id);
	docker_name(id, buf, len);
out:
	strbuf_release(&sb);
}

int procfs__maps(pid_t pid, void (*fn)(void *ctx, const struct mapping *m), void *ctx)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	char *line, *next;
	int n = 0, ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ret = strbuf_read_file(&sb, path);
	if (ret < 0)
		goto out;
	for (line = sb.buf; *line; line = next) {
		struct mapping m = { 0 };
		char perms[5] = "";
		unsigned maj, min;
		int off = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, &off) < 7)
			continue;
		if (perms[2] != 'x' || m.end <= m.start)
			continue;
		m.maj = maj;
		m.min = min;
		m.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
			 (perms[1] == 'w' ? PROT_WRITE : 0);
		m.path = off ? line + off : "";
		if (!*m.path)
			m.path = "//anon";
		fn(ctx, &m);
		n++;
	}
	ret = n;
out:
	strbuf_release(&sb);
	return ret;
}
