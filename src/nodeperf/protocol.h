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
 *                    once a second. Returns "ok" or "error: <what failed>".
 *   stop()           removes the handler and closes the map (which stays, for the
 *                    symbolizer). Returns the number of lines written since start.
 *
 * The exports object is kept as globalThis[Symbol.for(KILN_NODEPERF_KEY)] so that the stop
 * of a later inspector session finds it. */
#ifndef KILN_NODEPERF_PROTOCOL_H
#define KILN_NODEPERF_PROTOCOL_H

#define KILN_NODEPERF_KEY "kiln.nodeperf"
#define KILN_NODEPERF_MAX_BYTES (64u << 20)	/* the map is never written past this */

#endif
