/* The kiln side of the agent's stacks file (src/jvm/protocol.h): parsing it into a
 * java_result and mapping the JVM's thread ids to host ids (the replace merge itself is
 * runtimes/runtime.c's). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/protocol.h"
#include "runtimes/java_stacks.h"
#include "util/strbuf.h"

#define MAX_FRAMES 1024

static pid_t host_tid(pid_t pid, pid_t nspid_tid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	DIR *d;
	struct dirent *e;
	pid_t found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char status[320], *p;
		if (e->d_name[0] == '.')
			continue;
		snprintf(status, sizeof(status), "/proc/%d/task/%s/status", (int)pid, e->d_name);
		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, status) < 0 || !(p = strstr(sb.buf, "\nNSpid:")))
			continue;
		p[strcspn(p + 1, "\n") + 1] = '\0';
		char *last = strrchr(p, '\t');
		if (last && strtol(last + 1, NULL, 10) == nspid_tid)
			found = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	strbuf_release(&sb);
	return found;
}

static void parse_tids(struct java_result *r, const char *line, pid_t nspid)
{
	const char *p = line + strlen(KILN_JVM_TIDS);
	size_t cap = 0;

	while (*p == ' ') {
		char *end;
		long tid = strtol(p + 1, &end, 10);
		if (end == p + 1 || tid <= 0)
			break;
		p = end;
		pid_t host = nspid == r->pid ? (pid_t)tid : host_tid(r->pid, (pid_t)tid);
		if (!host)
			continue;
		if (r->nr_tids == cap) {
			cap = cap ? cap * 2 : 16;
			r->tids = xrealloc(r->tids, cap * sizeof(*r->tids));
		}
		r->tids[r->nr_tids++] = host;
	}
}

static void parse_stack(struct java_result *r, char *line)
{
	uint32_t frames[MAX_FRAMES];
	uint32_t depth = 0;
	char *sp = strrchr(line, ' '), *end, *f;
	unsigned long long count;

	if (!sp || sp == line || sp[1] < '0' || sp[1] > '9')
		return;
	count = strtoull(sp + 1, &end, 10);
	if (end == sp + 1 || *end || count == 0)
		return;
	*sp = '\0';
	for (f = line; f && depth < MAX_FRAMES;) {
		char *semi = strchr(f, ';');
		size_t len = semi ? (size_t)(semi - f) : strlen(f);
		if (len)
			frames[depth++] = profile__intern(r->stacks, f, len);
		f = semi ? semi + 1 : NULL;
	}
	if (!depth)
		return;
	profile__add(r->stacks, frames, depth, count);
	r->samples += count;
}

int java_stacks__parse(struct java_result *r, char *text, pid_t nspid, uint64_t *seq)
{
	unsigned long long s = 0;
	char *line, *next;

	if (strncmp(text, KILN_JVM_HEADER, strlen(KILN_JVM_HEADER)) ||
	    sscanf(text + strlen(KILN_JVM_HEADER), "seq=%llu", &s) != 1)
		return -EPROTO;
	*seq = s;
	line = strchr(text, '\n');
	if (line)
		*line = '\0';
	const char *f = strstr(text, " lost=");
	if (f)
		r->lost = strtoull(f + 6, NULL, 10);
	f = strstr(text, " writer_cpu_us=");
	if (f)
		r->agent_cpu_us = strtoull(f + 15, NULL, 10);
	if (line)
		*line = '\n';
	if (!r->stacks)
		r->stacks = profile__new();
	for (line = strchr(text, '\n'); line; line = next) {
		line++;
		next = strchr(line, '\n');
		if (next)
			*next = '\0';
		else if (!*line)
			break;
		if (!strncmp(line, KILN_JVM_TIDS, strlen(KILN_JVM_TIDS)))
			parse_tids(r, line, nspid);
		else if (line[0] != '#')
			parse_stack(r, line);
	}
	return 0;
}

void java_result_release(struct java_result *r)
{
	profile__free(r->stacks);
	free(r->tids);
	memset(r, 0, sizeof(*r));
}

static struct runtime_stacks view(const struct java_result *r)
{
	return (struct runtime_stacks){ .pid = r->pid, .skip_reason = r->skip_reason,
					.stacks = r->stacks, .samples = r->samples,
					.tids = r->tids, .nr_tids = r->nr_tids };
}

bool java_result__has_tid(const struct java_result *r, pid_t tid)
{
	struct runtime_stacks v = view(r);

	return runtime_stacks__has_tid(&v, tid);
}

uint64_t java_result__merge(const struct java_result *r, struct profile *dst,
			    const char *const *prefix, size_t nr_prefix, uint64_t total)
{
	struct runtime_stacks v = view(r);

	return runtime_stacks__merge(&v, dst, prefix, nr_prefix, 0, total);
}
