/* The agent's one thread: drains the sample ring, turns each sample into a collapsed
 * stack ("[thread];pkg.Class.method_[j];..."), counts the stacks, follows kiln's control
 * file (protocol.h) and writes the stacks file, atomically replaced. It is attached to the
 * JVM as a daemon thread so that JVMTI naming calls are allowed and JVM exit never waits
 * for it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "protocol.h"

struct stack_entry {
	char *line;
	uint64_t count;
};

static struct {
	struct kj_map index;		/* hash(line) -> entry index + 1 */
	struct stack_entry *entries;
	size_t nr, cap;
	struct kj_map tids;		/* namespace tid -> samples */
	uint64_t samples;
	uint64_t lost_base;
	uint64_t not_java;		/* threads found not attached to the JVM */
	uint64_t no_frames;		/* samples of JVM threads without Java frames */
	uint64_t seq;			/* seq of the last request handled */
	bool seen_ctl;
	bool idle;			/* stopped, or kiln gone: nobody waits for stacks */
	_Atomic bool quit;
} w;

/* AsyncGetCallTrace's error codes (HotSpot's forte.cpp ticks_*), as frames. */
static const char *error_frame(jint code)
{
	static const char *const names[] = {
		"[no_Java_frame]", "[no_class_load]", "[GC_active]", "[unknown_not_Java]",
		"[not_walkable_not_Java]", "[unknown_Java]", "[not_walkable_Java]",
		"[unknown_state]", "[thread_exit]", "[deopt]", "[safepoint]",
	};
	if (code <= 0 && -code < (jint)(sizeof(names) / sizeof(names[0])))
		return names[-code];
	if (code == KJ_FAULTED)
		return "[AsyncGetCallTrace_fault]";
	return "[unknown_error]";
}

static void count_line(const char *line, size_t len)
{
	uint64_t h = kj_hash(line, len), *slot = kj_map_insert(&w.index, h);

	if (!slot)
		return;
	if (!*slot) {
		if (w.nr == w.cap) {
			size_t cap = w.cap ? w.cap * 2 : 256;
			struct stack_entry *e = realloc(w.entries, cap * sizeof(*e));
			if (!e) {
				kj_map_remove(&w.index, h);
				return;
			}
			w.entries = e;
			w.cap = cap;
		}
		char *copy = strndup(line, len);
		if (!copy) {
			kj_map_remove(&w.index, h);
			return;
		}
		w.entries[w.nr].line = copy;
		w.entries[w.nr].count = 0;
		*slot = ++w.nr;
	}
	w.entries[*slot - 1].count++;
}

static void add_sample(JNIEnv *env, const struct kj_slot *s, struct kj_buf *b)
{
	static char types[KJ_MAX_DEPTH];
	static const char *const suffix[] = { ['j'] = "_[j]", ['i'] = "_[i]", ['0'] = "_[0]",
					      ['n'] = "" };
	int n = s->num_frames;
	char tid[32];

	if (n == 0) {
		w.no_frames++;
		return;	/* a JVM thread with no Java frames: kiln keeps its native stacks */
	}
	b->len = 0;
	b->failed = false;
	if (kj.opts.thread_names) {
		kj_buf_adds(b, "[");
		kj_thread_name(s->tid, b);
		snprintf(tid, sizeof(tid), " tid=%d];", (int)s->tid);
		kj_buf_adds(b, tid);
	}
	if (n < 0) {
		kj_buf_adds(b, error_frame(n));
	} else {
		if (n > KJ_MAX_DEPTH)
			n = KJ_MAX_DEPTH;
		kj_frame_types(s->frames, n, types);
		if (n == KJ_MAX_DEPTH)
			kj_buf_adds(b, "[truncated];");
		for (int i = n - 1; i >= 0; i--) {
			const char *name = kj_method_name(env, s->frames[i].method);
			kj_buf_adds(b, name ? name : "[unknown_method]");
			kj_buf_adds(b, suffix[(unsigned char)types[i]]);
			if (i)
				kj_buf_adds(b, ";");
		}
	}
	if (b->failed)
		return;
	count_line(b->p, b->len);
	w.samples++;
	uint64_t *t = kj_map_insert(&w.tids, (uint64_t)s->tid);
	if (t)
		(*t)++;
}

