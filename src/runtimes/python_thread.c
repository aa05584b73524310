/* Which thread state belongs to which thread (see python_proc.h).
 *
 * 3.11+ thread states carry the thread's native id (its tid in the process's PID
 * namespace). Older ones carry pthread_self(), the address of the C library's thread
 * descriptor, whose tid field is found once per process by looking for the process's
 * known tids in the descriptors (0x2d0 on glibc x86_64 is tried first). */
#include "runtimes/python_proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strbuf.h"

#define MAX_INTERPS 16
#define MAX_THREADS 1024
#define RESCAN_NS 20000000ull	/* at most one full thread walk per 20 ms */
#define PTHREAD_SCAN 0x800	/* bytes of a thread descriptor searched for its tid */
#define GLIBC_TID_OFF 0x2d0

struct tid_pair {
	pid_t host, ns;
};

uint64_t py_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Lists the process's threads with their tids in its own namespace. */
static size_t list_tids(const struct runtime_proc *rp, struct tid_pair *out, size_t max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)rp->pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while (n < max && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid <= 0)
			continue;
		out[n].host = out[n].ns = tid;
		if (rp->pid != rp->nspid) {
			char status[96];
			struct strbuf sb = STRBUF_INIT;
			snprintf(status, sizeof(status), "/proc/%d/task/%d/status", (int)rp->pid, (int)tid);
			if (strbuf_read_file(&sb, status) == 0) {
				const char *l = strstr(sb.buf, "\nNSpid:");
				const char *last = NULL;
				for (const char *q = l ? l + 7 : NULL; q && *q && *q != '\n'; q++)
					if ((*q == ' ' || *q == '\t') && q[1] >= '0' && q[1] <= '9')
						last = q + 1;
				if (last)
					out[n].ns = (pid_t)atoi(last);
			}
			strbuf_release(&sb);
		}
		n++;
	}
	closedir(d);
	return n;
}

static pid_t host_of(const struct tid_pair *t, size_t n, uint64_t ns)
{
	for (size_t i = 0; i < n; i++)
		if ((uint64_t)t[i].ns == ns)
			return t[i].host;
	return 0;
}

/* Finds the offset of the tid in the thread descriptors idents[0..n), which must all
 * hold a tid of the process at the same offset. */
static int find_tid_offset(const struct runtime_proc *rp, const uint64_t *idents, size_t n,
			   const struct tid_pair *t, size_t nt)
{
	uint8_t ok[PTHREAD_SCAN / 4];
	memset(ok, 1, sizeof(ok));
	uint8_t *buf = xmalloc(PTHREAD_SCAN);
	size_t used = 0;
	for (size_t i = 0; i < n && used < 8; i++, used++) {
		if (py_read_all(rp->pid, idents[i], buf, PTHREAD_SCAN) < 0) {
			memset(ok, 0, sizeof(ok));
			break;
		}
		for (size_t o = 0; o < PTHREAD_SCAN / 4; o++) {
			int32_t v;
			memcpy(&v, buf + o * 4, 4);
			ok[o] &= v > 0 && host_of(t, nt, (uint64_t)v) != 0;
		}
	}
	free(buf);
	if (used == 0)
		return -1;
	if (ok[GLIBC_TID_OFF / 4])
		return GLIBC_TID_OFF;
	for (size_t o = 0; o < PTHREAD_SCAN / 4; o++)
		if (ok[o])
			return (int)(o * 4);
	return -1;
}

