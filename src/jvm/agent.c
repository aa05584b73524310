/* libkiln-jvm.so entry points: Agent_OnAttach (kiln's dynamic attach) and Agent_OnLoad
 * (-agentpath), JVMTI capabilities and event callbacks.
 *
 * Loading twice is harmless: the same copy sees its state already set and only takes the
 * new options; another copy of the library (another path) finds the flock on
 * /tmp/kiln-jvm-<pid>.lock taken and stays inert. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "names.h"
#include "protocol.h"

#include <jvmticmlr.h>

struct kj_agent kj = {
	.lock_fd = -1,
	.code_lock = PTHREAD_MUTEX_INITIALIZER,
	.names_lock = PTHREAD_MUTEX_INITIALIZER,
};

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* "interval_ns=10101010,threads=1"; unknown keys are ignored so that an older agent
 * accepts a newer kiln's options. */
static void parse_options(const char *options, struct kj_options *o)
{
	o->interval_ns = 1000000000ull / 99;
	o->thread_names = false;
	while (options && *options) {
		unsigned long long v = 0;
		if (sscanf(options, "interval_ns=%llu", &v) == 1 && v >= 1000000 &&
		    v <= 10000000000ull)
			o->interval_ns = v;
		else if (sscanf(options, "threads=%llu", &v) == 1)
			o->thread_names = v != 0;
		options = strchr(options, ',');
		if (options)
			options++;
	}
}

static void load_methods(jvmtiEnv *jvmti, jclass klass)
{
	jint count = 0;
	jmethodID *methods = NULL;

	/* Asking for a class's methods makes HotSpot create their jmethodIDs, which
	 * AsyncGetCallTrace needs to name frames. */
	if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) == JVMTI_ERROR_NONE)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