static void drain(JNIEnv *env, struct kj_buf *b)
{
	struct kj_slot *s;

	while ((s = kj_sampler_take())) {
		if (s->num_frames == KJ_NOT_JAVA) {
			kj_sampler_remove_thread(s->tid);	/* e.g. a GC worker: never Java */
			w.not_java++;
		}
		else
			add_sample(env, s, b);
		kj_sampler_release(s);
	}
}

static void path_of(char *buf, size_t size, const char *ext)
{
	snprintf(buf, size, "%s/" KILN_JVM_PREFIX "%d.%s", kj.dir, (int)kj.pid, ext);
}

static void write_stacks(bool final)
{
	char path[128], tmp[160];
	struct kj_buf b = { 0 };
	char line[256];
	size_t pos = 0;
	uint64_t key, val;
	int fd;

	struct timespec cpu = { 0, 0 };
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);	/* the writer's own CPU so far */
	snprintf(line, sizeof(line),
		 KILN_JVM_HEADER "seq=%llu samples=%llu lost=%llu final=%d threads=%zu notjava=%llu"
				 " writer_cpu_us=%llu noframes=%llu faults=%llu\n",
		 (unsigned long long)w.seq, (unsigned long long)w.samples,
		 (unsigned long long)(kj_sampler_lost() - w.lost_base), final,
		 kj_sampler_threads(), (unsigned long long)w.not_java,
		 (unsigned long long)cpu.tv_sec * 1000000ull + (unsigned long long)cpu.tv_nsec / 1000,
		 (unsigned long long)w.no_frames, (unsigned long long)kj_sampler_faults());
	kj_buf_adds(&b, line);
	kj_buf_adds(&b, KILN_JVM_TIDS);
	while (kj_map_next(&w.tids, &pos, &key, &val)) {
		snprintf(line, sizeof(line), " %llu", (unsigned long long)key);
		kj_buf_adds(&b, line);
	}
	kj_buf_adds(&b, "\n");
	for (size_t i = 0; i < w.nr; i++) {
		if (!w.entries[i].count)
			continue;
		kj_buf_adds(&b, w.entries[i].line);
		snprintf(line, sizeof(line), " %llu\n", (unsigned long long)w.entries[i].count);
		kj_buf_adds(&b, line);
	}
	path_of(path, sizeof(path), "col");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = b.failed ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t off = 0;
		while (off < b.len) {
			ssize_t r = write(fd, b.p + off, b.len - off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			off += (size_t)r;
		}
		close(fd);
		if (off == b.len)
			rename(tmp, path);
		else
			unlink(tmp);
	}
	free(b.p);
}

static void reset_counts(void)
{
	for (size_t i = 0; i < w.nr; i++)
		free(w.entries[i].line);
	w.nr = 0;
	kj_map_release(&w.index);
	kj_map_release(&w.tids);
	w.samples = 0;
	w.lost_base = kj_sampler_lost();
}

/* Serializes turning sampling on (writer thread) with the agent's stop (VMDeath). */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_sampling(bool on)
{
	pthread_mutex_lock(&state_lock);
	if (on && (atomic_load(&w.quit) || atomic_load(&kj.vm_dead)))
		on = false;	/* stopping: never turn back on */
	if (on != atomic_load(&kj.sampling)) {
		if (on) {
			reset_counts();
			atomic_store(&kj.sampling, true);
			kj_sampler_add_all();
		} else {
			atomic_store(&kj.sampling, false);
			kj_sampler_remove_all();
		}
	}
	pthread_mutex_unlock(&state_lock);
}