/* Walks every interpreter's thread states and rebuilds the tid -> thread state map. */
static int rescan(struct runtime_proc *rp)
{
	const struct py_layout *l = &rp->l;
	uint64_t *states = xmalloc(MAX_THREADS * sizeof(*states));
	uint64_t *idents = xmalloc(MAX_THREADS * sizeof(*idents));
	size_t n = 0;
	uint8_t ts[512];
	uint64_t interp = 0;
	int err = py_read_all(rp->pid, rp->interp_head, &interp, 8);
	for (int i = 0; err == 0 && interp && i < MAX_INTERPS; i++) {
		uint8_t is[8];
		if (py_read_all(rp->pid, interp + l->is_tstate_head, is, 8) < 0)
			break;
		uint64_t t = py_rd64(is, 0);
		for (int k = 0; t && n < MAX_THREADS && k < MAX_THREADS; k++) {
			if (py_read_all(rp->pid, t, ts, l->ts_read) < 0 || py_rd64(ts, l->ts_interp) != interp)
				break;
			states[n] = t;
			idents[n] = py_rd64(ts, l->ts_native_tid != PY_NO_FIELD ? l->ts_native_tid : l->ts_thread_id);
			n++;
			t = py_rd64(ts, l->ts_next);
		}
		if (py_read_all(rp->pid, interp + l->is_next, &interp, 8) < 0)
			break;
	}
	struct tid_pair *tids = xmalloc(MAX_THREADS * sizeof(*tids));
	size_t nt = n ? list_tids(rp, tids, MAX_THREADS) : 0;
	if (l->ts_native_tid == PY_NO_FIELD && rp->pthread_tid_off < 0 && n)
		rp->pthread_tid_off = find_tid_offset(rp, idents, n, tids, nt);
	py_thread__clear(rp);
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = idents[i];
		if (l->ts_native_tid == PY_NO_FIELD) {
			int32_t v = 0;
			if (rp->pthread_tid_off < 0 ||
			    py_read_all(rp->pid, idents[i] + (uint64_t)rp->pthread_tid_off, &v, 4) < 0)
				continue;
			ns = (uint64_t)v;
		}
		pid_t host = host_of(tids, nt, ns);
		if (!host)
			continue;
		bool created;
		void **slot = hashmap__insert(rp->threads, &host, sizeof(host), &created);
		struct py_thread *pt = created ? xcalloc(1, sizeof(*pt)) : *slot;
		if (pt->tstate != states[i])
			pt->nr_chain = 0;
		pt->tstate = states[i];
		pt->ident = idents[i];
		*slot = pt;
	}
	free(tids);
	free(states);
	free(idents);
	return err;
}

void py_thread__clear(struct runtime_proc *rp)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *value;
	while (hashmap__next(rp->threads, &it, &key, &len, &value))
		free(value);
	hashmap__clear(rp->threads);
}

struct py_thread *py_thread__find(struct runtime_proc *rp, pid_t tid)
{
	void **slot = hashmap__find(rp->threads, &tid, sizeof(tid));
	return slot ? *slot : NULL;
}

/* Reads the cached thread state of tid and checks it still belongs to tid. */
static int cached(struct runtime_proc *rp, pid_t tid, uint8_t *ts, struct py_thread **out)
{
	void **slot = hashmap__find(rp->threads, &tid, sizeof(tid));
	if (!slot)
		return -ESRCH;
	struct py_thread *pt = *slot;
	*out = pt;
	const struct py_layout *l = &rp->l;
	if (py_read_all(rp->pid, pt->tstate, ts, l->ts_read) < 0)
		return -ESTALE;
	uint64_t ident = py_rd64(ts, l->ts_native_tid != PY_NO_FIELD ? l->ts_native_tid : l->ts_thread_id);
	return ident == pt->ident ? 0 : -ESTALE;
}

int py_thread__state(struct runtime_proc *rp, pid_t tid, uint8_t *ts, struct py_thread **pt)
{
	int err = cached(rp, tid, ts, pt);
	if (err == 0)
		return 0;
	uint64_t now = py_now_ns();
	if (rp->last_scan_ns && now - rp->last_scan_ns < RESCAN_NS)
		return -ESRCH;
	rp->last_scan_ns = now;
	err = rescan(rp);
	if (err < 0)
		return err;
	return cached(rp, tid, ts, pt) == 0 ? 0 : -ESRCH;
}
