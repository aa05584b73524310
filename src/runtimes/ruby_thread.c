/* Which Ruby thread runs on which OS thread (see ruby_proc.h).
 *
 * The threads of the main ractor (3.0+: ruby_single_main_ractor->threads.set; 2.7: the
 * VM's living_threads) are a list of rb_thread_t, each with its execution context
 * rb_thread_t.ec (which follows the thread's current fiber) and a way to its OS thread:
 * rb_thread_t.tid (3.1), rb_thread_t.nt->tid (3.2+), or the pthread_t of 2.7/3.0, in
 * whose glibc descriptor the tid sits at 0x2d0 (x86_64). tids are the process's own
 * (its PID namespace) and are matched to host tids through /proc/<pid>/task/<tid>/status.
 * The list is walked again at most every RESCAN_NS, when a sampled thread is unknown or
 * ran no Ruby at the last walk; meanwhile an unknown thread that holds the main
 * ractor's lock is found through its running_ec (checked to be that thread's). */
#include "runtimes/ruby_proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strbuf.h"

#define MAX_THREADS 1024
#define RESCAN_NS 20000000ull	/* at most one thread list walk per 20 ms */
#define GLIBC_TID_OFF 0x2d0	/* struct pthread.tid, glibc x86_64 */
#define TH_READ 96		/* bytes of an rb_thread_t read: past ec and tid */

struct tid_pair {
	pid_t host, ns;
};

uint64_t rb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The innermost NSpid of a thread's status text, or 0. */
static pid_t ns_tid(pid_t pid, pid_t tid)
{
	char path[96];
	struct strbuf sb = STRBUF_INIT;
	pid_t ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (strbuf_read_file(&sb, path) == 0) {
		const char *l = strstr(sb.buf, "\nNSpid:"), *last = NULL;
		for (const char *q = l ? l + 7 : NULL; q && *q && *q != '\n'; q++)
			if ((*q == ' ' || *q == '\t') && q[1] >= '0' && q[1] <= '9')
				last = q + 1;
		if (last)
			ns = (pid_t)atoi(last);
	}
	strbuf_release(&sb);
	return ns;
}

/* Lists the process's threads with their tids in its own namespace. */
static size_t list_tids(const struct runtime_proc *rp, struct tid_pair *out, size_t max)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)rp->pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid <= 0)
			continue;
		out[n].host = tid;
		out[n].ns = rp->pid != rp->nspid ? ns_tid(rp->pid, tid) : tid;
		n++;
	}
	closedir(d);
	return n;
}

static pid_t host_of(const struct tid_pair *t, size_t n, int64_t ns)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].ns == ns)
			return t[i].host;
	return 0;
}

/* The OS thread of the rb_thread_t whose first TH_READ bytes are th: its tid in the
 * process's namespace (0 when unreadable) and the identity checked at each read. */
static int64_t thread_tid(const struct runtime_proc *rp, const uint8_t *th, uint64_t *ident)
{
	const struct rb_layout *l = &rp->l;
	int32_t tid = 0;

	switch (l->tid_kind) {
	case RB_TID_THREAD:
		memcpy(&tid, th + l->th_tid, 4);
		*ident = (uint64_t)(uint32_t)tid;
		return tid;
	case RB_TID_NATIVE:
		*ident = rb_rd64(th, l->th_tid);
		return rb_read_all(rp->pid, *ident + l->nt_tid, &tid, 4) < 0 ? 0 : tid;
	case RB_TID_PTHREAD:
		*ident = rb_rd64(th, l->th_tid);
		return rb_read_all(rp->pid, *ident + GLIBC_TID_OFF, &tid, 4) < 0 ? 0 : tid;
	}
	return 0;
}

