/* What kiln and libkiln-nodeperf.so, the N-API module it loads into node processes for
 * --nodejs-mode attach-maps, agree on (src/runtimes/node_inspector.c evaluates these
 * expressions in the process through its inspector). The module's exports:
 *
 *   start(ownerPid)  installs V8's JIT code event handler on the calling (main) isolate,
 *                    enumerating the code that exists, and from then on appends a line
 *                    "START SIZE name" (hex, hex, V8's name) per code object to
 *                    /tmp/perf-<pid>.map (pid as the process sees itself), which it
 *                    truncates first. ownerPid (0: none) is kiln's pid as the process
 *                    sees it: when that process is gone (kiln was killed before it could
 *                    call stop()), the module stops writing by itself, checking at most
 *                    once a second. Returns "ok" or "error: <what failed>". Called
 *                    on a worker thread once the main thread's start() has opened the
 *                    map, it installs the handler on that worker's isolate too (its
 *                    code goes to the same map; ownerPid is not looked at).
 *   stop()           removes the main isolate's handler and closes the map (which
 *                    stays, for the symbolizer); the workers' handlers stay, writing
 *                    nothing until the next start(). Returns the number of lines
 *                    written since start.
 *
 * globalThis[Symbol.for(KILN_NODEPERF_KEY)] keeps { exports, session } so that the stop of
 * a later inspector session finds them: session is the in-process inspector session
 * (require('inspector').Session, no port) whose NodeWorker domain has each worker thread,
 * running or started later, evaluate start() too; the stop disconnects it. */
#ifndef KILN_NODEPERF_PROTOCOL_H
#define KILN_NODEPERF_PROTOCOL_H

#define KILN_NODEPERF_KEY "kiln.nodeperf"
#define KILN_NODEPERF_MAX_BYTES (64u << 20)	/* the map is never written past this */

#endif
