/* --nodejs-mode attach-maps (gProfiler's): a background thread has every node process the
 * agent sees load libkiln-nodeperf.so through its inspector (node_inspector.h), one
 * process at a time, so that it writes /tmp/perf-<pid>.map, which the symbolizer reads
 * as in perf mode; at the end each is told to stop writing the same way. Processes
 * started during the session are attached when they are seen; one that handles no
 * SIGUSR1 yet is asked again for a few seconds. */
#ifndef KILN_RUNTIMES_NODE_MAPS_H
#define KILN_RUNTIMES_NODE_MAPS_H

#include <sys/types.h>

struct node_maps;

/* Starts the thread. lib: libkiln-nodeperf.so, NULL for the one next to the running
 * binary. Returns NULL (with a message logged) when the library cannot be found or the
 * thread not started. */
struct node_maps *node_maps__start(const char *lib);

/* Process pid maps node (a runtime hook: cheap, never blocks): attach it soon, once. */
void node_maps__note(struct node_maps *m, pid_t pid);

/* Stops the thread, then tells every attached process that still runs to stop writing
 * its map and closes its inspector again (a few seconds per process at most). Frees m.
 * Accepts NULL. */
void node_maps__stop(struct node_maps *m);

#endif
