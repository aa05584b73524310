/* Internals of libkiln-jvm.so, the JVMTI agent kiln loads into HotSpot JVMs (see
 * protocol.h for how it talks to kiln).
 *
 * Three parts:
 *   sampler.c  per-thread CPU timers that send SIGPROF to the thread that used the CPU;
 *              the handler calls AsyncGetCallTrace into a preallocated lock-free ring.
 *   writer.c   one agent thread: drains the ring, names the frames through JVMTI (cached),
 *              counts stacks, obeys kiln's control file and writes the stacks file.
 *   agent.c    Agent_OnLoad / Agent_OnAttach, JVMTI capabilities and callbacks.
 *
 * Nothing here may crash or stall the JVM: the signal handler only touches atomics and
 * preallocated memory, and every failure turns the agent off rather than abort. */
#ifndef KILN_JVM_JVM_H
#define KILN_JVM_JVM_H

#include <jni.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define KJ_MAX_DEPTH 256	/* frames kept per sample (deeper stacks are cut at the root) */
#define KJ_RING_SLOTS 256	/* samples buffered between two drains (power of two) */

/* AsyncGetCallTrace's frame and trace, as HotSpot defines them (not in jvmti.h). */
struct kj_frame {
	jint lineno;		/* bci for Java frames, -3 for native methods */
	jmethodID method;
};

struct kj_trace {
	JNIEnv *env;
	jint num_frames;	/* > 0 frames; <= 0 one of HotSpot's ticks_* error codes */
	struct kj_frame *frames;
};

typedef void (*kj_agct_fn)(struct kj_trace *trace, jint depth, void *ucontext);

/* A ring slot: num_frames == KJ_NOT_JAVA marks a thread not attached to the JVM,
 * KJ_FAULTED a sample whose AsyncGetCallTrace faulted (caught: the JVM lives on). */
#define KJ_NOT_JAVA (-1000)
#define KJ_FAULTED (-1001)
struct kj_slot {
	_Atomic uint64_t seq;
	pid_t tid;
	jint num_frames;
	struct kj_frame frames[KJ_MAX_DEPTH];
};

/* An open-addressing map from a nonzero 64-bit key to a 64-bit value. Not thread-safe. */
struct kj_map {
	uint64_t *keys, *vals;
	size_t cap, count;
};
void kj_map_init(struct kj_map *m);
void kj_map_release(struct kj_map *m);
/* Returns the value slot of key (nonzero), or NULL when absent. */
uint64_t *kj_map_find(const struct kj_map *m, uint64_t key);
/* Returns the value slot of key, inserting it with value 0 when absent; NULL when out of
 * memory. Slots move on insert. */
uint64_t *kj_map_insert(struct kj_map *m, uint64_t key);
/* Removes key; returns whether it was present. */
bool kj_map_remove(struct kj_map *m, uint64_t key);
/* Iterates: *pos starts at 0; returns false at the end. */
bool kj_map_next(const struct kj_map *m, size_t *pos, uint64_t *key, uint64_t *val);
uint64_t kj_hash(const void *data, size_t len);

/* Options given at attach (or on -agentpath). */
struct kj_options {
	uint64_t interval_ns;
	bool thread_names;
};

/* The agent's global state, one per loaded copy of the library. */
struct kj_agent {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	kj_agct_fn agct;
	struct kj_options opts;
	int lock_fd;
	char dir[64];		/* "/tmp" */
	pid_t pid;		/* getpid(): the namespace pid */
	_Atomic bool sampling;	/* the signal handler records only while set */
	_Atomic bool vm_dead;
	_Atomic bool writer_running;
	pthread_t writer;
	_Atomic pid_t writer_tid;
	/* compiled code, from CompiledMethodLoad/Unload; guarded by code_lock */
	pthread_mutex_t code_lock;
	struct kj_map compiled;	/* jmethodID -> number of live nmethods */
	struct kj_map inlined;	/* hash(caller, callee) -> 1 */
	/* thread names from ThreadStart; guarded by names_lock */
	pthread_mutex_t names_lock;
	struct kj_map names;	/* tid -> malloc'd name */
};

extern struct kj_agent kj;

/* sampler.c */
/* Installs the SIGPROF handler (once). Returns 0 or a negative errno. */
int kj_sampler_install(void);
/* Arms a CPU timer on thread tid of this process. Idempotent. Returns 0 or -errno. */
int kj_sampler_add_thread(pid_t tid);
/* Disarms and deletes the timer of thread tid, if any. */
void kj_sampler_remove_thread(pid_t tid);
/* Arms timers on every thread listed in /proc/self/task except the writer. */
void kj_sampler_add_all(void);
/* Deletes every timer. */
void kj_sampler_remove_all(void);
/* Takes the next published sample, or NULL when the ring is empty; kj_sampler_release()
 * must follow before the next take. Consumer side: the writer thread only. */
struct kj_slot *kj_sampler_take(void);
void kj_sampler_release(struct kj_slot *s);
/* Samples dropped because the ring was full. */
uint64_t kj_sampler_lost(void);
/* Samples whose AsyncGetCallTrace faulted and was cut short (the process lived on). */
uint64_t kj_sampler_faults(void);
/* Threads with an armed timer. */
size_t kj_sampler_threads(void);

/* writer.c */
/* Starts the writer thread. Returns 0 or a negative errno. */
int kj_writer_start(void);
/* Asks the writer to write the final stacks and stop; waits for it (bounded). */
void kj_writer_stop(void);

#endif
