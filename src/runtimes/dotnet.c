/* .NET behind the runtime contract (runtime.h), replace kind. For each CoreCLR process
 * the agent sees (it maps libcoreclr.so), a worker thread opens an EventPipe session
 * through the process's diagnostics socket: first a short one whose rundown names the
 * methods already compiled, then the long one with the runtime's sample profiler and the
 * JIT's load events, whose NetTrace stream it decodes as it comes. At each flush the
 * managed stacks of each sampled thread replace that thread's native stacks, scaled to
 * the samples perf counted for it. At exit the sessions are stopped. Mono has no such
 * port: its processes get a skip reason. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/procfs.h"
#include "runtimes/dotnet.h"
#include "runtimes/dotnet_ipc.h"
#include "runtimes/runtime.h"
#include "util/log.h"

#define MAX_PROCS 256
#define RUNDOWN_MS 5000		/* the most a rundown or a final drain may take */
#define POLL_MS 100
#define SOCKET_WAIT_MS 3000	/* a runtime starting up opens its socket after it maps */
#define RETRY_MS 250

enum dn_state { DN_NEW, DN_ACTIVE, DN_DONE };

struct dn_proc {
	pid_t pid, nspid;
	enum dn_state state;
	long first_ms, next_ms;		/* DN_NEW: when first seen, when to try again */
	int fd;
	uint64_t session;
	struct nettrace *nt;
	struct dotnet_methods methods;
	struct dotnet_thread *threads;
	size_t nr_threads;
	char skip_reason[128];		/* non-empty: not profiled, told at every collect */
};

struct runtime_collector {
	pthread_mutex_t lock;		/* procs' samples and methods; the list */
	pthread_t worker;
	atomic_bool stopping;
	struct dn_proc *procs[MAX_PROCS];
	size_t nr_procs;
	_Atomic pid_t covered[MAX_PROCS];
	atomic_size_t nr_covered;	/* covered[] is 0 from here on */
	pthread_mutex_t pending_lock;	/* seen() -> worker */
	pthread_cond_t pending_cond;	/* signalled when pending[] gains one, and at stop */
	pid_t pending[MAX_PROCS];
	size_t nr_pending;
	pid_t *only;			/* --pids */
	size_t nr_only;
	struct runtime_stacks *view;	/* the last collect's */
	struct profile **view_profiles;
	pid_t *view_tids;
	size_t nr_view;
	atomic_uint_fast64_t sessions;
};

static bool dotnet_likely(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "libcoreclr.so") || !strcmp(base, "libmonosgen-2.0.so") ||
	       !strcmp(base, "libmono-2.0.so") || !strcmp(base, "mono-sgen") ||
	       !strcmp(base, "mono");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void on_sample(void *ctx, const struct nettrace_sample *s)
{
	struct dn_proc *p = ctx;

	dotnet_threads__add(&p->threads, &p->nr_threads, s);
}

static void on_method(void *ctx, const struct nettrace_method *m)
{
	struct dn_proc *p = ctx;

	dotnet_methods__add(&p->methods, m);
}

static void set_covered(struct runtime_collector *c, pid_t pid, bool on)
{
	for (size_t i = 0; i < MAX_PROCS; i++) {
		pid_t cur = atomic_load(&c->covered[i]);
		if (on && !cur) {	/* only the worker writes covered[] */
			atomic_store(&c->covered[i], pid);
			if (i >= atomic_load(&c->nr_covered))
				atomic_store(&c->nr_covered, i + 1);
			return;
		} else if (!on && cur == pid) {
			atomic_store(&c->covered[i], 0);
			return;
		}
	}
}

/* Reads fd into nt (under the lock) until the stream ends, fails or deadline passes.
 * Returns 1 at the end, 0 at the deadline, a negative errno on failure. */
static int drain(struct runtime_collector *c, int fd, struct nettrace *nt, long deadline)
{
	static __thread unsigned char buf[65536];

	while (now_ms() < deadline) {
		long n = dotnet_ipc__read(fd, buf, sizeof(buf), POLL_MS);
		int err;
		if (n == -EAGAIN)
			continue;
		if (n <= 0)
			return n ? (int)n : 1;
		pthread_mutex_lock(&c->lock);
		err = nettrace__feed(nt, buf, (size_t)n);
		pthread_mutex_unlock(&c->lock);
		if (err)
			return err < 0 ? err : 1;
	}
	return 0;
}