/* Walks the main ractor's thread list and rebuilds the tid -> thread map. */
static int rescan(struct runtime_proc *rp)
{
	const struct rb_layout *l = &rp->l;
	struct tid_pair *tids = xmalloc(MAX_THREADS * sizeof(*tids));
	size_t nt = list_tids(rp, tids, MAX_THREADS);
	uint64_t owner = 0, node;
	uint8_t th[TH_READ];
	int err = rb_read_all(rp->pid, rp->ractor_var, &owner, 8);

	rb_thread__clear(rp);
	if (err == 0 && !owner)
		err = -ESRCH;	/* the VM is not set up yet, or torn down */
	uint64_t head = owner + l->list_head;
	if (err == 0)
		err = rb_read_all(rp->pid, head, &node, 8);
	for (int k = 0; err == 0 && node && node != head && k < MAX_THREADS; k++) {
		uint64_t addr = node - l->th_node, ident = 0;
		if (rb_read_all(rp->pid, addr, th, sizeof(th)) < 0)
			break;
		pid_t host = host_of(tids, nt, thread_tid(rp, th, &ident));
		if (host) {
			bool created;
			void **slot = hashmap__insert(rp->threads, &host, sizeof(host), &created);
			struct rb_thread *t = created ? xcalloc(1, sizeof(*t)) : *slot;
			t->th = addr;
			t->ident = ident;
			*slot = t;
		}
		node = rb_rd64(th, l->th_node);
	}
	/* the process's other threads are remembered as running no Ruby */
	for (size_t i = 0; err == 0 && i < nt; i++) {
		bool created;
		void **slot = hashmap__insert(rp->threads, &tids[i].host, sizeof(tids[i].host), &created);
		if (created)
			*slot = xcalloc(1, sizeof(struct rb_thread));
	}
	free(tids);
	return err;
}

void rb_thread__clear(struct runtime_proc *rp)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *value;

	while (hashmap__next(rp->threads, &it, &key, &len, &value))
		free(value);
	hashmap__clear(rp->threads);
}

/* Reads the cached thread of tid, and its last execution context's head in the same
 * system call: its ec, when it still belongs to tid. */
static int cached(struct runtime_proc *rp, pid_t tid, uint64_t *ec, uint8_t *head, bool *have)
{
	void **slot = hashmap__find(rp->threads, &tid, sizeof(tid));
	uint8_t th[TH_READ];

	*have = false;
	if (!slot)
		return -ESRCH;
	struct rb_thread *t = *slot;
	if (!t->th)
		return -ENOENT;	/* known, and running no Ruby at the last walk */
	const struct rb_layout *l = &rp->l;
	struct rb_span spans[2] = { { t->th, sizeof(th), th }, { t->ec, RB_EC_READ, head } };
	size_t got = rb_read_spans(rp->pid, spans, t->ec ? 2 : 1);
	if (got < 1)
		return -ESTALE;
	uint64_t ident = l->tid_kind == RB_TID_THREAD ? (uint64_t)(uint32_t)rb_rd64(th, l->th_tid)
						      : rb_rd64(th, l->th_tid);
	if (ident != t->ident)
		return -ESTALE;
	*ec = rb_rd64(th, l->th_ec);
	*have = got == 2 && *ec == t->ec;
	t->ec = *ec;
	return *ec ? 0 : -ESRCH;
}

/* The context that holds the main ractor's lock (ruby_single_main_ractor->running_ec),
 * when its thread is tid: for a thread the list did not give (it was not there at the
 * last walk, and the next is not due yet). Any other thread's stack is refused. */
static int running(struct runtime_proc *rp, pid_t tid, uint64_t *ec)
{
	const struct rb_layout *l = &rp->l;
	uint64_t ractor = 0, th = 0, ident;
	uint8_t buf[TH_READ];

	if (l->ractor_running_ec == RB_NO_FIELD ||
	    rb_read_all(rp->pid, rp->ractor_var, &ractor, 8) < 0 || !ractor ||
	    rb_read_all(rp->pid, ractor + l->ractor_running_ec, ec, 8) < 0 || !*ec ||
	    rb_read_all(rp->pid, *ec + l->ec_thread_ptr, &th, 8) < 0 ||
	    rb_read_all(rp->pid, th, buf, sizeof(buf)) < 0 || rb_rd64(buf, l->th_ec) != *ec)
		return -ESRCH;
	int64_t ns = thread_tid(rp, buf, &ident);
	pid_t want = rp->pid != rp->nspid ? ns_tid(rp->pid, tid) : tid;
	return ns > 0 && ns == want ? 0 : -ESRCH;
}

int rb_thread__ec(struct runtime_proc *rp, pid_t tid, uint64_t *ec, uint8_t *head,
		  bool *have_head)
{
	int known = cached(rp, tid, ec, head, have_head);
	if (known == 0)
		return 0;
	uint64_t now = rb_now_ns();
	/* a thread that ran no Ruby at the last walk (a native one, or one not started
	 * yet) waits for the next walk: it is not worth the running_ec reads */
	if (rp->last_scan_ns && now - rp->last_scan_ns < RESCAN_NS)
		return known == -ENOENT ? -ESRCH : running(rp, tid, ec);
	rp->last_scan_ns = now;
	int err = rescan(rp);
	if (err < 0)
		return running(rp, tid, ec) == 0 ? 0 : err;
	if (cached(rp, tid, ec, head, have_head) == 0)
		return 0;
	return running(rp, tid, ec);
}
