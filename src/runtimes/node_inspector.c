/* A node process's inspector, opened for one expression and closed again: see
 * node_inspector.h. */
#include "runtimes/node_inspector.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/strbuf.h"

#define MAX_LISTEN 64		/* listening sockets of one process looked at */
#define INSPECTOR_PORT 9229	/* where SIGUSR1 opens it (other ports: --inspect-port) */
#define MAX_REPLY (1u << 20)	/* bytes of an inspector message kept */

struct lsock {
	unsigned long inode;
	unsigned port;
	char addr[INET6_ADDRSTRLEN];
	bool v6;
};

/* ---- the process's listening sockets ---- */

/* The listening sockets of /proc/<pid>/net/<file> (its network namespace's), appended to
 * out[*n..max). */
static void read_listen(pid_t pid, const char *file, bool v6, struct lsock *out, size_t *n,
			size_t max)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && *n < max) {
		char local[64];
		unsigned port, state;
		unsigned long inode;
		if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %*64[0-9A-Fa-f]:%*x %x %*s %*s %*s %*s %*s %lu",
			   local, &port, &state, &inode) != 4 || state != 0x0A || !inode)
			continue;
		struct lsock *s = &out[(*n)++];
		*s = (struct lsock){ .inode = inode, .port = port, .v6 = v6 };
		if (!v6 && strlen(local) == 8) {
			struct in_addr a = { (in_addr_t)strtoul(local, NULL, 16) };
			inet_ntop(AF_INET, &a, s->addr, sizeof(s->addr));
		} else if (v6 && strlen(local) == 32) {
			struct in6_addr a;
			for (int i = 0; i < 4; i++) {
				char word[9];
				memcpy(word, local + 8 * i, 8);
				word[8] = '\0';
				uint32_t w = (uint32_t)strtoul(word, NULL, 16);
				memcpy(&a.s6_addr[4 * i], &w, 4);
			}
			inet_ntop(AF_INET6, &a, s->addr, sizeof(s->addr));
		}
	}
	fclose(f);
}

/* The listening TCP sockets that process pid holds (by its fds). Returns how many were
 * written to out (at most max), or a negative errno. */
static int owned_listen(pid_t pid, struct lsock *out, size_t max)
{
	struct lsock all[512];
	size_t n = 0, kept = 0;
	char path[64];
	struct dirent *e;
	DIR *d;

	read_listen(pid, "tcp", false, all, &n, sizeof(all) / sizeof(all[0]));
	read_listen(pid, "tcp6", true, all, &n, sizeof(all) / sizeof(all[0]));
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) && kept < max) {
		char link[64], target[64];
		unsigned long inode;
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/%d/fd/%.16s", (int)pid, e->d_name);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (sscanf(target, "socket:[%lu]", &inode) != 1)
			continue;
		for (size_t i = 0; i < n; i++)
			if (all[i].inode == inode) {
				out[kept++] = all[i];
				break;
			}
	}
	closedir(d);
	return (int)kept;
}

int nodeinsp__listening(pid_t pid)
{
	struct lsock s[MAX_LISTEN];
	int n = owned_listen(pid, s, MAX_LISTEN);

	return n < 0 ? n : n > 0;
}

/* Whether a socket of pid's network namespace listens on port. */
static bool port_taken(pid_t pid, unsigned port)
{
	struct lsock all[512];
	size_t n = 0;

	read_listen(pid, "tcp", false, all, &n, sizeof(all) / sizeof(all[0]));
	read_listen(pid, "tcp6", true, all, &n, sizeof(all) / sizeof(all[0]));
	for (size_t i = 0; i < n; i++)
		if (all[i].port == port)
			return true;
	return false;
}

static bool has_inode(const struct lsock *s, int n, unsigned long inode)
{
	for (int i = 0; i < n; i++)
		if (s[i].inode == inode)
			return true;
	return false;
}

/* ---- the target ---- */

static ino_t ns_of(const char *pid, const char *ns)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, ns);
	return stat(path, &st) < 0 ? 0 : st.st_ino;
}

