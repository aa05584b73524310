/* The runtime table and the command-line options it declares (registry.h). */
#include "runtimes/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/ruby.h"
#include "util/strbuf.h"

static const char *const python_modes[] = { "auto", "pyperf", "pyspy", "py-spy", "disabled",
					    "none", NULL };
static const char *const java_modes[] = { "auto", "ap", "disabled", "none", NULL };
/* rbspy is gProfiler's name for its Ruby profiler: kiln's reader takes its place */
static const char *const ruby_modes[] = { "auto", "enabled", "rbspy", "disabled", "none", NULL };
/* auto: kiln's reader of V8's frames; perf: the perf map node writes (gProfiler's);
 * attach-maps (gProfiler's inspector route) is accepted and runs the reader: it needs no
 * inspector */
static const char *const nodejs_modes[] = { "auto", "perf", "attach-maps", "disabled",
					    "none", NULL };
/* dotnet-trace is gProfiler's name for its .NET profiler: kiln's EventPipe client takes its place */
static const char *const dotnet_modes[] = { "auto", "dotnet-trace", "disabled", "none", NULL };
static const char *const php_modes[] = { "auto", "phpspy", "enabled", "disabled", "none", NULL };

static const struct runtime_flag java_flags[] = {
	{ "no-java", "disabled", NULL, NULL },
	{ "java-collect-thread-names", NULL, "java_collect_thread_names",
	  "add Java thread names" },
	{ NULL, NULL, NULL, NULL },
};
static const struct runtime_flag ruby_flags[] = {
	{ "no-ruby", "disabled", NULL, NULL },
	{ NULL, NULL, NULL, NULL },
};

