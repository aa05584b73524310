#include "runtimes/registry.h"

#include <stddef.h>

/* Each runtime reader adds its ops here (e.g. &python_runtime). */
const struct runtime_ops *const runtime_registry[] = {
	NULL,
};