/* Whether one of the NUL-separated strings of /proc/<pid>/<file> starts with one of
 * prefixes (or, for environ, NODE_OPTIONS contains one). Writes the one found into found. */
static bool proc_strings_have(pid_t pid, const char *file, const char *const *prefixes,
			      char *found, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64];
	bool hit = false;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_release(&sb);
		return false;
	}
	for (size_t i = 0; i < sb.len && !hit; i += strlen(sb.buf + i) + 1) {
		const char *s = sb.buf + i;
		bool env = !strcmp(file, "environ");
		if (env && strncmp(s, "NODE_OPTIONS=", 13))
			continue;
		for (const char *const *p = prefixes; *p && !hit; p++)
			if (env ? strstr(s, *p) != NULL : !strncmp(s, *p, strlen(*p))) {
				snprintf(found, size, "%s", *p);
				hit = true;
			}
	}
	strbuf_release(&sb);
	return hit;
}

int nodeinsp__probe(pid_t pid, struct nodeinsp_target *t, char *reason)
{
	static const char *const hands_off[] = { "--inspect", "--debug", "--perf-basic-prof",
						 "--perf-prof", "--disable-sigusr1", NULL };
	char path[64], line[256], self[32], other[32], flag[32];
	unsigned long long sigcgt = 0;
	unsigned uid;
	bool have_sig = false;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->pid = t->nspid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');
			t->nspid = (pid_t)strtol(last ? last + 1 : line + 6, NULL, 10);
		} else if (sscanf(line, "Uid: %*u %u", &uid) == 1) {
			t->uid = (uid_t)uid;
		} else if (sscanf(line, "SigCgt: %llx", &sigcgt) == 1) {
			have_sig = true;
		}
	}
	fclose(f);
	if (!have_sig || t->nspid <= 0)
		return -ENOENT;
	if (proc_strings_have(pid, "cmdline", hands_off, flag, sizeof(flag)) ||
	    proc_strings_have(pid, "environ", hands_off, flag, sizeof(flag))) {
		errmsg(reason, NODEINSP_REASON_MAX, "node runs with %s", flag);
		return -ENOTSUP;
	}
	if (!(sigcgt & (1ull << (SIGUSR1 - 1)))) {
		/* the default action of SIGUSR1 ends the process */
		errmsg(reason, NODEINSP_REASON_MAX, "node handles no SIGUSR1 (yet)");
		return -EAGAIN;
	}
	snprintf(self, sizeof(self), "%d", (int)getpid());
	snprintf(other, sizeof(other), "%d", (int)pid);
	t->other_netns = ns_of(self, "net") != ns_of(other, "net");
	t->other_mntns = ns_of(self, "mnt") != ns_of(other, "mnt");
	t->same_pidns = ns_of(self, "pid") == ns_of(other, "pid");
	return 0;
}

/* ---- HTTP: the session's WebSocket path ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct strbuf *sb = ctx;

	if (sb->len + size * nmemb > MAX_REPLY)
		return 0;
	strbuf_add(sb, data, size * nmemb);
	return size * nmemb;
}

/* GET /json/list: the path of the first target's webSocketDebuggerUrl into path. */
static int ws_path(const struct lsock *s, int timeout_ms, char *path, size_t size, char *reason)
{
	struct strbuf body = STRBUF_INIT;
	char url[128];
	CURL *c = curl_easy_init();
	int err = -EPROTO;

	if (!c)
		return -ENOMEM;
	snprintf(url, sizeof(url), s->v6 ? "http://[%s]:%u/json/list" : "http://%s:%u/json/list",
		 s->addr, s->port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		errmsg(reason, NODEINSP_REASON_MAX, "failed to get '%s': %s", url,
		       curl_easy_strerror(rc));
		strbuf_release(&body);
		return -EIO;
	}
	json_t *list = json_loadb(body.buf, body.len, 0, NULL);
	const char *ws = json_is_array(list) && json_array_size(list)
				 ? json_string_value(json_object_get(json_array_get(list, 0),
								     "webSocketDebuggerUrl"))
				 : NULL;
	const char *p = ws && !strncmp(ws, "ws://", 5) ? strchr(ws + 5, '/') : NULL;
	if (p && strlen(p) < size) {
		snprintf(path, size, "%s", p);
		err = 0;
	} else {
		errmsg(reason, NODEINSP_REASON_MAX, "no webSocketDebuggerUrl in '%s': '%.60s'", url,
		       body.buf ? body.buf : "");
	}
	json_decref(list);
	strbuf_release(&body);
	return err;
}

