/* libkiln-nodeperf.so: an N-API module (C ABI, napi_register_module_v1) that makes a
 * running node write a perf map, for --nodejs-mode attach-maps (see protocol.h for its
 * exports). V8's C++ API is reached by the mangled names of two functions node exports,
 * v8::Isolate::GetCurrent() and v8::Isolate::SetJitCodeEventHandler(options, handler),
 * found with dlsym, so no C++ is compiled here.
 *
 * struct jit_event mirrors v8::JitCodeEvent (include/v8-callbacks.h), x86-64 and arm64:
 * type and code_type (4-byte enums) at 0 and 4, code_start 8, code_len 16, script 24,
 * user_data 32, wasm_source_info 40, the union (name: str 48, len 56; new_code_start 48)
 * and isolate 72. layout_check.cc asserts it against the installed node headers at every
 * build (Node 20's, V8 11.3, here); Debian's libnode-dev 18.20.4 (V8 10.2) and the V8
 * sources shipped with Node 16 (v8.h) and Node 22 (V8 12.4) have the same fields in the
 * same order; Node 24 (V8 13.6) is not checked. A node without the two symbols gets
 * "error: ..." from start() and is left alone.
 *
 * start() on the main thread opens the map; start() on a worker thread while it is open
 * installs the same handler on the worker's isolate (each isolate has its own). The
 * handler never harms the target: it runs in V8's threads (each isolate's thread, and GC
 * threads for CODE_MOVED; the lock orders them), allocates nothing (one table, made by
 * start()), writes one bounded line per event with write(2), ignores every error, stops
 * at KILN_NODEPERF_MAX_BYTES, and goes quiet when kiln is gone. */
#define NAPI_VERSION 8
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <node_api.h>

#include "protocol.h"

#define SYM_GET_CURRENT "_ZN2v87Isolate10GetCurrentEv"
#define SYM_SET_HANDLER \
	"_ZN2v87Isolate22SetJitCodeEventHandlerENS_19JitCodeEventOptionsEPFvPKNS_12JitCodeEventEE"
#define MAX_NAME 480		/* bytes of a name written */
#define NR_MOVES 65536		/* code start -> its line, to name code that moved */

enum { CODE_ADDED, CODE_MOVED, CODE_REMOVED };
enum { BYTE_CODE, JIT_CODE, WASM_CODE };
enum { ENUM_DEFAULT = 0, ENUM_EXISTING = 1 };

struct jit_event {
	int type;
	int code_type;
	void *code_start;
	size_t code_len;
	void *script;
	void *user_data;
	void *wasm_source_info;
	union {
		struct {
			const char *str;
			size_t len;
		} name;
		struct {
			size_t offset, pos;
			int position_type;
		} line_info;		/* the largest: the union is 24 bytes */
		void *new_code_start;
	};
	void *isolate;
};

_Static_assert(sizeof(struct jit_event) == 80 && offsetof(struct jit_event, isolate) == 72,
	       "v8::JitCodeEvent is 80 bytes on LP64");

typedef void (*jit_handler)(const struct jit_event *);
typedef void *(*get_current_fn)(void);
typedef void (*set_handler_fn)(void *isolate, int options, jit_handler h);

/* A line of the map, by the code's start: where it was written, to copy its name when the
 * code moves. Direct-mapped: a collision forgets the older one. */
struct line_ref {
	uintptr_t start;
	uint64_t off;
	uint32_t len;
};

static struct {
	pthread_mutex_t lock;
	atomic_bool on;
	int fd;
	uint64_t bytes;			/* written since start */
	uint64_t lines;
	pid_t owner;
	struct timespec checked;	/* when the owner was last looked for */
	void *isolate;
	set_handler_fn set_handler;
	struct line_ref *refs;		/* NR_MOVES, NULL when it could not be made */
} st = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static size_t ref_slot(uintptr_t start)
{
	uint64_t h = (uint64_t)start * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 48) & (NR_MOVES - 1);
}

/* Writes one line (lock held). Returns its length, 0 when nothing was written. */
static size_t put_line(uintptr_t start, size_t len, const char *name, size_t name_len)
{
	char line[MAX_NAME + 64];
	int n = snprintf(line, sizeof(line), "%" PRIxPTR " %zx ", start, len);

	if (n <= 0 || st.fd < 0)
		return 0;
	if (name_len > MAX_NAME)
		name_len = MAX_NAME;
	for (size_t i = 0; i < name_len; i++) {
		char c = name[i];
		line[n++] = c == '\n' || c == '\r' || c == '\0' ? ' ' : c;
	}
	if (!name_len)
		line[n++] = '?';
	line[n++] = '\n';
	if (st.bytes + (uint64_t)n > KILN_NODEPERF_MAX_BYTES)
		return 0;
	ssize_t w = write(st.fd, line, (size_t)n);
	if (w != n)
		return 0;
	st.bytes += (uint64_t)n;
	st.lines++;
	return (size_t)n;
}

static void remember(uintptr_t start, uint64_t off, size_t len)
{
	if (st.refs && len)
		st.refs[ref_slot(start)] = (struct line_ref){ start, off, (uint32_t)len };
}

