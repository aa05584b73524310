#include "runtimes/registry.h"

#include <stddef.h>

/* Each runtime reader adds its ops here. */
const struct runtime_ops *const runtime_registry[] = {
	&python_runtime,
	NULL,
};
