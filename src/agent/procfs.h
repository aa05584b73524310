/* What the agent reads about a process from /proc: its name, namespace pid, container
 * and executable mappings. Every reader tolerates a process that exits mid-read (it then
 * returns an error) and never trusts the text it parses. */
#ifndef KILN_AGENT_PROCFS_H
#define KILN_AGENT_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

#include "symbols/mapping.h"

/* Copies /proc/PID/comm (without the newline) into buf. Returns 0 or a negative errno. */
int procfs__comm(pid_t pid, char *buf, size_t len);

/* The pid of PID in its own (innermost) PID namespace, from the NSpid line of
 * /proc/PID/status; pid itself when there is none or it cannot be read. */
pid_t procfs__nspid(pid_t pid);

/* The container of PID, from the 64-hex-digit container id in /proc/PID/cgroup (Docker,
 * containerd, CRI-O, Podman, Kubernetes): Docker's name for it when
 * /var/lib/docker/containers/ID/config.v2.json gives one, else the id's first 12 digits.
 * Writes "" when PID is not in a container. */
void procfs__container(pid_t pid, char *buf, size_t len);

/* Calls fn for every executable mapping in /proc/PID/maps, in address order. m->path is
 * valid only during the call. Returns the number of mappings, or a negative errno. */
int procfs__maps(pid_t pid, void (*fn)(void *ctx, const struct mapping *m), void *ctx);

#endif
