/* --nodejs-mode attach-maps: see node_maps.h. */
#include "runtimes/node_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nodeperf/protocol.h"
#include "runtimes/inject.h"
#include "runtimes/node_inspector.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/strbuf.h"

#define TIMEOUT_MS 3000		/* each step of an inspector session */
#define RETRY_MS 200		/* a node that handles no SIGUSR1 yet is asked again this often */
#define NOT_READY_MS 10000	/* ... for so long */
#define MAX_QUEUED 4096
#define STARTUP_MS 1000		/* a node younger than this, busy, may be in its bootstrap */

enum nm_state { NM_QUEUED, NM_WAITING, NM_ATTACHED, NM_SKIPPED, NM_STOPPED };

struct nm_proc {
	pid_t pid;
	unsigned long long start;	/* its start time (pid reuse) */
	enum nm_state state;
	uint64_t since_ms;		/* first try */
	uint64_t next_ms;		/* NM_WAITING: when to try again */
	struct nodeinsp_target t;
};

struct node_maps {
	char lib[PATH_MAX];
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool quit;
	struct nm_proc *procs;
	size_t nr, alloc;
};

/* Field 22 of /proc/<pid>/stat, 0 when it cannot be read. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long t = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	/* after "pid (comm)": state is field 3, starttime field 22 */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &t);
	return t;
}

/* Whether node, seen from outside, is past its bootstrap, when kiln may signal it: its
 * main thread waits in epoll (the event loop runs), or it is STARTUP_MS old (not longer:
 * V8 13.6 names less of the code it compiled before an attach, see docs/agent.md). Why
 * not sooner: SIGUSR1 starts the inspector by a V8 interrupt, and in 2 of about 40 runs
 * of tests/e2e/node_attach_maps.sh (idle host) Debian's Node 18, signalled early in its
 * bootstrap, crashed in node::binding::GetInternalBinding (a std::set insert, under a
 * bootstrap's internalBinding call) before it answered the inspector at all. */
static bool past_startup(pid_t pid, unsigned long long start)
{
	char path[64], buf[64] = "";
	struct timespec now;
	long tick = sysconf(_SC_CLK_TCK);
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			nr = strtol(buf, NULL, 10);
		fclose(f);
	}
#ifdef SYS_epoll_wait
	if (nr == SYS_epoll_wait)
		return true;
#endif
	if (nr == SYS_epoll_pwait)
		return true;
#ifdef SYS_epoll_pwait2
	if (nr == SYS_epoll_pwait2)
		return true;
#endif
	if (tick <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return true;
	uint64_t now_ticks = (uint64_t)now.tv_sec * (uint64_t)tick +
			     (uint64_t)now.tv_nsec / (1000000000u / (uint64_t)tick);
	return now_ticks < start || (now_ticks - start) * 1000 / (uint64_t)tick >= STARTUP_MS;
}

/* The library as the process sees it: copied into its /tmp when it has another mount
 * namespace or runs as another user (who may not read kiln's directory). */
static int place_lib(const struct node_maps *m, const struct nodeinsp_target *t, char *out,
		     size_t size)
{
	if (!t->other_mntns && t->uid == geteuid()) {
		snprintf(out, size, "%s", m->lib);
		return 0;
	}
	return inject__copy_into_root(t->pid, m->lib, "libkiln-nodeperf", out, size);
}

/* Runs expr in p and checks that the answer, "<pid> <result>", came from p. Writes the
 * result into res. */
static int run(struct nm_proc *p, const char *expr, char *res, size_t size, unsigned *open_ms,
	       char *reason)
{
	char value[256] = "";
	int err = nodeinsp__evaluate(&p->t, expr, TIMEOUT_MS, value, sizeof(value), open_ms, reason);
	char *sp = strchr(value, ' ');

	if (err < 0 && err != -EBUSY)
		return err;
	if (!strcmp(value, NODEINSP_LATER)) {
		errmsg(reason, NODEINSP_REASON_MAX, "node is still starting");
		return err < 0 ? err : -EAGAIN;
	}
	if (!sp || strtol(value, NULL, 10) != p->t.nspid) {
		errmsg(reason, NODEINSP_REASON_MAX, "the inspector answered for another process: '%.40s'",
		       value);
		return -EPROTO;
	}
	snprintf(res, size, "%s", sp + 1);
	return err;
}

static char *js_string(const char *s)
{
	json_t *j = json_string(s);
	char *out = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	json_decref(j);
	return out ? out : xstrdup("\"\"");
}

