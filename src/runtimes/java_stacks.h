/* Internal to runtimes/java*.c: the agent's stacks file on kiln's side. */
#ifndef KILN_RUNTIMES_JAVA_STACKS_H
#define KILN_RUNTIMES_JAVA_STACKS_H

#include "runtimes/java.h"

/* Parses the agent's stacks file text (modified in place) into r, which must have pid
 * set: adds the stacks to r->stacks (created when NULL) and the Java threads, mapped from
 * the JVM's namespace ids (nspid != r->pid) to host ids, to r->tids. Writes the file's
 * seq. Returns 0, or -EPROTO when the header is not the agent's. Malformed stack lines
 * are skipped. */
int java_stacks__parse(struct java_result *r, char *text, pid_t nspid, uint64_t *seq);

/* Frees r's stacks and tids and zeroes it. */
void java_result_release(struct java_result *r);

#endif
