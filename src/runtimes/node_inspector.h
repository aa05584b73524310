/* Running one expression in a running node process through its inspector, for
 * --nodejs-mode attach-maps (node_maps.c): SIGUSR1 makes node open the inspector on
 * 127.0.0.1:9229 (the port found as the one listening socket the process did not have
 * before, from /proc/<pid>/net/tcp{,6} and its fds), GET /json/list gives the session's
 * WebSocket URL (libcurl), a WebSocket (libwebsockets) carries one Runtime.evaluate and
 * then process._debugEnd() (now, and again at the next turn of the event loop, should
 * node's pending start request open it again), which closes the port; the call returns
 * when the port is gone. A process in another network namespace is reached from inside it (setns on the
 * calling thread, which returns to its own namespace before the call returns).
 *
 * While the port is open anyone on the host who can reach it may run code in the process:
 * it is open for the one expression only. One process at a time: every node wants 9229. */
#ifndef KILN_RUNTIMES_NODE_INSPECTOR_H
#define KILN_RUNTIMES_NODE_INSPECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define NODEINSP_REASON_MAX 160

struct nodeinsp_target {
	pid_t pid;		/* host pid */
	pid_t nspid;		/* its pid in its own pid namespace */
	uid_t uid;		/* its effective uid */
	bool other_netns;	/* its 127.0.0.1 is not kiln's */
	bool other_mntns;	/* its /tmp is not kiln's */
	bool same_pidns;	/* it can see kiln's pid */
};

/* Looks at process pid before anything is sent to it. Returns 0 when it may be attached;
 * -ENOENT when it is gone or is no node; -EAGAIN when it handles no SIGUSR1 yet (just
 * started: ask again later; the signal would kill it); -ENOTSUP with a reason when kiln
 * must leave it alone (its inspector is the user's, --inspect*; it writes a perf map of
 * its own, --perf-basic-prof or --perf-prof; --disable-sigusr1). reason:
 * NODEINSP_REASON_MAX bytes. */
int nodeinsp__probe(pid_t pid, struct nodeinsp_target *t, char *reason);

/* What an expression evaluates to when it wants to be evaluated again a little later
 * (node is still starting), and what the close answers before node's bootstrap can close
 * it. */
#define NODEINSP_LATER "later"

/* Opens t's inspector, evaluates the JavaScript expression expr in its main context
 * (returnByValue, with the command line API: require() is there) and closes the inspector, each step bounded by timeout_ms. An expr that
 * evaluates to NODEINSP_LATER is evaluated again every 20 ms in the same session, until
 * timeout_ms (then value is NODEINSP_LATER): one signal, one inspector, however long the
 * process takes to start. Writes the
 * value, when it is a string or a number, into value (size bytes, may be NULL). Returns 0;
 * otherwise a negative errno and a reason: -EADDRINUSE when port 9229 is taken in its
 * network namespace (nothing is sent), -ETIMEDOUT ("the inspector did not open in 3000
 * ms"), -EPROTO ("the expression failed: ReferenceError: ..."). When the port is still
 * open at the end, returns -EBUSY with a reason whatever the expression gave (value is
 * still written). *open_ms (may be NULL): how long the port was seen open, from the first
 * look that found it to the first that did not (0 when it did not open). */
int nodeinsp__evaluate(const struct nodeinsp_target *t, const char *expr, int timeout_ms,
		       char *value, size_t size, unsigned *open_ms, char *reason);

/* Whether process pid (host pid) has a TCP socket listening now, in its network
 * namespace: 1 yes, 0 no, a negative errno when it cannot be told. */
int nodeinsp__listening(pid_t pid);

#endif