/* Attaches p (no lock held: this takes up to a few seconds). */
static void attach(struct node_maps *m, struct nm_proc *p)
{
	char reason[NODEINSP_REASON_MAX] = "", lib[PATH_MAX], res[128] = "";
	struct strbuf expr = STRBUF_INIT;
	int err = nodeinsp__probe(p->pid, &p->t, reason);

	if (err == -EAGAIN && clock__now_ms() - p->since_ms < NOT_READY_MS) {
		p->state = NM_WAITING;
		p->next_ms = clock__now_ms() + RETRY_MS;
		return;
	}
	if (err == 0 && !past_startup(p->pid, p->start)) {
		p->state = NM_WAITING;	/* it will be, by its age */
		p->next_ms = clock__now_ms() + RETRY_MS;
		return;
	}
	p->state = NM_SKIPPED;
	if (err == -ENOENT)
		return;
	if (err < 0)
		goto skip;
	err = place_lib(m, &p->t, lib, sizeof(lib));
	if (err < 0) {
		errmsg(reason, sizeof(reason), "failed to copy '%s' into its /tmp: %s", m->lib,
		       strerror(-err));
		goto skip;
	}
	char *jlib = js_string(lib);
	struct strbuf wexpr = STRBUF_INIT;
	strbuf_addf(&wexpr, "(() => { if (typeof process !== 'object' || "
		    "typeof process.dlopen !== 'function') return '" NODEINSP_LATER "'; "
		    "const m = { exports: {} }; process.dlopen(m, %s); "
		    "return m.exports.start(0); })()", jlib);
	char *jwexpr = js_string(wexpr.buf);
	strbuf_addf(&expr,
		    "(() => { if (typeof process !== 'object' || typeof process.pid !== 'number') "
		    "return '" NODEINSP_LATER "'; "
		    "const m = { exports: {} }; process.dlopen(m, %s); "
		    "const e = { exports: m.exports, session: null }; "
		    "globalThis[Symbol.for('" KILN_NODEPERF_KEY "')] = e; "
		    "const r = m.exports.start(%d); "
		    "if (r === 'ok' && typeof require === 'function') try { "
		    "const s = new (require('inspector').Session)(); s.connect(); "
		    "const w = JSON.stringify({ id: 1, method: 'Runtime.evaluate', "
		    "params: { expression: %s } }); "
		    "const tries = new Map(); "
		    "const send = (id) => s.post('NodeWorker.sendMessageToWorker', "
		    "{ sessionId: id, message: w }, () => {}); "
		    "s.on('NodeWorker.attachedToWorker', (ev) => send(ev.params.sessionId)); "
		    "s.on('NodeWorker.receivedMessageFromWorker', (ev) => { "
		    "let v; try { v = JSON.parse(ev.params.message).result.result.value; } "
		    "catch (err) {} const id = ev.params.sessionId, n = (tries.get(id) || 0) + 1; "
		    "tries.set(id, n); if (v === '" NODEINSP_LATER "' && n < 500) send(id); }); "
		    "s.post('NodeWorker.enable', { waitForDebuggerOnStart: false }); "
		    "e.session = s; } catch (err) {} "
		    "return process.pid + ' ' + r; })()",
		    jlib, p->t.same_pidns ? (int)getpid() : 0, jwexpr);
	free(jwexpr);
	strbuf_release(&wexpr);
	free(jlib);
	unsigned open_ms = 0;
	err = run(p, expr.buf, res, sizeof(res), &open_ms, reason);
	strbuf_release(&expr);
	if (err == -EADDRINUSE && clock__now_ms() - p->since_ms < NOT_READY_MS) {
		p->state = NM_WAITING;	/* another inspector has 9229 there: later */
		p->next_ms = clock__now_ms() + 1000;
		return;
	}
	if (err == -EAGAIN && clock__now_ms() - p->since_ms < NOT_READY_MS) {
		p->state = NM_WAITING;	/* still starting */
		p->next_ms = clock__now_ms() + RETRY_MS;
		return;
	}
	if (err == -EBUSY)
		log_warn("nodejs: %s", reason);
	if ((err < 0 && err != -EBUSY) || strcmp(res, "ok")) {
		if (!reason[0] || err == -EBUSY)
			errmsg(reason, sizeof(reason), "the module did not start: %s", res);
		goto skip;
	}
	p->state = NM_ATTACHED;
	log_info("nodejs: pid %d writes /tmp/perf-%d.map (attach-maps; its inspector was open "
		 "for %u ms)", (int)p->pid, (int)p->t.nspid, open_ms);
	return;
skip:
	log_info("nodejs: not attaching to pid %d: %s", (int)p->pid, reason);
}

