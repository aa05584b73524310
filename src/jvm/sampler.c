/* CPU sampling of Java threads: one POSIX CPU timer per thread (timer_create on the
 * thread's CPU clock, SIGEV_THREAD_ID), so that SIGPROF arrives on the thread that spent
 * the CPU time, which is what AsyncGetCallTrace needs (it walks the current thread).
 *
 * Why per-thread timers rather than one setitimer(ITIMER_PROF) or perf_event fds:
 * ITIMER_PROF is one process-wide timer whose signal the kernel may deliver to any thread;
 * perf_event needs an fd per thread, perf_event_paranoid permission inside containers and
 * F_SETOWN_EX plumbing. CPU-clock timers need no fd and no privilege, count the same CPU
 * time kiln's cpu-clock perf events count, and cost nothing while a thread sleeps.
 *
 * The handler is async-signal-safe: it reads atomics, claims a slot in a preallocated
 * bounded MPSC ring (Vyukov's sequence-numbered cells: one CAS, no lock), lets
 * AsyncGetCallTrace write the frames straight into the slot and publishes it. A full ring
 * drops the sample and counts it.
 *
 * AsyncGetCallTrace can fault on a thread caught in a state it does not expect (JDK 17 has
 * no protection of its own). A fault inside it must not take the application down: the
 * call runs under a per-thread sigsetjmp, and kiln's SIGSEGV/SIGBUS handler jumps back
 * when the fault is in that window, and hands every other fault to the handler that was
 * there before (HotSpot's, which relies on SIGSEGV for null checks and safepoints). */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jvm.h"

static struct kj_slot *ring;
static _Atomic uint64_t enq_pos;
static uint64_t deq_pos;		/* consumer only */
static _Atomic uint64_t lost;
static bool installed;

/* The guard of the AsyncGetCallTrace call running on this thread, or NULL. initial-exec:
 * a signal handler must not be the first to touch a dlopen'ed library's dynamic TLS. */
static __thread sigjmp_buf *agct_guard __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static _Atomic uint64_t faults;
static _Atomic int fault_test;	/* KILN_JVM_FAULT_TEST: fault on purpose this many times */

static pthread_mutex_t timers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kj_map timers;		/* tid -> timer_t (as uint64) + 1 */

static pid_t current_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Hands a fault to the handler installed before kiln's, as if kiln's were not there. */
static void chain(int sig, siginfo_t *info, void *ucontext)
{
	const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;

	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, info, ucontext);
	} else if (prev->sa_handler == SIG_DFL) {
		/* the fault repeats on return, and then kills the process as it would have */
		signal(sig, SIG_DFL);
	} else if (prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	}
}

static void on_fault(int sig, siginfo_t *info, void *ucontext)
{
	sigjmp_buf *guard = agct_guard;

	if (guard) {
		agct_guard = NULL;
		siglongjmp(*guard, 1);
	}
	chain(sig, info, ucontext);
}

/* Faults like a bad AsyncGetCallTrace would, for the crash-guard test. */
static volatile uintptr_t unmapped = 16;

static __attribute__((noinline)) void faulting_walk(struct kj_trace *trace)
{
	trace->num_frames = *(volatile jint *)unmapped;
}

/* AsyncGetCallTrace into trace, under the fault guard. Returns false when it faulted. */
static bool guarded_agct(struct kj_trace *trace, void *ucontext)
{
	sigjmp_buf jb;

	/* savemask: the jump out of the SIGSEGV handler must unblock SIGSEGV again */
	if (sigsetjmp(jb, 1)) {
		atomic_fetch_add_explicit(&faults, 1, memory_order_relaxed);
		return false;
	}
	agct_guard = &jb;
	if (atomic_load_explicit(&fault_test, memory_order_relaxed) > 0 &&
	    atomic_fetch_sub_explicit(&fault_test, 1, memory_order_relaxed) > 0)
		faulting_walk(trace);
	kj.agct(trace, KJ_MAX_DEPTH, ucontext);
	agct_guard = NULL;
	return true;
}

static void on_sigprof(int sig, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	JNIEnv *env = NULL;
	jint not_java;
	uint64_t pos;
	struct kj_slot *s;

	(void)sig;
	(void)info;
	if (!atomic_load_explicit(&kj.sampling, memory_order_acquire) || !ring)
		goto out;
	not_java = (*kj.vm)->GetEnv(kj.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK;
	pos = atomic_load_explicit(&enq_pos, memory_order_relaxed);
	for (;;) {
		s = &ring[pos & (KJ_RING_SLOTS - 1)];
		uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&enq_pos, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
		} else if (dif < 0) {
			atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
			goto out;
		} else {
			pos = atomic_load_explicit(&enq_pos, memory_order_relaxed);
		}
	}
	s->tid = current_tid();
	if (not_java) {
		s->num_frames = KJ_NOT_JAVA;
	} else {
		struct kj_trace trace = { env, 0, s->frames };
		s->num_frames = guarded_agct(&trace, ucontext) ? trace.num_frames : KJ_FAULTED;
	}
	atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
out:
	errno = saved_errno;
}