/* ---- the WebSocket: Runtime.evaluate, then the close ---- */

/* The request that closes the inspector (NODEINSP_LATER while node's bootstrap has not
 * yet defined what it calls). process._debugEnd() closes the port now, and once more at
 * the next turn of the event loop. Why twice: SIGUSR1 asks node's main thread to start the
 * inspector in two ways, by a V8 interrupt (taken at once, even in JavaScript that never
 * returns) and by a uv_async (taken when the event loop next turns). When the loop has not
 * turned by the time the port is closed (a node still in its bootstrap, as Debian's Node
 * 18 is for a second here, or one busy in a long synchronous call), that pending request
 * opens the port again, for good. The immediate runs in the turn that takes it: the check
 * phase follows the poll phase. It is unref'd (it keeps no process alive) and replaced by
 * the next session's. */
static const char close_expr[] =
	"(() => { if (typeof process !== 'object' || typeof process._debugEnd !== 'function' ||"
	" typeof setImmediate !== 'function') return '" NODEINSP_LATER "';"
	" const p = process, g = globalThis, k = Symbol.for('kiln.inspector.close');"
	" if (g[k]) clearImmediate(g[k]);"
	" g[k] = setImmediate(() => { delete g[k]; p._debugEnd(); });"
	" if (g[k].unref) g[k].unref();"
	" p._debugEnd(); return 'closed'; })()";

/* The request before the expression, without the command line API: whether node is past
 * its start-up. The inspector runs a request from a V8 interrupt, in the middle of
 * whatever JavaScript runs; the command line API that the expression needs (its require)
 * loads node's module loader, and when that interrupts node's bootstrap it finds modules
 * half loaded: once Debian's Node 18, asked while it started, threw "Should not query
 * options before bootstrapping is done" at the request, and twice in 12 runs, asked a
 * little later, it lost its fs module's exports ("fs.realpathSync is not a function")
 * and exited at the start of the script. Past the start-up: the main module is loaded
 * (process.mainModule, a CommonJS main; read without its getter, which warns under
 * --pending-deprecation) or the event loop has turned (an immediate set by an earlier ask
 * ran: an ES module main, node -e, the REPL; set once the bootstrap is over and the
 * preparation of the main script has begun, which defines process.argv0). */
static const char ready_expr[] =
	"(() => { const g = globalThis, k = Symbol.for('kiln.inspector.ready');"
	" if (typeof process !== 'object') return '" NODEINSP_LATER "';"
	" const d = Object.getOwnPropertyDescriptor(process, 'mainModule');"
	" if ((d && 'value' in d && d.value !== undefined) || g[k] === true) return 'ready';"
	" if (g[k] === undefined && typeof setImmediate === 'function' && 'argv0' in process) {"
	" const i = setImmediate(() => { g[k] = true; }); if (i.unref) i.unref(); g[k] = false; }"
	" return '" NODEINSP_LATER "'; })()";

#define LATER_MS 20	/* an answer NODEINSP_LATER: asked again so much later */

enum ws_phase { WS_READY, WS_EXPR, WS_CLOSE, WS_DONE };

struct ws_session {
	const char *expr;
	enum ws_phase phase;
	int last_id;			/* of the last request sent (1, 2, ...) */
	bool in_flight;			/* it is not answered yet */
	uint64_t due_ms;		/* when to send the next request */
	uint64_t expr_end;		/* the expression is asked again until then */
	struct strbuf in;		/* the message being received */
	json_t *result;			/* the reply to the expression */
	bool closed, failed;
	char err[NODEINSP_REASON_MAX];
	struct lws *wsi;
	struct lws_sorted_usec_list tick;
	struct lws_context *ctx;
};

