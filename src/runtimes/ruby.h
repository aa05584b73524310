/* The CRuby reader (ruby*.c): an interleave-kind runtime (runtime.h) for Ruby 2.7-3.4
 * processes, the ruby executable or any program that maps libruby. */
#ifndef KILN_RUNTIMES_RUBY_H
#define KILN_RUNTIMES_RUBY_H

#include "runtimes/runtime.h"

/* Its ops; registry.c lists it as "ruby". */
extern const struct runtime_ops ruby_runtime;

#endif
