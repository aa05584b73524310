/* The runtimes kiln knows, in the order the agent tries them on a process, and the
 * command-line options each declares. `kiln record` builds its options, its help text
 * and the run_arguments of the .col header from this table alone: adding a runtime is a
 * file pair under src/runtimes/, one line in registry.c, and its tests.
 *
 * Every runtime has a --<name>-mode option with its accepted values and default; the
 * values "disabled" and "none" turn it off (it then touches no process). A runtime may
 * declare extra flags: one that sets its mode (--no-java) or a boolean it reads from its
 * runtime_env (--java-collect-thread-names). Runtimes gProfiler has and kiln has no
 * reader for yet are declared too (ops NULL), so that their options keep being accepted. */
#ifndef KILN_RUNTIMES_REGISTRY_H
#define KILN_RUNTIMES_REGISTRY_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtimes/runtime.h"

/* An extra flag (no argument) a runtime declares. */
struct runtime_flag {
	const char *option;	/* "no-java": --no-java */
	const char *sets_mode;	/* non-NULL: the flag sets the mode to this value */
	const char *key;	/* otherwise: its run_arguments key, true when given
				 * ("java_collect_thread_names"), passed in runtime_env.flags */
	const char *help;	/* one line for the usage text */
};

struct runtime_decl {
	const char *name;			/* "python": --python-mode, "python_mode" */
	const struct runtime_ops *ops;		/* NULL: accepted, no reader yet */
	const char *const *modes;		/* accepted mode values, NULL-terminated */
	const char *default_mode;
	const char *help;			/* the usage line of --<name>-mode */
	const struct runtime_flag *flags;	/* NULL-terminated by option; may be NULL */
};

/* The declarations, NULL-terminated by name. */
extern const struct runtime_decl runtime_decls[];

/* An option with a value that a runtime declares (--php-proc-filter REGEX). Kept apart
 * from the mode options and flags: kiln record appends them with
 * runtime_cli__value_options(), and the runtime reads the value given from its
 * runtime_env (runtime_env__value). */
struct runtime_value_opt {
	const char *runtime;	/* "php": listed after its --php-mode in the usage */
	const char *option;	/* "php-proc-filter": --php-proc-filter VALUE */
	const char *arg;	/* "REGEX", for the usage text */
	const char *key;	/* run_arguments and runtime_env key: "php_proc_filter" */
	const char *help;
};

/* The value options, NULL-terminated by option. */
extern const struct runtime_value_opt runtime_value_opts[];

/* The ops of every declared runtime that has a reader, in declaration order (the order
 * the agent tries them), NULL-terminated: built once from runtime_decls, so that adding a
 * runtime is one line there. Never NULL; static storage. */
const struct runtime_ops *const *runtime_registry__ops(void);

/* The choices made on a command line: each runtime's mode and flags. A value type:
 * runtime_choices_init() gives the defaults; runtime_choices_release() frees it. */
struct runtime_choices {
	const char **modes;		/* per runtime_decls entry */
	bool *flags;			/* per declared flag, in declaration order */
	const char **given;		/* keys of the boolean flags given, NULL-terminated */
	const char **values;		/* key, value pairs of the value options given,
					 * NULL-terminated */
};

void runtime_choices_init(struct runtime_choices *c);
void runtime_choices_release(struct runtime_choices *c);
/* Initializes dst as a copy of src (the defaults when src is NULL). The strings are
 * shared: modes and keys live as long as the program (the registry's, or argv's). */
void runtime_choices_copy(struct runtime_choices *dst, const struct runtime_choices *src);

/* Appends the runtimes' long options to opts (at most max entries, not terminated),
 * with val numbered from first_val up. Returns the number appended. */
size_t runtime_cli__options(struct option *opts, size_t max, int first_val);
/* The number of long options runtime_cli__options() appends. */
size_t runtime_cli__nr_options(void);

/* Applies option number val (as returned by getopt for an option runtime_cli__options
 * appended with first_val) with argument arg (NULL for a flag). Returns 0, -EINVAL when
 * arg is not one of the runtime's modes, or -ENOENT when val is not a runtime option. */
int runtime_choices__apply(struct runtime_choices *c, int first_val, int val, const char *arg);

/* Appends the value options (runtime_value_opts) to opts (at most max, not terminated),
 * with val numbered from first_val up. Returns the number appended. */
size_t runtime_cli__value_options(struct option *opts, size_t max, int first_val);
/* Applies value option number val (numbered as by runtime_cli__value_options with
 * first_val) with argument arg: the last one given wins. Returns 0, -EINVAL when arg is
 * NULL, or -ENOENT when val is not a value option. */
int runtime_choices__apply_value(struct runtime_choices *c, int first_val, int val,
				 const char *arg);

/* Writes the runtimes' usage lines, in the layout of `kiln record --help`. */
void runtime_cli__usage(FILE *f);

/* Adds "<name>_mode" for each runtime and each boolean flag's key to obj, in
 * declaration order, then the key of each value option given with its value. */
void runtime_choices__to_json(const struct runtime_choices *c, json_t *obj);

/* Whether runtime name is on (its mode is not "disabled" or "none"). An unknown name is
 * on. */
bool runtime_choices__enabled(const struct runtime_choices *c, const char *name);
/* The mode of runtime name, or NULL when unknown. */
const char *runtime_choices__mode(const struct runtime_choices *c, const char *name);

#endif