static void on_tick(struct lws_sorted_usec_list *sul)
{
	struct ws_session *s = lws_container_of(sul, struct ws_session, tick);

	/* wakes lws_service() so that the caller's deadline (and a request due) is looked at */
	lws_sul_schedule(s->ctx, 0, &s->tick, on_tick, 10 * LWS_US_PER_MS);
}

static bool answer_is(json_t *reply, const char *what)
{
	const char *v = json_string_value(json_object_get(
		json_object_get(json_object_get(reply, "result"), "result"), "value"));

	return v && !strcmp(v, what);
}

static void on_message(struct ws_session *s)
{
	json_t *m = json_loadb(s->in.buf, s->in.len, 0, NULL);
	json_int_t id = json_integer_value(json_object_get(m, "id"));
	uint64_t now = clock__now_ms();

	if (s->in_flight && id == s->last_id) {
		s->in_flight = false;
		if (answer_is(m, NODEINSP_LATER) && (s->phase == WS_CLOSE || now < s->expr_end)) {
			s->due_ms = now + LATER_MS;
		} else if (s->phase == WS_READY && answer_is(m, "ready")) {
			s->phase = WS_EXPR;
			s->due_ms = now;
		} else if (s->phase <= WS_EXPR) {	/* the answer (or still starting at the end) */
			s->result = m;
			m = NULL;
			s->phase = WS_CLOSE;	/* the close only once the expression is answered */
			s->due_ms = now;
		} else {
			s->phase = WS_DONE;
		}
	}
	json_decref(m);
	strbuf_reset(&s->in);
}

static bool send_text(struct ws_session *s, struct lws *wsi, const char *m)
{
	size_t n = strlen(m);
	unsigned char *buf = xmalloc(LWS_PRE + n);

	memcpy(buf + LWS_PRE, m, n);
	int w = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
	free(buf);
	if (w < (int)n) {
		s->failed = true;
		errmsg(s->err, sizeof(s->err), "failed to send to the inspector");
		return false;
	}
	return true;
}

/* The next request is due: sent on the next writable callback. */
static bool request_due(const struct ws_session *s)
{
	return s->phase != WS_DONE && !s->in_flight && clock__now_ms() >= s->due_ms;
}

static int on_ws(struct lws *wsi, enum lws_callback_reasons why, void *user, void *in, size_t len)
{
	struct ws_session *s = lws_wsi_user(wsi);

	(void)user;
	if (!s)
		return 0;
	switch (why) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (request_due(s)) {
			/* the command line API gives the expression node's require(); the
			 * others need none */
			const char *e = s->phase == WS_READY ? ready_expr :
					s->phase == WS_EXPR ? s->expr : close_expr;
			json_t *req = json_pack("{s:i,s:s,s:{s:s,s:b,s:b}}", "id", s->last_id + 1,
						"method", "Runtime.evaluate", "params", "expression",
						e, "returnByValue", 1, "includeCommandLineAPI",
						s->phase == WS_EXPR);
			char *m = json_dumps(req, JSON_COMPACT);
			bool ok = m && send_text(s, wsi, m);
			free(m);
			json_decref(req);
			if (!ok)
				return -1;
			s->last_id++;
			s->in_flight = true;
		}
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (s->in.len + len <= MAX_REPLY)
			strbuf_add(&s->in, in, len);
		if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi))
			on_message(s);
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		s->failed = true;
		errmsg(s->err, sizeof(s->err), "failed to open the inspector's WebSocket: %s",
		       in ? (const char *)in : "no reason");
		s->closed = true;
		s->wsi = NULL;
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_WSI_DESTROY:
		s->closed = true;
		s->wsi = NULL;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ "kiln-inspector", on_ws, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

