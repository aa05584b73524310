/* The Java session: a background thread finds JVMs and attaches libkiln-jvm.so; collect
 * asks the agents for their stacks through the control file (src/jvm/protocol.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jvm/protocol.h"
#include "runtimes/inject.h"
#include "runtimes/java.h"
#include "runtimes/java_stacks.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/strbuf.h"

#define MAX_JVMS 1024
#define NOT_READY_TRIES 10	/* polls to wait for an exec'd "java" to map its JVM */
#define NOT_READY_MS 10000	/* how long a starting JVM is retried, ... */
#define RETRY_MS 50		/* ... this often (a javac lives 1-2 s) */
#define FULL_SCAN_S 30		/* with exec events: the /proc scan for what they missed */
#define MAX_EXECD 4096		/* exec'd processes queued between two polls */

enum jvm_state { JVM_ATTACHED, JVM_SKIPPED, JVM_STOPPED };

struct jvm {
	struct jvm_target t;
	enum jvm_state state;
	bool gone;
	char reason[JVM_REASON_MAX];
	uint64_t seq;		/* last request written to the control file */
	const char *cmd;	/* its command */
	time_t beat;		/* when the control file was last written */
	char dir[64];		/* the JVM's /tmp as kiln reaches it */
};

struct pending {
	pid_t pid;
	int tries;		/* -1: given up */
	uint64_t since_ms;	/* pending: first try, monotonic */
};

struct java_session {
	struct java_opts o;
	char lib[PATH_MAX];
	char options[64];
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* signalled to quit */
	pthread_t thread;
	bool quit;
	bool kick;			/* a JVM was seen: poll now */
	struct pending *execd;		/* exec'd since the last poll: JVM candidates */
	size_t nr_execd;
	bool execd_overflow;		/* some were not queued: scan /proc */
	struct jvm *jvms;
	size_t nr_jvms;
	struct pending *pending;	/* starting JVMs to retry */
	size_t nr_pending;
	struct java_result *results;
	size_t nr_results;
	bool collected_final;
};

static void file_path(const struct jvm *j, const char *ext, char *buf, size_t size)
{
	snprintf(buf, size, "%s/" KILN_JVM_PREFIX "%d.%s", j->dir, (int)j->t.nspid, ext);
}

/* Rewrites the control file (atomically): a request, or the same one as a heartbeat. */
static int write_ctl(struct jvm *j)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16], line[64];
	int fd, len, err = 0;

	file_path(j, "ctl", path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	len = snprintf(line, sizeof(line), "%llu %s %d\n", (unsigned long long)j->seq, j->cmd,
		       (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)len) != len)
		err = -EIO;
	close(fd);
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	j->beat = time(NULL);
	return err;
}

static void remove_files(struct jvm *j)
{
	char path[PATH_MAX];

	file_path(j, "ctl", path, sizeof(path));
	unlink(path);
	file_path(j, "col", path, sizeof(path));
	unlink(path);
}

/* Whether another kiln (another agent process on this host) drives this JVM's agent now:
 * its control file is fresh, not a stop, and written by another pid. One JVM has one
 * owner; the others skip it rather than take its stacks from under it. */
static bool owned_by_other(const struct jvm *j)
{
	char path[PATH_MAX], buf[96] = "", cmd[16] = "";
	unsigned long long seq;
	int owner = 0, fd;
	struct stat st;
	ssize_t n;

	file_path(j, "ctl", path, sizeof(path));
	if (stat(path, &st) < 0 || time(NULL) - st.st_mtime > KILN_JVM_STALE_S)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %15s %d", &seq, cmd, &owner) != 3)
		return false;
	return strcmp(cmd, "stop") && owner != getpid() && kill(owner, 0) == 0;
}

/* Attaches to pid (no lock held: this may take seconds). Returns -EAGAIN when the JVM is
 * not ready yet (retry later); otherwise fills j, attached or skipped. */