/* Stops session (connection fd) of p and reads the stream to its end, within bounds. */
static void stop_session(struct runtime_collector *c, struct dn_proc *p, int fd, uint64_t sid,
			 struct nettrace *nt)
{
	int sfd = dotnet_ipc__stop_session(p->pid, sid);

	drain(c, fd, nt, now_ms() + RUNDOWN_MS);
	if (sfd >= 0) {
		dotnet_ipc__recv_reply(sfd, NULL, 0, NULL, NULL, DOTNET_IPC_TIMEOUT_MS);
		close(sfd);
	}
	close(fd);
}

/* Gives p its skip reason; collect reads it under the lock. */
static void set_reason(struct runtime_collector *c, struct dn_proc *p, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	snprintf(p->skip_reason, sizeof(p->skip_reason), "%s", reason);
	pthread_mutex_unlock(&c->lock);
}

static void attach(struct runtime_collector *c, struct dn_proc *p)
{
	struct nettrace_sink sink = { p, on_sample, on_method };
	struct nettrace *rundown;
	uint64_t sid;
	int kind = dotnet__proc_kind(p->pid), fd;

	p->state = DN_DONE;
	if (kind == 2) {
		set_reason(c, p, "mono: no diagnostics port, and its --jitmap perf map is "
				 "buffered until exit");
		return;
	}
	if (kind != 1)
		return;
	/* a session with no sampling, stopped at once: its rundown names what is compiled */
	fd = dotnet_ipc__start_session(p->pid, 0, &sid);
	if (fd == -ENOENT && !dotnet__diagnostics_off(p->pid) &&
	    now_ms() - p->first_ms < SOCKET_WAIT_MS) {
		p->state = DN_NEW;	/* not listening yet: again soon */
		p->next_ms = now_ms() + RETRY_MS;
		return;
	}
	if (fd < 0) {
		set_reason(c, p, fd == -ENOENT ? "dotnet: no diagnostics socket (EnableDiagnostics=0?)"
				 : fd == -EREMOTEIO ? "dotnet: the runtime refused the session"
						    : "dotnet: its diagnostics socket did not answer");
		log_debug("dotnet: failed to start a session in process %d: %s", (int)p->pid,
			  strerror(-fd));
		return;
	}
	rundown = nettrace__new(&(struct nettrace_sink){ p, NULL, on_method });
	stop_session(c, p, fd, sid, rundown);
	nettrace__free(rundown);
	fd = dotnet_ipc__start_session(p->pid, 1, &sid);
	if (fd < 0) {
		set_reason(c, p, "dotnet: the sampling session did not start");
		return;
	}
	p->nt = nettrace__new(&sink);
	p->fd = fd;
	p->session = sid;
	p->state = DN_ACTIVE;
	c->sessions++;
	set_covered(c, p->pid, true);
	log_debug("dotnet: sampling process %d (session %llx, %zu methods named)", (int)p->pid,
		  (unsigned long long)sid, p->methods.nr);
}

static bool wanted(const struct runtime_collector *c, pid_t pid)
{
	if (!c->nr_only)
		return true;
	for (size_t i = 0; i < c->nr_only; i++)
		if (c->only[i] == pid)
			return true;
	return false;
}

static void take_pending(struct runtime_collector *c)
{
	pid_t pend[MAX_PROCS];
	size_t n;

	pthread_mutex_lock(&c->pending_lock);
	n = c->nr_pending;
	memcpy(pend, c->pending, n * sizeof(*pend));
	c->nr_pending = 0;
	pthread_mutex_unlock(&c->pending_lock);
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		for (size_t k = 0; k < c->nr_procs && !known; k++)
			known = c->procs[k]->pid == pend[i];
		if (known || !wanted(c, pend[i]) || c->nr_procs == MAX_PROCS)
			continue;
		struct dn_proc *p = xcalloc(1, sizeof(*p));
		p->pid = pend[i];
		p->nspid = procfs__nspid(pend[i]);
		p->fd = -1;
		p->first_ms = p->next_ms = now_ms();
		dotnet_methods_init(&p->methods);
		pthread_mutex_lock(&c->lock);
		c->procs[c->nr_procs++] = p;
		pthread_mutex_unlock(&c->lock);
	}
	/* the worker alone changes the list: no lock to walk it; the sinks take it */
	for (size_t i = 0; i < c->nr_procs; i++)
		if (c->procs[i]->state == DN_NEW && now_ms() >= c->procs[i]->next_ms)
			attach(c, c->procs[i]);
}