/* Code moved (a compacting GC): the name of its line at the old start, at the new one. */
static void moved(uintptr_t from, uintptr_t to, size_t size)
{
	struct line_ref *r = st.refs ? &st.refs[ref_slot(from)] : NULL;
	char line[MAX_NAME + 64];

	if (!r || r->start != from || r->len > sizeof(line))
		return;
	ssize_t n = pread(st.fd, line, r->len, (off_t)r->off);
	r->start = 0;
	if (n != (ssize_t)r->len)
		return;
	/* "START SIZE name\n": the name follows the second space */
	char *sp = memchr(line, ' ', (size_t)n);
	sp = sp ? memchr(sp + 1, ' ', (size_t)(line + n - sp - 1)) : NULL;
	if (!sp)
		return;
	uint64_t off = st.bytes;
	size_t name_len = (size_t)(line + n - 1 - (sp + 1));
	remember(to, off, put_line(to, size, sp + 1, name_len));
}

/* Whether kiln, which asked for the map, is gone: looked at once a second at most. */
static bool owner_gone(void)
{
	struct timespec now;

	if (st.owner <= 0 || clock_gettime(CLOCK_MONOTONIC_COARSE, &now) < 0 ||
	    now.tv_sec - st.checked.tv_sec < 1)
		return false;
	st.checked = now;
	return kill(st.owner, 0) < 0 && errno == ESRCH;
}

static void on_event(const struct jit_event *e)
{
	int saved = errno;

	if (!e || !atomic_load(&st.on))
		return;
	pthread_mutex_lock(&st.lock);
	if (st.fd < 0 || !atomic_load(&st.on)) {
		pthread_mutex_unlock(&st.lock);
		errno = saved;
		return;
	}
	if (owner_gone()) {
		atomic_store(&st.on, false);	/* kiln did not say stop: stop anyway */
		close(st.fd);
		st.fd = -1;
	} else if (e->type == CODE_ADDED && e->code_type != BYTE_CODE && e->code_start) {
		uint64_t off = st.bytes;
		size_t n = put_line((uintptr_t)e->code_start, e->code_len, e->name.str,
				    e->name.str ? e->name.len : 0);
		remember((uintptr_t)e->code_start, off, n);
	} else if (e->type == CODE_MOVED && e->code_start && e->new_code_start) {
		moved((uintptr_t)e->code_start, (uintptr_t)e->new_code_start, e->code_len);
	}
	pthread_mutex_unlock(&st.lock);
	errno = saved;
}

static napi_value make_string(napi_env env, const char *s)
{
	napi_value v = NULL;

	napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
	return v;
}

static napi_value js_start(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1];
	int32_t owner = 0;
	char path[64], msg[160];

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1)
		napi_get_value_int32(env, argv[0], &owner);
	get_current_fn get_current = (get_current_fn)dlsym(RTLD_DEFAULT, SYM_GET_CURRENT);
	set_handler_fn set_handler = (set_handler_fn)dlsym(RTLD_DEFAULT, SYM_SET_HANDLER);
	void *isolate = get_current ? get_current() : NULL;
	if (!get_current || !set_handler || !isolate)
		return make_string(env, "error: node exports no v8::Isolate::SetJitCodeEventHandler");
	if (atomic_load(&st.on)) {
		/* a worker thread's isolate (the map is open): its code goes to the same map;
		 * its handler stays when stop() is called on the main thread, quiet while off */
		if (isolate != st.isolate)
			set_handler(isolate, ENUM_EXISTING, on_event);
		return make_string(env, "ok");
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "error: failed to open '%s': %s", path, strerror(errno));
		return make_string(env, msg);
	}
	pthread_mutex_lock(&st.lock);
	if (!st.refs)
		st.refs = calloc(NR_MOVES, sizeof(*st.refs));	/* once: kept while loaded */
	else
		memset(st.refs, 0, NR_MOVES * sizeof(*st.refs));
	st.fd = fd;
	st.bytes = st.lines = 0;
	st.owner = owner > 0 ? owner : 0;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &st.checked);
	st.isolate = isolate;
	st.set_handler = set_handler;
	atomic_store(&st.on, true);
	pthread_mutex_unlock(&st.lock);
	/* calls on_event for the existing code before it returns: no lock held here */
	set_handler(isolate, ENUM_EXISTING, on_event);
	return make_string(env, "ok");
}

static napi_value js_stop(napi_env env, napi_callback_info info)
{
	napi_value v = NULL;
	uint64_t lines;

	(void)info;
	if (st.set_handler && st.isolate)
		st.set_handler(st.isolate, ENUM_DEFAULT, NULL);
	pthread_mutex_lock(&st.lock);
	atomic_store(&st.on, false);
	if (st.fd >= 0)
		close(st.fd);
	st.fd = -1;
	lines = st.lines;
	pthread_mutex_unlock(&st.lock);
	napi_create_double(env, (double)lines, &v);
	return v;
}

static void export_fn(napi_env env, napi_value exports, const char *name, napi_callback cb)
{
	napi_value fn;

	if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok)
		napi_set_named_property(env, exports, name, fn);
}

NAPI_MODULE_EXPORT napi_value napi_register_module_v1(napi_env env, napi_value exports);

NAPI_MODULE_EXPORT napi_value napi_register_module_v1(napi_env env, napi_value exports)
{
	export_fn(env, exports, "start", js_start);
	export_fn(env, exports, "stop", js_stop);
	return exports;
}