/* The value of a Runtime.evaluate reply, or its exception. */
static int reply_value(json_t *r, char *value, size_t size, char *reason)
{
	json_t *res = json_object_get(json_object_get(r, "result"), "result");
	json_t *exc = json_object_get(json_object_get(r, "result"), "exceptionDetails");
	json_t *v = json_object_get(res, "value");

	if (exc || !res) {
		const char *d = json_string_value(json_object_get(res, "description"));
		const char *m = json_string_value(json_object_get(json_object_get(r, "error"),
								 "message"));
		errmsg(reason, NODEINSP_REASON_MAX, "the expression failed: %.120s",
		       d ? d : m ? m : "no description");
		log_debug("nodejs: the expression failed: %s", d ? d : m ? m : "no description");
		return -EPROTO;
	}
	if (value && size) {
		if (json_is_string(v))
			snprintf(value, size, "%s", json_string_value(v));
		else if (json_is_number(v))
			snprintf(value, size, "%.0f", json_number_value(v));
		else
			value[0] = '\0';
	}
	return 0;
}

static int ws_evaluate(const struct lsock *sock, const char *path, const char *expr,
		       int timeout_ms, char *value, size_t size, char *reason)
{
	struct lws_context_creation_info info = { 0 };
	struct lws_client_connect_info ci = { 0 };
	struct ws_session s = { .in = STRBUF_INIT };
	char host[INET6_ADDRSTRLEN + 16];
	int err = 0;

	s.expr = expr;
	lws_set_log_level(0, NULL);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.timeout_secs = (unsigned)(timeout_ms + 999) / 1000;
	s.ctx = lws_create_context(&info);
	if (!s.ctx) {
		errmsg(reason, NODEINSP_REASON_MAX, "failed to create a libwebsockets context");
		return -ENOMEM;
	}
	snprintf(host, sizeof(host), sock->v6 ? "[%s]:%u" : "%s:%u", sock->addr, sock->port);
	ci.context = s.ctx;
	ci.address = sock->addr;
	ci.port = (int)sock->port;
	ci.path = path;
	ci.host = host;
	ci.origin = host;
	ci.local_protocol_name = protocols[0].name;
	ci.userdata = &s;
	ci.pwsi = &s.wsi;
	lws_sul_schedule(s.ctx, 0, &s.tick, on_tick, 10 * LWS_US_PER_MS);
	s.expr_end = clock__now_ms() + (uint64_t)timeout_ms;
	uint64_t end = s.expr_end + (uint64_t)timeout_ms;	/* the close's own */
	if (!lws_client_connect_via_info(&ci) && !s.failed) {
		errmsg(s.err, sizeof(s.err), "failed to connect to the inspector at %s", host);
		s.failed = true;
	}
	/* until the close is answered or the inspector closes the connection */
	while (!s.failed && !s.closed && s.phase != WS_DONE && clock__now_ms() < end) {
		if (s.wsi && request_due(&s))
			lws_callback_on_writable(s.wsi);
		lws_service(s.ctx, 0);
	}
	if (s.failed) {
		errmsg(reason, NODEINSP_REASON_MAX, "%s", s.err);
		err = -EIO;
	} else if (!s.result) {
		errmsg(reason, NODEINSP_REASON_MAX, "the inspector did not answer in %d ms", timeout_ms);
		err = -ETIMEDOUT;
	} else {
		err = reply_value(s.result, value, size, reason);
	}
	lws_sul_cancel(&s.tick);
	lws_context_destroy(s.ctx);
	json_decref(s.result);
	strbuf_release(&s.in);
	return err;
}

/* ---- the whole ---- */

/* Enters pid's network namespace on this thread; *back gets ours (-1: not entered). */
static int enter_netns(pid_t pid, int *back, char *reason)
{
	char path[64];
	int fd;

	*back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*back < 0 || fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		int err = -errno;
		errmsg(reason, NODEINSP_REASON_MAX, "failed to enter the network namespace of '%s': %s",
		       path, strerror(-err));
		if (fd >= 0)
			close(fd);
		if (*back >= 0)
			close(*back);
		*back = -1;
		return err;
	}
	close(fd);
	return 0;
}