/* Reads what the active sessions wrote, for at most POLL_MS. */
static void read_sessions(struct runtime_collector *c)
{
	static unsigned char buf[65536];
	long deadline = now_ms() + POLL_MS;

	for (size_t i = 0; i < c->nr_procs; i++) {
		struct dn_proc *p = c->procs[i];
		int err = 0;
		long n;
		if (p->state != DN_ACTIVE)
			continue;
		while ((n = dotnet_ipc__read(p->fd, buf, sizeof(buf), 0)) > 0) {
			pthread_mutex_lock(&c->lock);
			err = nettrace__feed(p->nt, buf, (size_t)n);
			pthread_mutex_unlock(&c->lock);
			if (err)
				break;
		}
		if (err || (n != -EAGAIN)) {	/* the process exited, or a bad stream */
			if (err < 0)
				log_warn("dotnet: bad event stream from process %d", (int)p->pid);
			close(p->fd);
			p->fd = -1;
			p->state = DN_DONE;
			set_covered(c, p->pid, false);
		}
	}
	long left = deadline - now_ms();
	if (left > 0)
		usleep((useconds_t)left * 1000);
}

static void proc_free(struct dn_proc *p);

/* Forgets the processes whose session ended (they exited) once their samples were
 * collected; those with a skip reason stay, to be told at every flush. */
static void prune(struct runtime_collector *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nr_procs; i++) {
		struct dn_proc *p = c->procs[i];
		bool pending = p->state != DN_DONE || p->skip_reason[0];
		for (size_t k = 0; k < p->nr_threads && !pending; k++)
			pending = p->threads[k].samples > 0;
		if (pending)
			c->procs[n++] = p;
		else
			proc_free(p);
	}
	c->nr_procs = n;
	pthread_mutex_unlock(&c->lock);
}

/* True while a process waits for its session or has one: the worker must poll. */
static bool busy(const struct runtime_collector *c)
{
	for (size_t i = 0; i < c->nr_procs; i++)
		if (c->procs[i]->state != DN_DONE)
			return true;
	return false;
}

/* With no session to read or start, sleeps until a process is seen or the collector
 * stops: an agent on a host without .NET does not wake ten times a second. */
static void wait_for_work(struct runtime_collector *c)
{
	pthread_mutex_lock(&c->pending_lock);
	while (!c->nr_pending && !atomic_load(&c->stopping))
		pthread_cond_wait(&c->pending_cond, &c->pending_lock);
	pthread_mutex_unlock(&c->pending_lock);
}

static void *worker(void *arg)
{
	struct runtime_collector *c = arg;

	while (!atomic_load(&c->stopping)) {
		if (!busy(c))
			wait_for_work(c);
		take_pending(c);
		read_sessions(c);
		prune(c);
	}
	return NULL;
}

static struct runtime_collector *dotnet_start(const struct runtime_env *env)
{
	struct runtime_collector *c = xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->pending_lock, NULL);
	pthread_cond_init(&c->pending_cond, NULL);
	if (env->nr_pids) {
		c->only = xcalloc(env->nr_pids, sizeof(*c->only));
		memcpy(c->only, env->pids, env->nr_pids * sizeof(*c->only));
		c->nr_only = env->nr_pids;
	}
	if (pthread_create(&c->worker, NULL, worker, c)) {
		log_error("dotnet: failed to start its thread");
		free(c->only);
		free(c);
		return NULL;
	}
	return c;
}

static void dotnet_seen(struct runtime_collector *c, pid_t pid)
{
	pthread_mutex_lock(&c->pending_lock);
	if (c->nr_pending < MAX_PROCS)
		c->pending[c->nr_pending++] = pid;
	if (c->nr_pending == 1)
		pthread_cond_signal(&c->pending_cond);
	pthread_mutex_unlock(&c->pending_lock);
}

