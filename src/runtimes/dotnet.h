/* Internal to runtimes/dotnet*.c: the EventPipe session kiln keeps with one CoreCLR
 * process, and the names of its JIT-compiled methods. */
#ifndef KILN_RUNTIMES_DOTNET_H
#define KILN_RUNTIMES_DOTNET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "runtimes/dotnet_nettrace.h"
#include "util/strbuf.h"

/* The methods of one process, by address: a value type. */
struct dotnet_methods {
	struct dotnet_method *v;
	size_t nr, alloc;
	bool sorted;
};

void dotnet_methods_init(struct dotnet_methods *m);
void dotnet_methods_release(struct dotnet_methods *m);
/* Adds method nm, named "<ns>.<name>" (a later load of the same start replaces it). */
void dotnet_methods__add(struct dotnet_methods *m, const struct nettrace_method *nm);
/* The name of the method that holds ip, or NULL. Valid until the next add. */
const char *dotnet_methods__find(struct dotnet_methods *m, uint64_t ip);

/* One thread's samples: stacks of raw ips, named at collect time. */
struct dotnet_thread {
	pid_t nstid;		/* the runtime's id: the thread's id in the pid namespace */
	pid_t tid;		/* host tid; 0 until mapped, -1 when not found */
	struct profile *raw;	/* frames are "%llx" ips, root first */
	uint64_t samples;
};

/* Adds sample s to the thread in threads[0..*nr) it belongs to (appended when new).
 * Samples without managed frames are not counted. */
void dotnet_threads__add(struct dotnet_thread **threads, size_t *nr,
			 const struct nettrace_sample *s);

/* Builds the named profile of thread t's raw samples into *out (created), frames named
 * "Namespace.Class.Method_[net]" ("[unknown]_[net]" for code with no method), and clears
 * the raw samples. Returns the number of samples. */
uint64_t dotnet_thread__name(struct dotnet_thread *t, struct dotnet_methods *m,
			     struct profile **out);

/* The host tid of thread nstid of process pid (in pid namespace of nspid), or -1. */
pid_t dotnet__host_tid(pid_t pid, pid_t nspid, pid_t nstid);

/* Whether process pid was started with its diagnostics server off
 * ({DOTNET,COMPlus}_EnableDiagnostics=0 in its environment). */
bool dotnet__diagnostics_off(pid_t pid);

/* Whether process pid maps libcoreclr.so (1), a Mono runtime (2) or neither (0). */
int dotnet__proc_kind(pid_t pid);

#endif