static void leave_netns(int back)
{
	if (back < 0)
		return;
	if (setns(back, CLONE_NEWNET) < 0)
		log_error("failed to return to kiln's network namespace: %s", strerror(errno));
	close(back);
}

int nodeinsp__evaluate(const struct nodeinsp_target *t, const char *expr, int timeout_ms,
		       char *value, size_t size, unsigned *open_ms, char *reason)
{
	struct lsock before[MAX_LISTEN], now[MAX_LISTEN], sock, *insp = NULL;
	char path[256], first[NODEINSP_REASON_MAX] = "";
	int nb, nn = 0, err, back = -1;

	if (open_ms)
		*open_ms = 0;
	nb = owned_listen(t->pid, before, MAX_LISTEN);
	if (nb < 0) {
		errmsg(reason, NODEINSP_REASON_MAX, "failed to read the sockets of pid %d: %s",
		       (int)t->pid, strerror(-nb));
		return nb;
	}
	if (port_taken(t->pid, INSPECTOR_PORT)) {
		/* node would fail to open it (and say so on its stderr) */
		errmsg(reason, NODEINSP_REASON_MAX, "port %d is taken in its network namespace",
		       INSPECTOR_PORT);
		return -EADDRINUSE;
	}
	uint64_t signalled = clock__now_ms();
	if (kill(t->pid, SIGUSR1) < 0) {
		err = -errno;
		errmsg(reason, NODEINSP_REASON_MAX, "failed to signal pid %d: %s", (int)t->pid,
		       strerror(-err));
		return err;
	}
	uint64_t end = clock__now_ms() + (uint64_t)timeout_ms;
	for (int step = 2; !insp; step = step < 10 ? step * 2 : 10) {	/* it is open meanwhile */
		nn = owned_listen(t->pid, now, MAX_LISTEN);
		for (int i = 0; i < nn && !insp; i++)
			if (!has_inode(before, nb, now[i].inode))
				insp = &now[i];
		if (insp || clock__now_ms() >= end)
			break;
		clock__sleep_ms(step);
	}
	if (!insp) {
		errmsg(reason, NODEINSP_REASON_MAX, "the inspector did not open in %d ms", timeout_ms);
		return nn < 0 ? nn : -ETIMEDOUT;
	}
	sock = *insp;
	uint64_t opened = clock__now_ms();
	log_debug("nodejs: pid %d opened its inspector on %s port %u, %u ms after the signal",
		  (int)t->pid, sock.addr, sock.port, (unsigned)(clock__now_ms() - signalled));
	err = t->other_netns ? enter_netns(t->pid, &back, first) : 0;
	if (!err)
		err = ws_path(&sock, timeout_ms, path, sizeof(path), first);
	if (!err)
		err = ws_evaluate(&sock, path, expr, timeout_ms, value, size, first);
	leave_netns(back);
	log_debug("nodejs: pid %d evaluated, %u ms after the signal", (int)t->pid,
		  (unsigned)(clock__now_ms() - signalled));
	/* _debugEnd() closes the server; its thread takes a moment */
	end = clock__now_ms() + (uint64_t)timeout_ms;
	for (int step = 2;; step = step < 10 ? step * 2 : 10) {
		nn = owned_listen(t->pid, now, MAX_LISTEN);
		if (nn < 0 || !has_inode(now, nn, sock.inode)) {
			if (open_ms)
				*open_ms = (unsigned)(clock__now_ms() - opened);
			errmsg(reason, NODEINSP_REASON_MAX, "%s", first);
			return err;
		}
		if (clock__now_ms() >= end)
			break;
		clock__sleep_ms(step);
	}
	errmsg(reason, NODEINSP_REASON_MAX, "the inspector of pid %d is still open on port %u%s%.80s",
	       (int)t->pid, sock.port, first[0] ? ": " : "", first);
	return -EBUSY;
}