static int attach(struct java_session *s, pid_t pid, struct jvm *j)
{
	char lib[PATH_MAX];
	int err;

	memset(j, 0, sizeof(*j));
	err = jvm_target__probe(pid, &j->t, j->reason);
	if (err == -ENOENT)
		return err;
	j->state = JVM_SKIPPED;
	if (err < 0)
		return 0;
	if (j->t.other_mntns)
		snprintf(j->dir, sizeof(j->dir), "/proc/%d/root/tmp", (int)pid);
	else
		snprintf(j->dir, sizeof(j->dir), "/tmp");
	if (owned_by_other(j)) {
		errmsg(j->reason, sizeof(j->reason), "another kiln profiles this JVM");
		return 0;
	}
	/* a seq no earlier session used, so that an agent left by one never mistakes our
	 * first request for a heartbeat of its own */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	j->seq = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	j->cmd = "run";
	err = write_ctl(j);	/* before the load: the agent samples while it is fresh */
	if (err < 0) {
		errmsg(j->reason, sizeof(j->reason), "failed to write to the JVM's /tmp: %s",
		       strerror(-err));
		return 0;
	}
	err = jvm_target__place_lib(&j->t, s->lib, lib, sizeof(lib));
	if (err < 0) {
		errmsg(j->reason, sizeof(j->reason), "failed to copy the agent into the JVM's /tmp: %s",
		       strerror(-err));
		remove_files(j);
		return 0;
	}
	err = jvm_target__load(&j->t, lib, s->options, s->o.attach_timeout_ms, j->reason);
	if (err == -EAGAIN) {
		remove_files(j);
		return err;
	}
	if (err < 0) {
		remove_files(j);
		log_info("java: skipping pid %d: %s", (int)pid, j->reason);
		return 0;
	}
	j->state = JVM_ATTACHED;
	j->reason[0] = '\0';
	log_debug("java: attached to pid %d", (int)pid);
	return 0;
}

static bool known(struct java_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr_jvms; i++)
		if (s->jvms[i].t.pid == pid && !s->jvms[i].gone)
			return true;
	return false;
}

static bool wanted(const struct java_session *s, pid_t pid)
{
	if (!s->o.nr_pids)
		return true;
	for (size_t i = 0; i < s->o.nr_pids; i++)
		if (s->o.pids[i] == pid)
			return true;
	return false;
}

static struct pending *find_pending(struct java_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr_pending; i++)
		if (s->pending[i].pid == pid)
			return &s->pending[i];
	return NULL;
}

static void queue_execd(struct java_session *s, struct pending c)
{
	if (s->nr_execd >= MAX_EXECD) {
		s->execd_overflow = true;
		return;
	}
	for (size_t i = 0; i < s->nr_execd; i++)
		if (s->execd[i].pid == c.pid)
			return;
	if (!(s->nr_execd & (s->nr_execd + 1)))	/* 0, 1, 3, 7, ...: grow to a power of two */
		s->execd = xrealloc(s->execd, (s->nr_execd + 1) * 2 * sizeof(*s->execd));
	s->execd[s->nr_execd++] = c;
}

void java_session__note_exec(struct java_session *s, pid_t pid)
{
	if (!s || !wanted(s, pid))
		return;
	pthread_mutex_lock(&s->lock);
	queue_execd(s, (struct pending){ pid, 0, 0 });
	pthread_mutex_unlock(&s->lock);
}

void java_session__note_seen(struct java_session *s, pid_t pid)
{
	if (!s || !wanted(s, pid))
		return;
	log_debug("java: pid %d maps a JVM", (int)pid);
	pthread_mutex_lock(&s->lock);
	queue_execd(s, (struct pending){ pid, 0, 0 });
	s->kick = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* The exec'd (or seen) processes that are JVMs now, into pids; those that are "java" but
 * have not mapped the JVM yet stay queued for the next poll. Returns how many were
 * written. */
static int take_execd(struct java_session *s, pid_t *pids, int max)
{
	struct pending *c;
	size_t nr, keep = 0;
	int n = 0;

	pthread_mutex_lock(&s->lock);
	c = s->execd;
	nr = s->nr_execd;
	s->execd = NULL;
	s->nr_execd = 0;
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < nr; i++) {
		int r = jvm__check(c[i].pid);
		if (r > 0 && n < max)
			pids[n++] = c[i].pid;
		else if (r == -EAGAIN && ++c[i].tries < NOT_READY_TRIES)
			c[keep++] = c[i];
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < keep; i++)
		queue_execd(s, c[i]);
	/* JVMs whose attach listener was not ready yet are asked again */
	for (size_t i = 0; i < s->nr_pending && n < max; i++)
		if (s->pending[i].tries >= 0)
			pids[n++] = s->pending[i].pid;
	pthread_mutex_unlock(&s->lock);
	free(c);
	return n;
}

/* Looks for new JVMs, in all of /proc (full) or among the exec'd processes, attaches to
 * them and refreshes the heartbeat of the attached ones. */
