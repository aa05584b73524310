/* Profile type ids: what kind of profile a stored series holds, written as Pyroscope
 * writes them, "name:type:unit:period_type:period_unit" (e.g.
 * "process_cpu:cpu:nanoseconds:cpu:nanoseconds", "memory:alloc_space:bytes:space:bytes"),
 * and the legacy names that came before them ("app.cpu", "app.alloc_objects"). */
#ifndef KILN_PROFILE_PTYPE_H
#define KILN_PROFILE_PTYPE_H

#include <stdbool.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* The type of CPU samples that agents (kiln's, gProfiler's) and collapsed stacks send:
 * the default of a query that names no type. */
#define PTYPE_CPU_SAMPLES "process_cpu:samples:count:cpu:nanoseconds"

/* Appends the id of sample type index of p to out: the Pyroscope name given (NULL: the
 * one ptype__name gives), the sample type, the period's type and unit (those of the
 * sample type itself when p has no period). */
void ptype__id(struct strbuf *out, const struct profile *p, size_t index, const char *name);

/* Pyroscope's profile name for a sample type: "process_cpu" (samples, cpu), "wall",
 * "memory" (space, objects: alloc_* and inuse_*), "mutex" (contentions, delay),
 * "goroutine", else the type itself. A static string, or type. */
const char *ptype__name(const char *type);

/* The legacy service-name suffix of a sample type ("samples" and "cpu": "cpu",
 * "space": "inuse_space", "contentions": "mutex_count", ...), or NULL for a type that has
 * none. Types with a suffix rank by *rank (lower first: the one a legacy name meant when
 * a profile has several). */
const char *ptype__suffix(const char *type, int *rank);

/* The id a legacy name's suffix stands for ("cpu": PTYPE_CPU_SAMPLES, "alloc_objects":
 * "memory:alloc_objects:count:space:bytes", ...), or NULL when the suffix is none of
 * them. */
const char *ptype__legacy(const char *suffix);

/* The type a legacy service name stands for: the id of its suffix (ptype__legacy), CPU
 * samples (PTYPE_CPU_SAMPLES) for a name without one. A static string. */
const char *ptype__of_service(const char *service);

/* Pyroscope's render "units" for a sample type: "bytes", "objects" or "samples" (CPU
 * time and goroutines too, as kiln has always said). */
const char *ptype__units(const char *type, const char *unit);

/* Makes the empty profile p one of type id: its sample type and its period's type and
 * unit (value 0: an id has no period value). Ids of "samples"/"count" leave p as it is
 * (collapsed stacks' default). Returns 0, -EINVAL for a malformed id, -EBUSY when p has
 * stacks. */
int ptype__apply(struct profile *p, const char *id);

/* True when s can be the name part of an id: a non-empty [A-Za-z0-9_.-]{1,64}. */
bool ptype__valid_name(const char *s);

/* True when s looks like a profile type id (five ':'-separated non-empty fields of
 * [A-Za-z0-9_.-]). */
bool ptype__valid(const char *s);

#endif
