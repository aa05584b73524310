/* The runtime readers kiln knows, in the order the agent tries them on a process. */
#ifndef KILN_RUNTIMES_REGISTRY_H
#define KILN_RUNTIMES_REGISTRY_H

#include "runtimes/runtime.h"

/* NULL-terminated. A reader is added here by adding its ops to registry.c. */
extern const struct runtime_ops *const runtime_registry[];

#endif
