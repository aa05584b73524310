/* Naming Java frames inside the agent: jmethodID -> "pkg.Class.method" through JVMTI
 * (cached for the agent's life, so a class unloaded later keeps its name), the frame
 * type annotation, and thread names. Called from the writer thread only, except the
 * compiled-code and thread-name tables, which JVMTI callbacks fill under their locks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

static void sanitize_name(char *s);

static struct kj_map method_names;	/* jmethodID -> (char *) */
/* Java names of the threads that ran before the agent, by their first 15 bytes (what
 * Linux keeps as the thread's comm): hash -> (char *), or 1 when two names share it.
 * Filled once at attach, before the writer starts; read by the writer only. */
static struct kj_map prefix_names;

#define COMM_LEN 15

static uint64_t prefix_key(const char *name)
{
	size_t len = strlen(name);
	return kj_hash(name, len < COMM_LEN ? len : COMM_LEN);
}

void kj_note_thread_name(const char *name)
{
	uint64_t *slot = kj_map_insert(&prefix_names, prefix_key(name));

	if (!slot)
		return;
	if (!*slot) {
		char *copy = strdup(name);
		if (copy) {
			sanitize_name(copy);
			*slot = (uint64_t)(uintptr_t)copy;
		}
	} else if (*slot != 1 && strcmp((const char *)(uintptr_t)*slot, name)) {
		free((void *)(uintptr_t)*slot);
		*slot = 1;	/* ambiguous: keep the kernel's name */
	}
}

void kj_buf_add(struct kj_buf *b, const char *s, size_t len)
{
	if (b->failed)
		return;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void kj_buf_adds(struct kj_buf *b, const char *s)
{
	kj_buf_add(b, s, strlen(s));
}

/* Frames go into ';'-separated lines: keep the separators out of names. */
static void sanitize_name(char *s)
{
	for (; *s; s++)
		if (*s == ';')
			*s = ':';
		else if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static char *resolve(JNIEnv *env, jmethodID m)
{
	jclass klass = NULL;
	char *sig = NULL, *name = NULL, *out = NULL;
	size_t len;

	if ((*kj.jvmti)->GetMethodDeclaringClass(kj.jvmti, m, &klass) != JVMTI_ERROR_NONE ||
	    (*kj.jvmti)->GetClassSignature(kj.jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE ||
	    (*kj.jvmti)->GetMethodName(kj.jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE)
		goto done;
	/* "Lcom/example/Foo;" -> "com.example.Foo" */
	const char *cls = sig[0] == 'L' ? sig + 1 : sig;
	len = strlen(cls);
	if (len && cls[len - 1] == ';')
		len--;
	out = malloc(len + 1 + strlen(name) + 1);
	if (!out)
		goto done;
	memcpy(out, cls, len);
	for (size_t i = 0; i < len; i++)
		if (out[i] == '/')
			out[i] = '.';
	out[len] = '.';
	memcpy(out + len + 1, name, strlen(name) + 1);
	sanitize_name(out);
done:
	if (sig)
		(*kj.jvmti)->Deallocate(kj.jvmti, (unsigned char *)sig);
	if (name)
		(*kj.jvmti)->Deallocate(kj.jvmti, (unsigned char *)name);
	if (klass && env)
		(*env)->DeleteLocalRef(env, klass);
	return out;
}

const char *kj_method_name(JNIEnv *env, jmethodID m)
{
	uint64_t *slot = kj_map_find(&method_names, (uint64_t)(uintptr_t)m);
	char *name;

	if (slot)
		return (const char *)(uintptr_t)*slot;
	if (atomic_load(&kj.vm_dead))
		return NULL;
	name = resolve(env, m);
	if (!name)
		return NULL;
	slot = kj_map_insert(&method_names, (uint64_t)(uintptr_t)m);
	if (!slot) {
		free(name);
		return NULL;
	}
	*slot = (uint64_t)(uintptr_t)name;
	return name;
}

uint64_t kj_pair_key(jmethodID caller, jmethodID callee)
{
	uintptr_t pair[2] = { (uintptr_t)caller, (uintptr_t)callee };
	return kj_hash(pair, sizeof(pair));
}

/* Frame types from what the JIT reported (CompiledMethodLoad with its inlining records):
 * a frame whose caller frame runs compiled code that inlined this method is inlined;
 * otherwise a method with live compiled code is JIT-compiled; otherwise interpreted.
 * AsyncGetCallTrace itself does not say which; this is the closest a JVMTI agent gets. */
void kj_frame_types(const struct kj_frame *f, int n, char *types)
{
	char outer = 0;

	pthread_mutex_lock(&kj.code_lock);
	for (int i = n - 1; i >= 0; i--) {
		char t;
		if (f[i].lineno == -3)
			t = 'n';	/* native method */
		else if (outer && outer != '0' && outer != 'n' &&
			 kj_map_find(&kj.inlined, kj_pair_key(f[i + 1].method, f[i].method)))
			t = 'i';
		else if (kj_map_find(&kj.compiled, (uint64_t)(uintptr_t)f[i].method))
			t = 'j';
		else
			t = '0';
		types[i] = outer = t;
	}
	pthread_mutex_unlock(&kj.code_lock);
}

void kj_thread_name(pid_t tid, struct kj_buf *out)
{
	uint64_t *slot;
	char buf[64];

	pthread_mutex_lock(&kj.names_lock);
	slot = kj_map_find(&kj.names, (uint64_t)tid);
	if (slot && *slot) {
		kj_buf_adds(out, (const char *)(uintptr_t)*slot);
		pthread_mutex_unlock(&kj.names_lock);
		return;
	}
	pthread_mutex_unlock(&kj.names_lock);
	/* threads started before the agent: the kernel's (15-character) name */
	snprintf(buf, sizeof(buf), "/proc/self/task/%d/comm", (int)tid);
	FILE *f = fopen(buf, "re");
	const char *name = "thread";
	if (f && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		slot = kj_map_find(&prefix_names, prefix_key(buf));
		name = slot && *slot > 1 ? (const char *)(uintptr_t)*slot : buf;
		sanitize_name(buf);
	}
	if (f)
		fclose(f);
	kj_set_thread_name(tid, name);	/* read /proc once per thread */
	kj_buf_adds(out, name);
}

void kj_set_thread_name(pid_t tid, const char *name)
{
	char *copy = strdup(name);
	uint64_t *slot;

	if (!copy)
		return;
	sanitize_name(copy);
	pthread_mutex_lock(&kj.names_lock);
	if (kj.names.count >= 8192) {	/* thread churn: start over rather than grow */
		size_t pos = 0;
		uint64_t key, val;
		while (kj_map_next(&kj.names, &pos, &key, &val))
			free((void *)(uintptr_t)val);
		kj_map_release(&kj.names);
	}
	slot = kj_map_insert(&kj.names, (uint64_t)tid);
	if (slot) {
		free((void *)(uintptr_t)*slot);
		*slot = (uint64_t)(uintptr_t)copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&kj.names_lock);
	free(copy);
}