/* Puts on_fault in front of sig's handler, with that handler's mask and flags so that
 * the faults it gets are handled under the same conditions as before. */
static int install_fault_handler(int sig, struct sigaction *prev)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, prev) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_mask = prev->sa_mask;
	sa.sa_flags = (prev->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
	return sigaction(sig, &sa, NULL);
}

int kj_sampler_install(void)
{
	struct sigaction sa;

	if (installed)
		return 0;
	ring = mmap(NULL, sizeof(*ring) * KJ_RING_SLOTS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ring == MAP_FAILED) {
		ring = NULL;
		return -errno;
	}
	for (uint64_t i = 0; i < KJ_RING_SLOTS; i++)
		atomic_store(&ring[i].seq, i);
	memset(&sa, 0, sizeof(sa));
	const char *test = getenv("KILN_JVM_FAULT_TEST");
	if (test)
		atomic_store(&fault_test, atoi(test));
	if (install_fault_handler(SIGSEGV, &prev_segv) < 0 ||
	    install_fault_handler(SIGBUS, &prev_bus) < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) < 0)
		return -errno;
	kj_map_init(&timers);
	installed = true;
	return 0;
}

/* The CPU clock of another thread of this process: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
 * from the kernel's posix-timers.h (a per-thread clock is ~tid << 3 | 4 | 2). */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6);
}

int kj_sampler_add_thread(pid_t tid)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t timer;
	uint64_t *slot;
	int err = 0;

	if (tid <= 0 || tid == atomic_load(&kj.writer_tid))
		return 0;
	pthread_mutex_lock(&timers_lock);
	if (kj_map_find(&timers, (uint64_t)tid))
		goto out;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = tid;
	if (timer_create(thread_cpu_clock(tid), &sev, &timer) < 0) {
		err = -errno;
		goto out;
	}
	its.it_interval.tv_sec = (time_t)(kj.opts.interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(kj.opts.interval_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(timer, 0, &its, NULL) < 0) {
		err = -errno;
		timer_delete(timer);
		goto out;
	}
	slot = kj_map_insert(&timers, (uint64_t)tid);
	if (!slot) {
		timer_delete(timer);
		err = -ENOMEM;
		goto out;
	}
	*slot = (uint64_t)(uintptr_t)timer + 1;
out:
	pthread_mutex_unlock(&timers_lock);
	return err;
}

void kj_sampler_remove_thread(pid_t tid)
{
	uint64_t *slot;

	pthread_mutex_lock(&timers_lock);
	slot = kj_map_find(&timers, (uint64_t)tid);
	if (slot) {
		timer_delete((timer_t)(uintptr_t)(*slot - 1));
		kj_map_remove(&timers, (uint64_t)tid);
	}
	pthread_mutex_unlock(&timers_lock);
}

void kj_sampler_add_all(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end == '\0' && tid > 0)
			kj_sampler_add_thread((pid_t)tid);
	}
	closedir(d);
}

void kj_sampler_remove_all(void)
{
	size_t pos = 0;
	uint64_t tid, val;

	pthread_mutex_lock(&timers_lock);
	while (kj_map_next(&timers, &pos, &tid, &val))
		timer_delete((timer_t)(uintptr_t)(val - 1));
	kj_map_release(&timers);
	kj_map_init(&timers);
	pthread_mutex_unlock(&timers_lock);
}

struct kj_slot *kj_sampler_take(void)
{
	struct kj_slot *s;

	if (!ring)
		return NULL;
	s = &ring[deq_pos & (KJ_RING_SLOTS - 1)];
	if (atomic_load_explicit(&s->seq, memory_order_acquire) != deq_pos + 1)
		return NULL;
	return s;
}

void kj_sampler_release(struct kj_slot *s)
{
	atomic_store_explicit(&s->seq, deq_pos + KJ_RING_SLOTS, memory_order_release);
	deq_pos++;
}

uint64_t kj_sampler_lost(void)
{
	return atomic_load(&lost);
}

uint64_t kj_sampler_faults(void)
{
	return atomic_load(&faults);
}

size_t kj_sampler_threads(void)
{
	size_t n;

	pthread_mutex_lock(&timers_lock);
	n = timers.count;
	pthread_mutex_unlock(&timers_lock);
	return n;
}
