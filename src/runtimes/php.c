/* The PHP runtime reader (see runtime.h): reads the PHP stack of a sampled php, php-fpm
 * or libphp*.so process out of the process with process_vm_readv, at the moment of the
 * sample, without stopping it. php_attach.c finds the engine; this file walks
 * executor_globals.current_execute_data -> prev_execute_data and keeps the functions it
 * has seen, to name them.
 *
 * A sample makes two reads when the stack is the one of the previous sample (a busy
 * loop): the frames remembered, with current_execute_data, in one batch; then every
 * frame's function and current opline, with current_execute_data and the newest frame
 * again, in another: the stack is kept only when the newest frame is still the one read
 * (the thread runs on while it is read), else read again, at most MAX_ATTEMPTS times. A
 * read that fails (the process exits or execs) cuts the stack there, the outermost frame
 * kept marked RT_FRAME_TRUNCATED. NTS builds run PHP on the main thread only. */
#include "runtimes/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtimes/php_proc.h"
#include "util/log.h"
#include "util/strbuf.h"

#define MAX_FNS 100000		/* functions (distinct names) remembered per process */
#define MAX_ADDRS 200000	/* function addresses remembered per process */
#define MAX_ATTEMPTS 3		/* walks of a stack that changed while read */

/* What an address held when last seen: its fingerprint and its function. */
struct php_fn_slot {
	struct php_fn_print print;
	uint64_t index;
};

/* ---- --php-proc-filter ---- */

static pthread_mutex_t filter_lock = PTHREAD_MUTEX_INITIALIZER;
static regex_t filter;
static int filter_users;	/* sessions that set it; 0: every PHP process */
static bool filter_invalid;	/* the regex given did not compile: no PHP process */

/* Appends /proc/<pid>/<what> (NULs as spaces) to sb. */
static void read_proc_text(pid_t pid, const char *what, struct strbuf *sb)
{
	char path[64], buf[4096];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fp = fopen(path, "re");
	if (!fp)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == 0))
		n--;
	for (size_t i = 0; i < n; i++)
		strbuf_addch(sb, buf[i] ? buf[i] : ' ');
}

/* Whether process pid passes the filter: its name (comm, as pgrep matches) or its
 * command line matches. */
static bool filter_passes(pid_t pid)
{
	struct strbuf comm = STRBUF_INIT, cmd = STRBUF_INIT;
	bool ok = true;

	pthread_mutex_lock(&filter_lock);
	if (filter_users && filter_invalid) {
		ok = false;
	} else if (filter_users) {
		read_proc_text(pid, "comm", &comm);
		read_proc_text(pid, "cmdline", &cmd);
		ok = (comm.len && !regexec(&filter, comm.buf, 0, NULL, 0)) ||
		     (cmd.len && !regexec(&filter, cmd.buf, 0, NULL, 0));
	}
	pthread_mutex_unlock(&filter_lock);
	strbuf_release(&comm);
	strbuf_release(&cmd);
	return ok;
}

struct runtime_collector {
	bool filtered;
};

static struct runtime_collector *php_start(const struct runtime_env *env)
{
	struct runtime_collector *c = xcalloc(1, sizeof(*c));
	const char *rx = runtime_env__value(env, "php_proc_filter");

	if (!rx || !rx[0])
		return c;
	pthread_mutex_lock(&filter_lock);
	if (filter_users) {
		/* one filter per program (kiln record's): a session started while
		 * another runs shares it */
		filter_users++;
		c->filtered = true;
	} else {
		filter_invalid = regcomp(&filter, rx, REG_EXTENDED | REG_NOSUB) != 0;
		if (filter_invalid)
			log_error("invalid --php-proc-filter '%s': no php process is profiled", rx);
		filter_users = 1;
		c->filtered = true;
	}
	pthread_mutex_unlock(&filter_lock);
	return c;
}

static void php_stop(struct runtime_collector *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&filter_lock);
	if (c->filtered && --filter_users == 0 && !filter_invalid)
		regfree(&filter);
	pthread_mutex_unlock(&filter_lock);
	free(c);
}

/* ---- processes and functions ---- */

static struct runtime_proc *php_attach(const struct proc_ref *p, char *skip_reason)
{
	struct runtime_proc *rp = xcalloc(1, sizeof(*rp));
	char reason[128] = "";
	int err;

	rp->pid = p->pid;
	err = php_attach__find(rp, p, reason);
	if (err == -ENOENT || !filter_passes(p->pid)) {
		free(rp);
		return NULL;
	}
	if (err < 0) {
		snprintf(skip_reason, 128, "%s", reason[0] ? reason : "unreadable php engine");
		free(rp);
		return NULL;
	}
	rp->fn_by_addr = hashmap__new();
	rp->fn_by_name = hashmap__new();
	return rp;
}

static void clear_slots(struct runtime_proc *rp)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	while (hashmap__next(rp->fn_by_addr, &it, &key, &len, &v))
		free(v);
	hashmap__clear(rp->fn_by_addr);
}

static void php_detach(struct runtime_proc *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->nr_fns; i++) {
		free(rp->fns[i]->name);
		free(rp->fns[i]->file);
		free(rp->fns[i]);
	}
	free(rp->fns);
	clear_slots(rp);
	hashmap__free(rp->fn_by_addr);
	hashmap__free(rp->fn_by_name);
	free(rp);
}