/* The methods of classes loaded before the agent's ClassPrepare events. */
static void load_all_classes(jvmtiEnv *jvmti, JNIEnv *env)
{
	jint nr = 0;
	jclass *classes = NULL;

	if (!env)
		(*kj.vm)->GetEnv(kj.vm, (void **)&env, JNI_VERSION_1_6);
	if ((*jvmti)->GetLoadedClasses(jvmti, &nr, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < nr; i++) {
		load_methods(jvmti, classes[i]);
		if (env)
			(*env)->DeleteLocalRef(env, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* The Java names of the threads running now (JVMTI gives no tid: names.c matches them to
 * threads by the 15 bytes Linux keeps). */
static void note_thread_names(jvmtiEnv *jvmti)
{
	JNIEnv *env = NULL;
	jthread *threads = NULL;
	jint nr = 0;

	(*kj.vm)->GetEnv(kj.vm, (void **)&env, JNI_VERSION_1_6);
	if ((*jvmti)->GetAllThreads(jvmti, &nr, &threads) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < nr; i++) {
		jvmtiThreadInfo info;
		memset(&info, 0, sizeof(info));
		if ((*jvmti)->GetThreadInfo(jvmti, threads[i], &info) == JVMTI_ERROR_NONE) {
			if (info.name) {
				kj_note_thread_name(info.name);
				(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
			}
			if (env && info.thread_group)
				(*env)->DeleteLocalRef(env, info.thread_group);
			if (env && info.context_class_loader)
				(*env)->DeleteLocalRef(env, info.context_class_loader);
		}
		if (env)
			(*env)->DeleteLocalRef(env, threads[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jclass klass)
{
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *env, jthread thread,
				     jclass klass)
{
	load_methods(jvmti, klass);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
	jvmtiThreadInfo info;
	pid_t tid = gettid_();

	if (atomic_load(&kj.sampling))
		kj_sampler_add_thread(tid);
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return;
	if (info.name) {
		kj_set_thread_name(tid, info.name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	}
	if (info.thread_group)
		(*env)->DeleteLocalRef(env, info.thread_group);
	if (info.context_class_loader)
		(*env)->DeleteLocalRef(env, info.context_class_loader);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
	kj_sampler_remove_thread(gettid_());
}

static void JNICALL on_compiled_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				     const void *code_addr, jint map_length,
				     const jvmtiAddrLocationMap *map, const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	uint64_t *n;

	pthread_mutex_lock(&kj.code_lock);
	n = kj_map_insert(&kj.compiled, (uint64_t)(uintptr_t)method);
	if (n)
		(*n)++;
	for (; h; h = h->next) {
		if (h->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
		for (jint p = 0; p < r->numpcs; p++) {
			const PCStackInfo *pc = &r->pcinfo[p];
			/* methods[0] is the innermost scope, the last one the compiled method */
			for (jint k = 0; k + 1 < pc->numstackframes; k++) {
				n = kj_map_insert(&kj.inlined,
						  kj_pair_key(pc->methods[k + 1], pc->methods[k]));
				if (n)
					*n = 1;
			}
		}
	}
	pthread_mutex_unlock(&kj.code_lock);
}

static void JNICALL on_compiled_unload(jvmtiEnv *jvmti, jmethodID method, const void *addr)
{
	uint64_t *n;

	pthread_mutex_lock(&kj.code_lock);
	n = kj_map_find(&kj.compiled, (uint64_t)(uintptr_t)method);
	if (n && --*n == 0)
		kj_map_remove(&kj.compiled, (uint64_t)(uintptr_t)method);
	pthread_mutex_unlock(&kj.code_lock);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
	load_all_classes(jvmti, env);
	kj_writer_start();
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *env)
{
	/* JVMTI still works inside this callback: the writer drains and writes its last
	 * stacks now; after it, the agent makes no JVMTI call */
	kj_writer_stop();
	atomic_store(&kj.vm_dead, true);
}

static int find_libjvm(struct dl_phdr_info *info, size_t size, void *data)
{
	if (info->dlpi_name && strstr(info->dlpi_name, "/libjvm.so")) {
		snprintf(data, 512, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static kj_agct_fn find_agct(void)
{
	char path[512] = "";
	void *sym = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");

	if (sym)
		return (kj_agct_fn)sym;
	dl_iterate_phdr(find_libjvm, path);
	if (path[0]) {
		void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			sym = dlsym(h, "AsyncGetCallTrace");
	}
	return (kj_agct_fn)sym;
}

/* Takes the per-JVM lock that says "a kiln agent lives here". */
static int take_lock(void)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/" KILN_JVM_PREFIX "%d.lock", kj.dir, (int)kj.pid);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		return err == EWOULDBLOCK ? -EEXIST : -err;
	}
	kj.lock_fd = fd;
	return 0;
}

static void release_lock(void)
{
	if (kj.lock_fd >= 0)
		close(kj.lock_fd);
	kj.lock_fd = -1;
}

static jint setup(JavaVM *vm, const char *options, bool live)
{
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	jvmtiEnv *jvmti = NULL;
	int err;

	if (kj.vm) {	/* this copy is loaded already: take the new options */
		parse_options(options, &kj.opts);
		return live ? (kj_writer_start() ? JNI_ERR : JNI_OK) : JNI_OK;
	}
	kj.pid = getpid();
	snprintf(kj.dir, sizeof(kj.dir), "/tmp");
	err = take_lock();
	if (err == -EEXIST)
		return JNI_OK;	/* another copy is loaded: stay inert, and quiet */
	if (err < 0) {
		fprintf(stderr, "kiln-jvm: failed to lock '%s/" KILN_JVM_PREFIX "%d.lock': %s\n",
			kj.dir, (int)kj.pid, strerror(-err));
		return JNI_ERR;
	}
	kj.agct = find_agct();
	if (!kj.agct) {
		fprintf(stderr, "kiln-jvm: failed to find 'AsyncGetCallTrace' in libjvm\n");
		goto fail;
	}
	jint rc = (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2);
	if (rc == JNI_EDETACHED && live) {
		/* attached during the start phase (JDK < 21 lets that happen): kiln retries */
		release_lock();
		return KILN_JVM_RC_NOT_LIVE;
	}
	if (rc != JNI_OK) {
		fprintf(stderr, "kiln-jvm: failed to get a JVMTI environment: %d\n", (int)rc);
		goto fail;
	}
	parse_options(options, &kj.opts);
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		fprintf(stderr, "kiln-jvm: no compiled-method events; frames show as _[j]\n");
	memset(&cb, 0, sizeof(cb));
	cb.ClassLoad = on_class_load;
	cb.ClassPrepare = on_class_prepare;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.CompiledMethodLoad = on_compiled_load;
	cb.CompiledMethodUnload = on_compiled_unload;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "kiln-jvm: failed to set JVMTI callbacks\n");
		goto fail;
	}
	kj_map_init(&kj.compiled);
	kj_map_init(&kj.inlined);
	kj_map_init(&kj.names);
	kj.vm = vm;
	kj.jvmti = jvmti;
	if (kj_sampler_install() < 0) {
		fprintf(stderr, "kiln-jvm: failed to install the SIGPROF handler\n");
		goto fail;
	}
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_THREAD_START,
		JVMTI_EVENT_THREAD_END, JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH,
	};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
	if (!live)
		return JNI_OK;	/* VMInit starts the writer */
	load_all_classes(jvmti, NULL);
	note_thread_names(jvmti);
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	if (kj_writer_start() == 0)
		return JNI_OK;
	fprintf(stderr, "kiln-jvm: failed to start its thread\n");
fail:
	if (jvmti)
		(*jvmti)->DisposeEnvironment(jvmti);	/* no more events */
	kj.vm = NULL;
	kj.jvmti = NULL;
	release_lock();
	return JNI_ERR;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	return setup(vm, options, true);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	return setup(vm, options, false);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	atomic_store(&kj.sampling, false);
	kj_sampler_remove_all();
}