/* Reads kiln's control file and acts on a new request. */
static void check_control(JNIEnv *env, struct kj_buf *b)
{
	char path[128], buf[64] = "";
	unsigned long long seq = 0;
	char cmd[16] = "";
	struct stat st;
	struct timespec now;
	int fd;
	ssize_t r;

	path_of(path, sizeof(path), "ctl");
	clock_gettime(CLOCK_REALTIME, &now);
	if (stat(path, &st) < 0 || now.tv_sec - st.st_mtime > KILN_JVM_STALE_S) {
		set_sampling(false);	/* kiln is gone */
		w.idle = true;
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0 || sscanf(buf, "%llu %15s", &seq, cmd) != 2)
		return;
	if (seq == w.seq && w.seen_ctl) {
		if (strcmp(cmd, "stop") != 0) {
			set_sampling(true);
			w.idle = false;
		}
		return;
	}
	w.seen_ctl = true;
	drain(env, b);
	w.seq = seq;
	if (!strcmp(cmd, "flush") || !strcmp(cmd, "stop")) {
		bool stop = !strcmp(cmd, "stop");
		write_stacks(stop);
		reset_counts();
		if (stop)
			set_sampling(false);
		w.idle = stop;
	} else {
		set_sampling(true);
		reset_counts();
		w.idle = false;
	}
}

static void *writer_main(void *arg)
{
	JNIEnv *env = NULL;
	JavaVMAttachArgs args = { JNI_VERSION_1_6, (char *)"kiln-jvm writer", NULL };
	struct kj_buf b = { 0 };
	unsigned since_ctl = 0, since_write = 0;

	(void)arg;
	atomic_store(&kj.writer_tid, (pid_t)syscall(SYS_gettid));
	pthread_setname_np(pthread_self(), "kiln-jvm");
	if ((*kj.vm)->AttachCurrentThreadAsDaemon(kj.vm, (void **)&env, &args) != JNI_OK)
		env = NULL;
	while (!atomic_load(&w.quit) && !atomic_load(&kj.vm_dead)) {
		bool on = atomic_load(&kj.sampling);
		/* wake about once per sampling interval (10..50 ms) while sampling: the ring
		 * holds KJ_RING_SLOTS samples, far more than one interval of threads gives */
		unsigned ms = 100;
		if (on) {
			uint64_t iv = kj.opts.interval_ns / 1000000u;
			ms = iv < 10 ? 10 : iv > 50 ? 50 : (unsigned)iv;
		}
		struct timespec ts = { 0, (long)ms * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (env)
			drain(env, &b);
		since_ctl += ms;
		since_write += ms;
		if (since_ctl >= 20) {
			since_ctl = 0;
			check_control(env, &b);
		}
		if (on && since_write >= 1000) {
			since_write = 0;
			write_stacks(false);
		}
	}
	set_sampling(false);
	if (env && !atomic_load(&kj.vm_dead))
		drain(env, &b);	/* still allowed inside the VMDeath callback */
	if (w.seen_ctl && !w.idle)
		write_stacks(true);	/* names are cached: no JVMTI call needed */
	if (atomic_load(&w.quit)) {	/* the JVM is exiting: leave no lock file behind */
		char path[128];
		path_of(path, sizeof(path), "lock");
		unlink(path);
	}
	free(b.p);
	atomic_store(&kj.writer_running, false);
	return NULL;
}

int kj_writer_start(void)
{
	pthread_attr_t attr;
	int err;

	if (atomic_exchange(&kj.writer_running, true))
		return 0;
	atomic_store(&w.quit, false);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&kj.writer, &attr, writer_main, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_store(&kj.writer_running, false);
		return -err;
	}
	return 0;
}

void kj_writer_stop(void)
{
	pthread_mutex_lock(&state_lock);
	atomic_store(&w.quit, true);
	atomic_store(&kj.sampling, false);
	kj_sampler_remove_all();
	pthread_mutex_unlock(&state_lock);
	for (int i = 0; i < 100 && atomic_load(&kj.writer_running); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}