/* Each runtime adds its line here; the order is the order the agent tries them. */
const struct runtime_decl runtime_decls[] = {
	{ "python", &python_runtime, python_modes, "auto", "auto or disabled (auto)", NULL },
	{ "java", &java_runtime, java_modes, "auto", "auto or disabled (auto)", java_flags },
	{ "nodejs", &node_runtime, nodejs_modes, "auto", "auto, perf, attach-maps or none (auto)", NULL },
	{ "ruby", &ruby_runtime, ruby_modes, "auto", "auto or disabled (auto)", ruby_flags },
	{ "php", &php_runtime, php_modes, "auto", "auto (phpspy) or disabled (auto)", NULL },
	{ "dotnet", &dotnet_runtime, dotnet_modes, "auto", "auto (EventPipe) or disabled (auto)", NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct runtime_value_opt runtime_value_opts[] = {
	{ "php", "php-proc-filter", "REGEX", "php_proc_filter",
	  "only PHP processes whose name or command line match" },
	{ NULL, NULL, NULL, NULL, NULL },
};

#define MAX_RUNTIMES 32
static const struct runtime_ops *registry_ops[MAX_RUNTIMES + 1];
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void registry_fill(void)
{
	size_t n = 0;

	for (const struct runtime_decl *d = runtime_decls; d->name && n < MAX_RUNTIMES; d++)
		if (d->ops)
			registry_ops[n++] = d->ops;
}

const struct runtime_ops *const *runtime_registry__ops(void)
{
	pthread_once(&registry_once, registry_fill);
	return registry_ops;
}

static size_t nr_decls(void)
{
	size_t n = 0;

	while (runtime_decls[n].name)
		n++;
	return n;
}

static size_t nr_flags(const struct runtime_decl *d)
{
	size_t n = 0;

	while (d->flags && d->flags[n].option)
		n++;
	return n;
}

static size_t nr_value_opts(void)
{
	size_t n = 0;

	while (runtime_value_opts[n].option)
		n++;
	return n;
}

static size_t total_flags(void)
{
	size_t n = 0;

	for (const struct runtime_decl *d = runtime_decls; d->name; d++)
		n += nr_flags(d);
	return n;
}

void runtime_choices_init(struct runtime_choices *c)
{
	size_t n = nr_decls();

	c->modes = xcalloc(n + 1, sizeof(*c->modes));
	for (size_t i = 0; i < n; i++)
		c->modes[i] = runtime_decls[i].default_mode;
	c->flags = xcalloc(total_flags() + 1, sizeof(*c->flags));
	c->given = xcalloc(total_flags() + 1, sizeof(*c->given));
	c->values = xcalloc(2 * nr_value_opts() + 1, sizeof(*c->values));
}

void runtime_choices_copy(struct runtime_choices *dst, const struct runtime_choices *src)
{
	size_t nf = total_flags();

	runtime_choices_init(dst);
	if (!src)
		return;
	memcpy(dst->modes, src->modes, nr_decls() * sizeof(*dst->modes));
	memcpy(dst->flags, src->flags, nf * sizeof(*dst->flags));
	memcpy(dst->given, src->given, (nf + 1) * sizeof(*dst->given));
	memcpy(dst->values, src->values, (2 * nr_value_opts() + 1) * sizeof(*dst->values));
}

void runtime_choices_release(struct runtime_choices *c)
{
	free(c->modes);
	free(c->flags);
	free(c->given);
	free(c->values);
	memset(c, 0, sizeof(*c));
}

size_t runtime_cli__nr_options(void)
{
	return nr_decls() + total_flags();
}

/* Option k (0-based, in runtime_cli__options order): the mode option of a declaration
 * (*flag = -1) or one of its flags (*flag >= 0, *flat its index among all flags). */
static const struct runtime_decl *option_at(size_t k, int *flag, size_t *flat)
{
	size_t n = 0, f = 0;

	for (const struct runtime_decl *d = runtime_decls; d->name; d++) {
		if (k == n++) {
			*flag = -1;
			return d;
		}
		for (size_t i = 0; i < nr_flags(d); i++, f++)
			if (k == n++) {
				*flag = (int)i;
				*flat = f;
				return d;
			}
	}
	return NULL;
}

size_t runtime_cli__options(struct option *opts, size_t max, int first_val)
{
	static char names[64][40];	/* "<name>-mode", for the life of the program */
	size_t n = 0, k = 0;

	for (const struct runtime_decl *d = runtime_decls; d->name && n < max; d++, k++) {
		snprintf(names[k % 64], sizeof(names[0]), "%s-mode", d->name);
		opts[n] = (struct option){ names[k % 64], required_argument, NULL,
					   first_val + (int)n };
		n++;
		for (size_t i = 0; i < nr_flags(d) && n < max; i++, n++)
			opts[n] = (struct option){ d->flags[i].option, no_argument, NULL,
						   first_val + (int)n };
	}
	return n;
}

static bool mode_in(const char *mode, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (!strcmp(mode, *allowed))
			return true;
	return false;
}

int runtime_choices__apply(struct runtime_choices *c, int first_val, int val, const char *arg)
{
	const struct runtime_decl *d;
	size_t flat = 0, nr_given = 0;
	int flag = -1;

	if (val < first_val || (size_t)(val - first_val) >= runtime_cli__nr_options())
		return -ENOENT;
	d = option_at((size_t)(val - first_val), &flag, &flat);
	if (!d)
		return -ENOENT;
	if (flag < 0) {
		if (!arg || !mode_in(arg, d->modes))
			return -EINVAL;
		c->modes[d - runtime_decls] = arg;
		return 0;
	}
	if (d->flags[flag].sets_mode) {
		c->modes[d - runtime_decls] = d->flags[flag].sets_mode;
		return 0;
	}
	c->flags[flat] = true;
	/* the keys of the boolean flags given, in declaration order */
	flat = 0;
	for (const struct runtime_decl *e = runtime_decls; e->name; e++)
		for (size_t i = 0; i < nr_flags(e); i++, flat++)
			if (c->flags[flat] && e->flags[i].key)
				c->given[nr_given++] = e->flags[i].key;
	c->given[nr_given] = NULL;
	return 0;
}

size_t runtime_cli__value_options(struct option *opts, size_t max, int first_val)
{
	size_t n = 0;

	for (; n < nr_value_opts() && n < max; n++)
		opts[n] = (struct option){ runtime_value_opts[n].option, required_argument, NULL,
					   first_val + (int)n };
	return n;
}

int runtime_choices__apply_value(struct runtime_choices *c, int first_val, int val,
				 const char *arg)
{
	const char *key;
	size_t i = 0;

	if (val < first_val || (size_t)(val - first_val) >= nr_value_opts())
		return -ENOENT;
	if (!arg)
		return -EINVAL;
	key = runtime_value_opts[val - first_val].key;
	while (c->values[i] && strcmp(c->values[i], key))
		i += 2;
	c->values[i] = key;
	c->values[i + 1] = arg;
	return 0;
}

void runtime_cli__usage(FILE *f)
{
	for (const struct runtime_decl *d = runtime_decls; d->name; d++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "      --%s-mode MODE", d->name);
		for (size_t i = 0; i < nr_flags(d); i++)
			if (d->flags[i].sets_mode)
				strbuf_addf(&sb, ", --%s", d->flags[i].option);
		fprintf(f, "%-32s%s%s\n", sb.buf, sb.len >= 32 ? "  " : "", d->help);
		for (size_t i = 0; i < nr_flags(d); i++)
			if (!d->flags[i].sets_mode)
				fprintf(f, "      --%-24s%s%s\n", d->flags[i].option,
					strlen(d->flags[i].option) >= 24 ? "  " : "",
					d->flags[i].help ? d->flags[i].help : "");
		for (const struct runtime_value_opt *v = runtime_value_opts; v->option; v++) {
			if (strcmp(v->runtime, d->name))
				continue;
			strbuf_reset(&sb);
			strbuf_addf(&sb, "      --%s %s", v->option, v->arg);
			fprintf(f, "%-32s%s%s\n", sb.buf, sb.len >= 32 ? "  " : "", v->help);
		}
		strbuf_release(&sb);
	}
}

void runtime_choices__to_json(const struct runtime_choices *c, json_t *obj)
{
	size_t flat = 0;

	for (size_t i = 0; runtime_decls[i].name; i++) {
		const struct runtime_decl *d = &runtime_decls[i];
		char key[48];
		snprintf(key, sizeof(key), "%s_mode", d->name);
		json_object_set_new(obj, key, json_string(c->modes[i]));
		for (size_t k = 0; k < nr_flags(d); k++, flat++)
			if (d->flags[k].key)
				json_object_set_new(obj, d->flags[k].key, json_boolean(c->flags[flat]));
	}
	for (size_t i = 0; c->values[i]; i += 2)
		json_object_set_new(obj, c->values[i], json_string(c->values[i + 1]));
}

const char *runtime_choices__mode(const struct runtime_choices *c, const char *name)
{
	for (size_t i = 0; runtime_decls[i].name; i++)
		if (!strcmp(runtime_decls[i].name, name))
			return c->modes[i];
	return NULL;
}

bool runtime_choices__enabled(const struct runtime_choices *c, const char *name)
{
	const char *mode = runtime_choices__mode(c, name);

	return !mode || (strcmp(mode, "disabled") && strcmp(mode, "none"));
}
