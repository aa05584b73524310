/* HotSpot's dynamic attach, done by kiln itself (no jattach, no JDK tools): find JVMs,
 * wake their attach listener and send them the `load` command.
 *
 * The protocol: a JVM listens on the UNIX socket /tmp/.java_pid<nspid> (in its own mount
 * namespace) once it has seen a file .attach_pid<nspid> in its cwd or /tmp and a SIGQUIT.
 * A client sends "1\0<cmd>\0<arg1>\0<arg2>\0<arg3>\0" and reads a decimal result code,
 * a newline and the command's output. Containers: every path goes through
 * /proc/<pid>/root or /proc/<pid>/cwd (setns() is not possible in a threaded process), the
 * pid inside those names is the namespace pid, and the connection is made with the
 * target's euid/egid (set on the calling thread only) because HotSpot checks them. */
#ifndef KILN_RUNTIMES_JAVA_ATTACH_H
#define KILN_RUNTIMES_JAVA_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define JVM_REASON_MAX 128

struct jvm_target {
	pid_t pid;		/* host pid */
	pid_t nspid;		/* the JVM's pid in its own namespace */
	uid_t uid;		/* effective ids of the JVM */
	gid_t gid;
	bool other_mntns;	/* the JVM sees another /tmp than kiln */
	bool sigquit_caught;	/* the JVM has installed its SIGQUIT handler (and, when
				 * the process is not called java, HotSpot's Signal
				 * Dispatcher thread runs) */
};

/* Lists the JVMs running now: processes that map libjvm.so (HotSpot) or libj9vm
 * (OpenJ9, to be skipped with a reason), whatever their name (java, javac, jsvc, a
 * launcher of their own, a program embedding a JVM through JNI). Writes up to max host
 * pids into pids and returns how many were found (may exceed max), or -errno. */
int jvm__list(pid_t *pids, size_t max);

/* Whether pid is a JVM by jvm__list's test: 1 yes; 0 no; -EAGAIN when it maps no JVM
 * library yet but its comm or executable is "java" (just exec'd: ask again later). */
int jvm__check(pid_t pid);

/* Whether a mapped file is a JVM library (libjvm.so, libj9vm*.so), by its name. */
bool jvm__is_jvm_lib(const char *path);

/* Reads what attaching to pid needs. Returns 0; -ENOENT when pid is gone or not a JVM;
 * -ENOTSUP with a reason (OpenJ9, attach disabled by an option) when it is a JVM kiln
 * must not touch. reason: JVM_REASON_MAX bytes, may be NULL. */
int jvm_target__probe(pid_t pid, struct jvm_target *t, char *reason);

/* Makes lib (an absolute path in kiln's mount namespace) loadable by the JVM: when the
 * JVM is in another mount namespace, copies it once into the JVM's /tmp under a name
 * that identifies its content (an existing copy is never rewritten: it may be mapped).
 * Writes the path the JVM must use into out (size bytes). Returns 0 or -errno. */
int jvm_target__place_lib(const struct jvm_target *t, const char *lib, char *out, size_t size);

/* Sends `load <lib> true <options>` to the JVM, starting its attach listener first when
 * needed, waiting at most timeout_ms for it. lib is a path in the JVM's namespace.
 * Returns 0 when Agent_OnAttach returned 0; otherwise a negative errno and a reason
 * ("JVM did not start its attach listener in 3000 ms", "agent: ..."). */
int jvm_target__load(const struct jvm_target *t, const char *lib, const char *options,
		     int timeout_ms, char *reason);

/* Same transport, any command: sends cmd with up to three args (NULL: empty) and writes
 * the JVM's reply (without the result code line) into reply. Returns the JVM's result
 * code (>= 0) or a negative errno with a reason. */
int jvm_target__command(const struct jvm_target *t, const char *cmd, const char *const args[3],
			int timeout_ms, char *reply, size_t reply_size, char *reason);

#endif
