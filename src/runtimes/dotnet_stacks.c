/* The names of a .NET process's JIT-compiled methods and its threads' samples
 * (dotnet.h): the part of the .NET runtime that does not talk to the process. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/dotnet.h"

#define MAX_DEPTH 1024

struct dotnet_method {
	uint64_t start;
	uint32_t size;
	char *name;
};

void dotnet_methods_init(struct dotnet_methods *m)
{
	memset(m, 0, sizeof(*m));
}

void dotnet_methods_release(struct dotnet_methods *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

void dotnet_methods__add(struct dotnet_methods *m, const struct nettrace_method *nm)
{
	struct strbuf sb = STRBUF_INIT;

	if (nm->ns[0])
		strbuf_addf(&sb, "%s.", nm->ns);
	strbuf_addstr(&sb, nm->name);
	if (m->nr == m->alloc) {
		m->alloc = m->alloc ? 2 * m->alloc : 256;
		m->v = xrealloc(m->v, m->alloc * sizeof(*m->v));
	}
	m->v[m->nr++] = (struct dotnet_method){ nm->start, nm->size, strbuf_detach(&sb, NULL) };
	m->sorted = false;
}

/* By start; of equal starts the later load first (it replaces the earlier). */
static int by_start(const void *a, const void *b)
{
	const struct dotnet_method *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x < y ? 1 : -1;
}

static void methods_sort(struct dotnet_methods *m)
{
	size_t n = 0;

	qsort(m->v, m->nr, sizeof(*m->v), by_start);
	for (size_t i = 0; i < m->nr; i++) {
		if (n && m->v[n - 1].start == m->v[i].start) {
			free(m->v[i].name);
			continue;
		}
		m->v[n++] = m->v[i];
	}
	m->nr = n;
	m->sorted = true;
}

const char *dotnet_methods__find(struct dotnet_methods *m, uint64_t ip)
{
	size_t lo = 0, hi;

	if (!m->sorted)
		methods_sort(m);
	hi = m->nr;
	while (lo < hi) {	/* the first start > ip */
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip - m->v[lo - 1].start >= m->v[lo - 1].size)
		return NULL;
	return m->v[lo - 1].name;
}

void dotnet_threads__add(struct dotnet_thread **threads, size_t *nr,
			 const struct nettrace_sample *s)
{
	char bufs[64][20];
	const char *names[64];
	struct dotnet_thread *t = NULL;
	uint32_t n = s->nr_ips < 64 ? s->nr_ips : 64;	/* the 64 innermost frames */
	char **heap = NULL;
	const char **hnames = names;

	if (!s->nr_ips || s->tid > INT32_MAX)
		return;
	for (size_t i = 0; i < *nr && !t; i++)
		if ((*threads)[i].nstid == (pid_t)s->tid)
			t = &(*threads)[i];
	if (!t) {
		*threads = xrealloc(*threads, (*nr + 1) * sizeof(**threads));
		t = &(*threads)[(*nr)++];
		*t = (struct dotnet_thread){ .nstid = (pid_t)s->tid, .raw = profile__new() };
	}
	if (s->nr_ips > 64) {	/* deep stacks: all of them */
		n = s->nr_ips < MAX_DEPTH ? s->nr_ips : MAX_DEPTH;
		heap = xcalloc(n, sizeof(*heap));
		hnames = xcalloc(n, sizeof(*hnames));
	}
	for (uint32_t i = 0; i < n; i++) {	/* root first */
		uint64_t ip = s->ips[s->nr_ips - 1 - i];
		if (heap) {
			heap[i] = xmalloc(20);
			snprintf(heap[i], 20, "%" PRIx64, ip);
			hnames[i] = heap[i];
		} else {
			snprintf(bufs[i], sizeof(bufs[i]), "%" PRIx64, ip);
			names[i] = bufs[i];
		}
	}
	profile__add_names(t->raw, hnames, n, 1);
	t->samples++;
	if (heap) {
		for (uint32_t i = 0; i < n; i++)
			free(heap[i]);
		free(heap);
		free(hnames);
	}
}

uint64_t dotnet_thread__name(struct dotnet_thread *t, struct dotnet_methods *m,
			     struct profile **out)
{
	uint64_t total = 0;
	const char **names = xcalloc(MAX_DEPTH, sizeof(*names));
	char **owned = xcalloc(MAX_DEPTH, sizeof(*owned));

	if (!*out)
		*out = profile__new();
	for (size_t i = 0; i < profile__nr_stacks(t->raw); i++) {
		struct profile_stack st = profile__stack(t->raw, i);
		uint32_t n = 0;
		for (uint32_t k = 0; k < st.depth && k < MAX_DEPTH; k++) {
			uint64_t ip = strtoull(profile__name(t->raw, st.frames[k]), NULL, 16);
			/* return addresses above the leaf: the call is just before */
			const char *name = dotnet_methods__find(m, k + 1 < st.depth ? ip - 1 : ip);
			struct strbuf sb = STRBUF_INIT;
			strbuf_addf(&sb, "%s_[net]", name ? name : "[unknown]");
			if (n && !strcmp(names[n - 1], sb.buf)) {
				if (!name) {	/* runs of stubs: one frame */
					strbuf_release(&sb);
					continue;
				}
			}
			owned[n] = strbuf_detach(&sb, NULL);
			names[n] = owned[n];
			n++;
		}
		profile__add_names(*out, names, n, st.count);
		total += st.count;
		for (uint32_t k = 0; k < n; k++)
			free(owned[k]);
	}
	free(names);
	free(owned);
	profile__free(t->raw);
	t->raw = profile__new();
	t->samples = 0;
	return total;
}

pid_t dotnet__host_tid(pid_t pid, pid_t nspid, pid_t nstid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	DIR *d;
	struct dirent *e;
	pid_t found = -1;

	if (nspid == pid)
		return nstid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while (found < 0 && (e = readdir(d))) {
		char status[320], *p, *last;
		if (e->d_name[0] == '.')
			continue;
		snprintf(status, sizeof(status), "/proc/%d/task/%s/status", (int)pid, e->d_name);
		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, status) < 0 || !(p = strstr(sb.buf, "\nNSpid:")))
			continue;
		p[strcspn(p + 1, "\n") + 1] = '\0';
		last = strrchr(p, '\t');
		if (last && strtol(last + 1, NULL, 10) == nstid)
			found = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	strbuf_release(&sb);
	return found;
}

int dotnet__proc_kind(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	int kind = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (strbuf_read_file(&sb, path) >= 0) {
		if (strstr(sb.buf, "/libcoreclr.so"))
			kind = 1;
		else if (strstr(sb.buf, "/libmonosgen-2.0.so") || strstr(sb.buf, "/libmono-2.0.so") ||
			 strstr(sb.buf, "/mono-sgen\n") || strstr(sb.buf, "/bin/mono\n"))
			kind = 2;
	}
	strbuf_release(&sb);
	return kind;
}

bool dotnet__diagnostics_off(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	bool off = false;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (strbuf_read_file(&sb, path) >= 0)
		for (size_t i = 0; i < sb.len && !off; i += strlen(sb.buf + i) + 1)
			off = !strcmp(sb.buf + i, "DOTNET_EnableDiagnostics=0") ||
			      !strcmp(sb.buf + i, "COMPlus_EnableDiagnostics=0");
	strbuf_release(&sb);
	return off;
}