/* Appends the zend_string at addr to sb. Returns 0 or a negative errno. */
static int read_string(struct runtime_proc *rp, uint64_t addr, struct strbuf *sb)
{
	uint8_t buf[PHP_STR_READ + PHP_NAME_MAX];
	ssize_t n = php_read(rp->pid, addr, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return php_layout__string(&rp->l, buf, (size_t)n, sb);
}

/* Reads the names of the function whose fingerprint is f into name and file. Returns 0,
 * or a negative errno when they are unreadable. */
static int fn_read_names(struct runtime_proc *rp, const struct php_fn_print *f,
			 struct strbuf *name, struct strbuf *file)
{
	if (f->scope) {
		uint8_t ce[16];
		if (php_read(rp->pid, f->scope, ce, sizeof(ce)) != (ssize_t)sizeof(ce) ||
		    read_string(rp, php_rd64(ce, rp->l.ce_name), name) < 0)
			return -EFAULT;
		strbuf_addstr(name, "::");
	}
	if (f->name && read_string(rp, f->name, name) < 0)
		return -EFAULT;
	if (!f->name)
		strbuf_addstr(name, f->type == PHP_EVAL_CODE ? "<eval>" : "<main>");
	if (f->type != PHP_INTERNAL_FUNCTION && read_string(rp, f->file, file) < 0)
		return -EFAULT;
	return 0;
}

/* The index of the function named name in file (NULL: internal), added when new. */
static uint64_t fn_intern(struct runtime_proc *rp, struct strbuf *name, struct strbuf *file,
			  bool internal)
{
	struct strbuf key = STRBUF_INIT;
	struct php_fn *fn;
	bool created;
	void **slot;

	strbuf_addf(&key, "%c%s", internal ? 'i' : 'u', name->buf);
	strbuf_addch(&key, 0);
	strbuf_addstr(&key, file->buf);
	slot = hashmap__insert(rp->fn_by_name, key.buf, key.len, &created);
	strbuf_release(&key);
	if (!created)
		return (uint64_t)(uintptr_t)*slot - 1;
	if (rp->nr_fns == rp->alloc_fns) {
		rp->alloc_fns = rp->alloc_fns ? rp->alloc_fns * 2 : 256;
		rp->fns = xrealloc(rp->fns, rp->alloc_fns * sizeof(*rp->fns));
	}
	fn = xcalloc(1, sizeof(*fn));
	fn->name = strbuf_detach(name, NULL);
	fn->file = internal ? NULL : strbuf_detach(file, NULL);
	rp->fns[rp->nr_fns++] = fn;
	*slot = (void *)(uintptr_t)rp->nr_fns;
	return rp->nr_fns - 1;
}

uint64_t php_fn_index(struct runtime_proc *rp, uint64_t addr, const struct php_fn_print *f)
{
	struct strbuf name = STRBUF_INIT, file = STRBUF_INIT;
	struct php_fn_slot *sl;
	uint64_t index = PHP_UNKNOWN_FN;
	bool created;
	void **slot = hashmap__find(rp->fn_by_addr, &addr, sizeof(addr));

	if (slot && !memcmp(&((struct php_fn_slot *)*slot)->print, f, sizeof(*f)))
		return ((struct php_fn_slot *)*slot)->index;
	/* new, or another function at that address: a request of a php-fpm without opcache
	 * compiles its script again; a trampoline (__call) is one op_array for many methods */
	if (fn_read_names(rp, f, &name, &file) == 0 && rp->nr_fns < MAX_FNS)
		index = fn_intern(rp, &name, &file, f->type == PHP_INTERNAL_FUNCTION);
	strbuf_release(&name);
	strbuf_release(&file);
	if (index == PHP_UNKNOWN_FN)
		return index;
	if (!slot && hashmap__count(rp->fn_by_addr) >= MAX_ADDRS)
		clear_slots(rp);	/* bounded; what is dropped is read again */
	slot = hashmap__insert(rp->fn_by_addr, &addr, sizeof(addr), &created);
	if (created)
		*slot = xcalloc(1, sizeof(struct php_fn_slot));
	sl = *slot;
	memcpy(&sl->print, f, sizeof(*f));	/* padding too: compared with memcmp */
	sl->index = index;
	return index;
}

static void php_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	const struct php_fn *fn;

	if (!rp || f->id >= rp->nr_fns) {
		strbuf_addstr(out, "[unknown]_[php]");
		return;
	}
	fn = rp->fns[f->id];
	if (!fn->file)
		strbuf_addf(out, "%s_[php]", fn->name);
	else if (f->aux)
		strbuf_addf(out, "%s (%s:%u)_[php]", fn->name, fn->file, f->aux);
	else
		strbuf_addf(out, "%s (%s)_[php]", fn->name, fn->file);
}

static int php_sample(struct runtime_proc *rp, pid_t tid, struct rt_frame *frames, int max)
{
	int n = -EAGAIN;

	if (!rp || max <= 0 || tid != rp->pid)	/* NTS: PHP runs on the main thread */
		return 0;
	for (int attempt = 0; attempt < MAX_ATTEMPTS && n == -EAGAIN; attempt++)
		n = php_walk__stack(rp, frames, max);
	return n;
}

static const char *const php_interp_symbols[] = { "execute_ex", NULL };

static bool php_likely(const char *path)
{
	return php_file_name_matches(path);
}

const struct runtime_ops php_runtime = {
	.name = "php",
	.merge = RUNTIME_INTERLEAVE,
	.likely = php_likely,
	.interp_symbols = php_interp_symbols,
	.attach = php_attach,
	.sample = php_sample,
	.frame_name = php_name,
	.detach = php_detach,
	.start = php_start,
	.stop = php_stop,
};