static void poll_once(struct java_session *s, bool full)
{
	pid_t pids[MAX_JVMS];
	int n = full ? jvm__list(pids, MAX_JVMS) : take_execd(s, pids, MAX_JVMS);
	time_t now = time(NULL);

	if (n > MAX_JVMS)
		n = MAX_JVMS;
	for (int i = 0; i < n && !s->quit; i++) {
		struct jvm j;
		struct pending *p;
		bool skip;

		pthread_mutex_lock(&s->lock);
		p = find_pending(s, pids[i]);
		skip = !wanted(s, pids[i]) || known(s, pids[i]) || (p && p->tries < 0);
		pthread_mutex_unlock(&s->lock);
		if (skip)
			continue;
		int err = attach(s, pids[i], &j);
		bool add = err == 0;
		pthread_mutex_lock(&s->lock);
		p = find_pending(s, pids[i]);
		if (err == -ENOENT && p)
			p->tries = -1;	/* gone, or not a JVM after all */
		if (err == -EAGAIN) {
			log_debug("java: pid %d is not ready: %s", (int)pids[i], j.reason);
			if (!p) {
				s->pending = xrealloc(s->pending, (s->nr_pending + 1) * sizeof(*p));
				p = &s->pending[s->nr_pending++];
				p->pid = pids[i];
				p->tries = 0;
				p->since_ms = clock__now_ms();
			}
			p->tries++;
			if (clock__now_ms() - p->since_ms >= NOT_READY_MS) {
				p->tries = -1;	/* give up, and say why */
				j.state = JVM_SKIPPED;
				add = true;
			}
		}
		if (add) {
			s->jvms = xrealloc(s->jvms, (s->nr_jvms + 1) * sizeof(*s->jvms));
			s->jvms[s->nr_jvms++] = j;
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nr_jvms; i++) {
		struct jvm *j = &s->jvms[i];
		if (j->gone)
			continue;
		if (kill(j->t.pid, 0) < 0 && errno == ESRCH) {
			j->gone = true;
			continue;
		}
		if (j->state == JVM_ATTACHED && now - j->beat >= KILN_JVM_HEARTBEAT_S)
			write_ctl(j);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *worker(void *arg)
{
	struct java_session *s = arg;
	struct timespec last_full = { 0 }, now, until;
	bool first = true;

	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		bool full;

		clock_gettime(CLOCK_MONOTONIC, &now);
		full = first || !s->o.exec_events || s->execd_overflow ||
		       now.tv_sec - last_full.tv_sec >= FULL_SCAN_S;
		if (full) {
			last_full = now;
			s->execd_overflow = false;
		}
		first = false;
		s->kick = false;
		pthread_mutex_unlock(&s->lock);
		poll_once(s, full);
		pthread_mutex_lock(&s->lock);
		/* a JVM that is starting is asked again soon: it may live a second only */
		int wait_ms = s->o.poll_ms;
		for (size_t i = 0; i < s->nr_pending; i++)
			if (s->pending[i].tries >= 0)
				wait_ms = wait_ms < RETRY_MS ? wait_ms : RETRY_MS;
		until = clock__deadline(wait_ms);
		while (!s->quit && !s->kick &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct java_session *java_session__start(const struct java_opts *opts)
{
	struct java_session *s = xcalloc(1, sizeof(*s));
	char buf[PATH_MAX];

	s->o = *opts;
	s->o.pids = NULL;
	if (s->o.nr_pids) {
		pid_t *copy = xmalloc(s->o.nr_pids * sizeof(*copy));
		memcpy(copy, opts->pids, s->o.nr_pids * sizeof(*copy));
		s->o.pids = copy;
	}
	if (!s->o.attach_timeout_ms)
		s->o.attach_timeout_ms = 10000;	/* as the JDK's own attach waits */
	if (!s->o.poll_ms)
		s->o.poll_ms = 1000;
	if (!s->o.frequency)
		s->o.frequency = 99;
	if (opts->lib_path)
		snprintf(buf, sizeof(buf), "%s", opts->lib_path);
	else
		inject__beside_self("libkiln-jvm.so", buf, sizeof(buf));
	if (!realpath(buf, s->lib) || access(s->lib, R_OK) < 0) {
		log_warn("failed to find the JVM agent '%s': %s (no Java frames)", buf,
			 strerror(errno));
		free((void *)s->o.pids);
		free(s);
		return NULL;
	}
	snprintf(s->options, sizeof(s->options), "interval_ns=%llu,threads=%d",
		 1000000000ull / s->o.frequency, s->o.thread_names);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, worker, s)) {
		log_error("failed to start the java thread: %s", strerror(errno));
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free((void *)s->o.pids);
		free(s);
		return NULL;
	}
	return s;
}

/* Reads the agent's stacks file for request seq into r. Returns 1 when read, 0 when it is
 * not there yet. A JVM that exited is read as it last wrote (the previous seq). */
static int read_stacks(struct jvm *j, struct java_result *r)
{
	char path[PATH_MAX];
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	uint64_t seq = 0;
	int done = 0;

	file_path(j, "col", path, sizeof(path));
	if (stat(path, &st) < 0 || st.st_size > (64 << 20) || strbuf_read_file(&sb, path) < 0)
		goto out;
	struct java_result tmp = { .pid = j->t.pid };
	if (java_stacks__parse(&tmp, sb.buf, j->t.nspid, &seq) < 0) {
		java_result_release(&tmp);
		goto out;
	}
	if (seq == j->seq || (j->gone && seq + 1 == j->seq)) {
		java_result_release(r);
		*r = tmp;
		done = 1;
	} else {
		java_result_release(&tmp);
	}
out:
	strbuf_release(&sb);
	return done;
}

size_t java_session__collect(struct java_session *s, bool final)
{
	struct timespec start, now;
	bool *done;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nr_results; i++)
		java_result_release(&s->results[i]);
	free(s->results);
	s->results = xcalloc(s->nr_jvms + 1, sizeof(*s->results));
	s->nr_results = 0;
	done = xcalloc(s->nr_jvms + 1, sizeof(*done));
	for (size_t i = 0; i < s->nr_jvms; i++) {
		struct jvm *j = &s->jvms[i];
		if (j->state != JVM_ATTACHED)
			continue;
		if (!j->gone && kill(j->t.pid, 0) < 0 && errno == ESRCH)
			j->gone = true;
		j->seq++;
		j->cmd = final ? "stop" : "flush";
		if (!j->gone)
			write_ctl(j);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		bool all = true;
		for (size_t i = 0; i < s->nr_jvms; i++) {
			struct jvm *j = &s->jvms[i];
			if (j->state != JVM_ATTACHED || done[i])
				continue;
			s->results[i].pid = j->t.pid;
			done[i] = read_stacks(j, &s->results[i]) || j->gone;
			all = all && done[i];
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (all || (now.tv_sec - start.tv_sec) * 1000 +
				   (now.tv_nsec - start.tv_nsec) / 1000000 > 2000)
			break;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	/* compact: one result per JVM that was attached or skipped and still matters */
	for (size_t i = 0; i < s->nr_jvms; i++) {
		struct jvm *j = &s->jvms[i];
		struct java_result *r = &s->results[s->nr_results];
		if (j->state == JVM_ATTACHED) {
			if (i != s->nr_results) {
				*r = s->results[i];
				memset(&s->results[i], 0, sizeof(s->results[i]));
			}
			r->pid = j->t.pid;
			if (!done[i])
				errmsg(r->skip_reason, sizeof(r->skip_reason),
				       "the JVM agent did not answer");
			s->nr_results++;
			if (final || j->gone) {
				remove_files(j);
				j->state = JVM_STOPPED;
			}
		} else if (j->state == JVM_SKIPPED && !j->gone) {
			java_result_release(&s->results[i]);
			if (i != s->nr_results)
				memset(r, 0, sizeof(*r));
			r->pid = j->t.pid;
			snprintf(r->skip_reason, sizeof(r->skip_reason), "%s", j->reason);
			s->nr_results++;
		}
	}
	for (size_t i = s->nr_results; i < s->nr_jvms; i++)
		java_result_release(&s->results[i]);
	if (final)
		s->collected_final = true;
	free(done);
	pthread_mutex_unlock(&s->lock);
	return s->nr_results;
}

const struct java_result *java_session__results(const struct java_session *s, size_t *nr)
{
	*nr = s->nr_results;
	return s->results;
}

const struct java_result *java_session__result(const struct java_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr_results; i++)
		if (s->results[i].pid == pid)
			return &s->results[i];
	return NULL;
}

void java_session__stop(struct java_session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	if (!s->collected_final)
		java_session__collect(s, true);
	for (size_t i = 0; i < s->nr_results; i++)
		java_result_release(&s->results[i]);
	free(s->results);
	free(s->jvms);
	free(s->pending);
	free(s->execd);
	free((void *)s->o.pids);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool java_session__attached(struct java_session *s, pid_t pid)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nr_jvms && !found; i++)
		found = s->jvms[i].t.pid == pid && s->jvms[i].state == JVM_ATTACHED;
	pthread_mutex_unlock(&s->lock);
	return found;
}