static void detach(struct nm_proc *p)
{
	static const char expr[] = "(() => { const e = globalThis[Symbol.for('" KILN_NODEPERF_KEY
				   "')]; if (e && e.session) { try { e.session.disconnect(); } "
				   "catch (err) {} e.session = null; } "
				   "return process.pid + ' ' + (e ? (e.exports || e).stop() : 'none'); })()";
	char reason[NODEINSP_REASON_MAX] = "", res[64] = "";
	struct nodeinsp_target t;

	p->state = NM_STOPPED;
	if (start_time(p->pid) != p->start || nodeinsp__probe(p->pid, &t, reason) < 0)
		return;	/* gone, or another process now */
	unsigned open_ms = 0;
	int err = run(p, expr, res, sizeof(res), &open_ms, reason);
	if (err < 0)
		log_warn("nodejs: failed to stop the perf map of pid %d: %s", (int)p->pid, reason);
	else
		log_info("nodejs: pid %d stopped its perf map after %s lines (inspector open for %u "
			 "ms)", (int)p->pid, res, open_ms);
}

/* The next process to look at now (lock held), or NULL; *wait_ms: when to look again. */
static struct nm_proc *next(struct node_maps *m, int *wait_ms)
{
	uint64_t now = clock__now_ms();

	*wait_ms = 1000;
	for (size_t i = 0; i < m->nr; i++) {
		struct nm_proc *p = &m->procs[i];
		if (p->state == NM_QUEUED || (p->state == NM_WAITING && p->next_ms <= now))
			return p;
		if (p->state == NM_WAITING && (int)(p->next_ms - now) < *wait_ms)
			*wait_ms = (int)(p->next_ms - now);
	}
	return NULL;
}

static void *worker(void *arg)
{
	struct node_maps *m = arg;

	pthread_mutex_lock(&m->lock);
	while (!m->quit) {
		int wait_ms;
		struct nm_proc *p = next(m, &wait_ms);
		if (p) {
			struct nm_proc copy = *p;	/* the array may grow meanwhile */
			size_t i = (size_t)(p - m->procs);
			pthread_mutex_unlock(&m->lock);
			attach(m, &copy);
			pthread_mutex_lock(&m->lock);
			m->procs[i] = copy;
			continue;
		}
		struct timespec until = clock__deadline(wait_ms);
		pthread_cond_timedwait(&m->wake, &m->lock, &until);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct node_maps *node_maps__start(const char *lib)
{
	struct node_maps *m = xcalloc(1, sizeof(*m));
	char buf[PATH_MAX];

	if (lib)
		snprintf(buf, sizeof(buf), "%s", lib);
	else
		inject__beside_self("libkiln-nodeperf.so", buf, sizeof(buf));
	if (!realpath(buf, m->lib) || access(m->lib, R_OK) < 0) {
		log_warn("failed to find the node module '%s': %s (--nodejs-mode attach-maps names "
			 "no JavaScript)", buf, strerror(errno));
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	int err = pthread_create(&m->thread, NULL, worker, m);
	if (err) {
		log_error("failed to start the nodejs attach thread: %s", strerror(err));
		pthread_cond_destroy(&m->wake);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return NULL;
	}
	return m;
}

void node_maps__note(struct node_maps *m, pid_t pid)
{
	unsigned long long start = start_time(pid);

	if (!m || pid == getpid())
		return;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nr; i++)
		if (m->procs[i].pid == pid && m->procs[i].start == start) {
			pthread_mutex_unlock(&m->lock);
			return;
		}
	if (m->nr < MAX_QUEUED) {
		if (m->nr == m->alloc) {
			m->alloc = m->alloc ? m->alloc * 2 : 16;
			m->procs = xrealloc(m->procs, m->alloc * sizeof(*m->procs));
		}
		m->procs[m->nr++] = (struct nm_proc){ .pid = pid, .start = start,
						      .since_ms = clock__now_ms() };
		pthread_cond_signal(&m->wake);
	}
	pthread_mutex_unlock(&m->lock);
}

void node_maps__stop(struct node_maps *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->quit = true;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	for (size_t i = 0; i < m->nr; i++)
		if (m->procs[i].state == NM_ATTACHED)
			detach(&m->procs[i]);
	free(m->procs);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
