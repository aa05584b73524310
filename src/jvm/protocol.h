/* The file protocol between kiln and libkiln-jvm.so, the JVMTI agent it loads into JVMs.
 * Included by both sides (the agent is built without libkiln: this header is plain C).
 *
 * kiln loads the agent with the attach command `load <lib> true <options>`, options
 * "interval_ns=<N>,threads=<0|1>". The agent then lives in the JVM and talks to kiln
 * through three files in the JVM's own /tmp, named by the JVM's pid as the JVM sees it
 * (its namespace pid; kiln reaches them through /proc/<host pid>/root/tmp):
 *
 *   kiln-jvm-<nspid>.lock  held with flock() by the loaded agent: a second copy loaded
 *                          into the same JVM sees it taken and stays inert.
 *   kiln-jvm-<nspid>.ctl   written by kiln (atomically, by rename): one line
 *                          "<seq> run|flush|stop <kiln pid>\n" (the pid marks the one
 *                          kiln that owns this JVM; others skip it). It is also kiln's
 *                          heartbeat: kiln
 *                          rewrites it at least every KILN_JVM_HEARTBEAT_S seconds; when it
 *                          is missing or older than KILN_JVM_STALE_S, the agent stops
 *                          sampling (kiln died or left).
 *   kiln-jvm-<nspid>.col   written by the agent (atomically, by rename): the stacks counted
 *                          since the last flush. First line
 *                          "# kiln-jvm 1 seq=<S> samples=<N> lost=<L> final=<0|1> ..."
 *                          (then threads=<armed timers> notjava=<threads dropped>
 *                          writer_cpu_us=<the agent thread's CPU time so far>), then
 *                          "# tids <tid> ..." (threads that ran Java code, namespace tids),
 *                          then one "frame;frame;...;leaf <count>" line per stack, root
 *                          first. Written every second, and at once after a flush or stop
 *                          request with seq = the request's seq.
 *
 * A flush request makes the agent write its stacks with the request's seq and start
 * counting again from zero; stop does the same and then stops sampling. Run (or a newer
 * heartbeat) after stop starts sampling again. */
#ifndef KILN_JVM_PROTOCOL_H
#define KILN_JVM_PROTOCOL_H

#define KILN_JVM_VERSION 1
#define KILN_JVM_PREFIX "kiln-jvm-"
#define KILN_JVM_HEARTBEAT_S 2
#define KILN_JVM_STALE_S 15
#define KILN_JVM_HEADER "# kiln-jvm 1 "
#define KILN_JVM_TIDS "# tids"
/* Agent_OnAttach's return code when the JVM is not live yet: attach again later. */
#define KILN_JVM_RC_NOT_LIVE 75

#endif
