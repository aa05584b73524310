/* Frame and thread naming inside the agent (see names.c). */
#ifndef KILN_JVM_NAMES_H
#define KILN_JVM_NAMES_H

#include <stddef.h>

#include "jvm.h"

/* A growable string; on allocation failure it stops growing and sets failed. */
struct kj_buf {
	char *p;
	size_t len, cap;
	bool failed;
};
void kj_buf_add(struct kj_buf *b, const char *s, size_t len);
void kj_buf_adds(struct kj_buf *b, const char *s);

/* "pkg.Class.method" of m, cached; NULL when JVMTI cannot name it. Writer thread only. */
const char *kj_method_name(JNIEnv *env, jmethodID m);
/* The key of "callee was inlined into caller" in kj.inlined. */
uint64_t kj_pair_key(jmethodID caller, jmethodID callee);
/* Writes one type per frame of f[0..n) (leaf first, as AsyncGetCallTrace gives them):
 * 'j' JIT-compiled, 'i' inlined, '0' interpreted, 'n' native method. */
void kj_frame_types(const struct kj_frame *f, int n, char *types);
/* Appends the name of thread tid: from ThreadStart, else from /proc/self/task. */
void kj_thread_name(pid_t tid, struct kj_buf *out);
/* Remembers the Java name of a thread that started before the agent, so that its kernel
 * name (cut at 15 bytes) can be completed. Call before the writer starts. */
void kj_note_thread_name(const char *name);
/* Records the Java name of thread tid (ThreadStart). */
void kj_set_thread_name(pid_t tid, const char *name);

#endif