static bool dotnet_covers(struct runtime_collector *c, pid_t pid)
{
	size_t n = atomic_load(&c->nr_covered);

	for (size_t i = 0; i < n; i++)
		if (atomic_load_explicit(&c->covered[i], memory_order_relaxed) == pid)
			return true;
	return false;
}

static void view_free(struct runtime_collector *c)
{
	for (size_t i = 0; i < c->nr_view; i++)
		profile__free(c->view_profiles[i]);
	free(c->view);
	free(c->view_profiles);
	free(c->view_tids);
	c->view = NULL;
	c->view_profiles = NULL;
	c->view_tids = NULL;
	c->nr_view = 0;
}

static size_t dotnet_collect(struct runtime_collector *c, const struct runtime_stacks **out)
{
	size_t cap = 0, n = 0;

	view_free(c);
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nr_procs; i++)
		cap += c->procs[i]->nr_threads + 1;
	c->view = xcalloc(cap + 1, sizeof(*c->view));
	c->view_profiles = xcalloc(cap + 1, sizeof(*c->view_profiles));
	c->view_tids = xcalloc(cap + 1, sizeof(*c->view_tids));
	for (size_t i = 0; i < c->nr_procs; i++) {
		struct dn_proc *p = c->procs[i];
		if (p->skip_reason[0])
			c->view[n++] = (struct runtime_stacks){ .pid = p->pid,
								.skip_reason = p->skip_reason };
		for (size_t k = 0; k < p->nr_threads; k++) {
			struct dotnet_thread *t = &p->threads[k];
			if (!t->samples)
				continue;
			if (!t->tid)
				t->tid = dotnet__host_tid(p->pid, p->nspid, t->nstid);
			struct profile *prof = NULL;
			uint64_t samples = dotnet_thread__name(t, &p->methods, &prof);
			if (t->tid <= 0 || !samples) {
				profile__free(prof);
				continue;
			}
			c->view_profiles[n] = prof;
			c->view_tids[n] = t->tid;
			c->view[n] = (struct runtime_stacks){
				.pid = p->pid, .stacks = prof, .samples = samples,
				.tids = &c->view_tids[n], .nr_tids = 1,
			};
			n++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	c->nr_view = n;
	*out = c->view;
	return n;
}

static void dotnet_header(struct runtime_collector *c, json_t *meta, size_t merged)
{
	json_object_set_new(meta, "dotnet_threads_profiled", json_integer((json_int_t)merged));
	json_object_set_new(meta, "dotnet_sessions", json_integer((json_int_t)atomic_load(&c->sessions)));
}

static void proc_free(struct dn_proc *p)
{
	for (size_t k = 0; k < p->nr_threads; k++)
		profile__free(p->threads[k].raw);
	free(p->threads);
	dotnet_methods_release(&p->methods);
	nettrace__free(p->nt);
	free(p);
}

static void dotnet_stop(struct runtime_collector *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->pending_lock);
	atomic_store(&c->stopping, true);
	pthread_cond_signal(&c->pending_cond);
	pthread_mutex_unlock(&c->pending_lock);
	pthread_join(c->worker, NULL);
	for (size_t i = 0; i < c->nr_procs; i++) {
		struct dn_proc *p = c->procs[i];
		if (p->state == DN_ACTIVE) {	/* switch the runtime's sampling off again */
			stop_session(c, p, p->fd, p->session, p->nt);
			log_debug("dotnet: stopped the session in process %d", (int)p->pid);
		}
		proc_free(p);
	}
	view_free(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->pending_lock);
	pthread_cond_destroy(&c->pending_cond);
	free(c->only);
	free(c);
}

const struct runtime_ops dotnet_runtime = {
	.name = "dotnet",
	.merge = RUNTIME_REPLACE,
	.likely = dotnet_likely,
	.start = dotnet_start,
	.seen = dotnet_seen,
	.covers = dotnet_covers,
	.collect = dotnet_collect,
	.header = dotnet_header,
	.stop = dotnet_stop,
};
