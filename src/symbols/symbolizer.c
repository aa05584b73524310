/* The symbolizer: binaries through the cache of src/symbols/symcache.h, per-process perf
 * maps, kallsyms (read when first needed, again for modules loaded later), the vDSO. */
#include "symbols/symbolizer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbols/binary.h"
#include "symbols/demangle.h"
#include "symbols/dwinline.h"
#include "symbols/elf.h"
#include "symbols/kallsyms.h"
#include "symbols/perfmap.h"
#include "symbols/symcache.h"
#include "util/hashmap.h"
#include "util/log.h"

#define KALLSYMS_RELOAD_SECONDS 60

struct symbolizer {
	struct symcache *cache;
	struct hashmap *perfmaps;	/* pid -> struct perfmap * */
	uint64_t perfmap_bytes;
	struct symtab kernel;
	bool kernel_tried;
	double kernel_loaded_at;	/* CLOCK_MONOTONIC seconds */
	struct elf_symbols vdso;
	bool vdso_tried;
	struct dwinline *dwinline;	/* native inlines, opened on first use */
};

struct symbolizer *symbolizer__new(uint64_t cache_bytes)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->cache = symcache__new(cache_bytes);
	s->perfmaps = hashmap__new();
	symtab_init(&s->kernel);
	elf_symbols_init(&s->vdso);
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *val;

	if (!s)
		return;
	symcache__free(s->cache);
	dwinline__free(s->dwinline);
	while (hashmap__next(s->perfmaps, &it, &key, &len, &val)) {
		perfmap_release(val);
		free(val);
	}
	hashmap__free(s->perfmaps);
	symtab_release(&s->kernel);
	elf_symbols_release(&s->vdso);
	free(s);
}

/* ---- perf maps ---- */

static struct perfmap *perfmap_get(struct symbolizer *s, const struct proc_ref *p, bool *fresh)
{
	bool created;
	void **slot = hashmap__insert(s->perfmaps, &p->pid, sizeof(p->pid), &created);

	if (created) {
		*slot = xmalloc(sizeof(struct perfmap));
		perfmap_init(*slot);
		s->perfmap_bytes += perfmap__memory(*slot);
	}
	*fresh = created;
	return *slot;
}

/* Re-reads p's perf map if it changed. Returns 1 when it was read again. */
static int perfmap_update(struct symbolizer *s, const struct proc_ref *p, struct perfmap *pm)
{
	char path[128];
	pid_t nspid = p->nspid > 0 ? p->nspid : p->pid;
	size_t before = perfmap__memory(pm);
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)p->pid, (int)nspid);
	ret = perfmap__refresh(pm, path);
	if (ret < 0 && nspid == p->pid) {
		/* the process is gone: the host's /tmp is its /tmp when it shared our view */
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
		ret = perfmap__refresh(pm, path);
	}
	if (ret > 0)
		s->perfmap_bytes = s->perfmap_bytes - before + perfmap__memory(pm);
	return ret;
}

static void perfmap_preload(struct symbolizer *s, const struct proc_ref *p)
{
	bool fresh;
	struct perfmap *pm = perfmap_get(s, p, &fresh);

	perfmap_update(s, p, pm);
}

static const char *perfmap_lookup(struct symbolizer *s, const struct proc_ref *p, uint64_t addr)
{
	bool fresh;
	struct perfmap *pm;
	const char *name;

	if (!p || p->pid <= 0)
		return NULL;
	pm = perfmap_get(s, p, &fresh);
	if (fresh)
		perfmap_update(s, p, pm);
	name = perfmap__find(pm, addr);
	/* JIT code is appended as it is compiled: a miss may be code newer than our copy. */
	if (!name && !fresh && perfmap_update(s, p, pm) > 0)
		name = perfmap__find(pm, addr);
	return name;
}

static void append_name(struct strbuf *out, const char *name, bool demangle)
{
	if (demangle)
		demangle__append(name, out);
	else
		strbuf_addstr(out, name);
}

int symbolizer__pin(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m)
{
	if (binary__has_file(m))
		return symcache__pin(s->cache, p, m);
	/* JIT code: read the perf map while the process (and its /tmp) is there */
	if ((!m->path || strcmp(m->path, "[vdso]")) && (m->prot & PROT_EXEC) && p && p->pid > 0)
		perfmap_preload(s, p);
	return 0;
}

int symbolizer__perfmap(struct symbolizer *s, const struct proc_ref *p, uint64_t addr,
			struct strbuf *out)
{
	const char *name = perfmap_lookup(s, p, addr);

	if (!name)
		return -ENOENT;
	append_name(out, name, false);
	return 0;
}

void symbolizer__forget_process(struct symbolizer *s, pid_t pid)
{
	struct perfmap *pm = hashmap__remove(s->perfmaps, &pid, sizeof(pid));

	if (!pm)
		return;
	s->perfmap_bytes -= perfmap__memory(pm);
	perfmap_release(pm);
	free(pm);
}

/* ---- lookups ---- */

/* kiln's own vDSO is the one every 64-bit process on this kernel maps. */
static const struct elf_symbols *vdso_symbols(struct symbolizer *s)
{
	unsigned long base;
	FILE *f;
	char line[512];
	size_t size = 0;

	if (s->vdso_tried)
		return &s->vdso;
	s->vdso_tried = true;
	base = getauxval(AT_SYSINFO_EHDR);
	f = fopen("/proc/self/maps", "re");
	if (!base || !f) {
		if (f)
			fclose(f);
		return &s->vdso;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    lo == base && hi > lo) {
			size = (size_t)(hi - lo);
			break;
		}
	}
	fclose(f);
	if (size)
		elf_symbols__load_image(&s->vdso, (const void *)base, size, NULL, 0);
	return &s->vdso;
}

static double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kernel_load(struct symbolizer *s)
{
	int n;

	symtab_release(&s->kernel);
	n = kallsyms__load(&s->kernel, "/proc/kallsyms");
	if (n < 0 && !s->kernel_tried)
		log_warn("failed to read '/proc/kallsyms': %s", n == -EPERM ?
			 "addresses are hidden (kernel.kptr_restrict)" : strerror(-n));
	s->kernel_tried = true;
	s->kernel_loaded_at = monotonic_seconds();
}

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct strbuf *out)
{
	const char *name;

	if (!s->kernel_tried)
		kernel_load(s);
	name = symtab__find(&s->kernel, addr, NULL);
	/* A module (or BPF program) loaded since: read kallsyms again, at most once a minute. */
	if (!name && monotonic_seconds() - s->kernel_loaded_at >= KALLSYMS_RELOAD_SECONDS) {
		kernel_load(s);
		name = symtab__find(&s->kernel, addr, NULL);
	}
	if (!name) {
		strbuf_addf(out, "(kernel+0x%llx)", (unsigned long long)addr);
		return -ENOENT;
	}
	append_name(out, name, false);
	return 0;
}

int symbolizer__user(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m,
		     uint64_t addr, struct strbuf *out)
{
	uint64_t off = mapping__file_offset(m, addr);
	const char *name = NULL;
	char module[256];
	bool file = binary__has_file(m);

	if (file) {
		const struct elf_symbols *es = symcache__get(s->cache, p, m);

		if (es)
			name = elf_symbols__find(es, off, NULL);
	} else if (m->path && !strcmp(m->path, "[vdso]")) {
		name = elf_symbols__find(vdso_symbols(s), off, NULL);
	}
	if (name) {
		append_name(out, name, true);
		return 0;
	}
	if ((name = perfmap_lookup(s, p, addr))) {
		append_name(out, name, false);
		return 0;
	}
	binary__module_name(m->path, module, sizeof(module));
	strbuf_addf(out, "(%s+0x%llx)", module, (unsigned long long)off);
	return -ENOENT;
}

int symbolizer__inlined(struct symbolizer *s, const struct proc_ref *p, const struct mapping *m,
			uint64_t addr, struct strbuf *out)
{
	const struct elf_symbols *es;
	const char *names;
	int n = 0;

	if (!binary__has_file(m) || !(es = symcache__get(s->cache, p, m)))
		return 0;
	uint64_t vaddr;

	(void)elf_symbols__find(es, mapping__file_offset(m, addr), &vaddr);
	names = elf_symbols__inlined(es, mapping__file_offset(m, addr));
	for (const char *c = names; c && *c; c++)
		n += *c == '\n';
	if (n) {
		strbuf_addstr(out, names);
		return n;
	}
	if (es->go)
		return 0;	/* Go: never its debug info */
	if (!s->dwinline)
		s->dwinline = dwinline__new();
	return dwinline__find(s->dwinline, p, m, vaddr, out);
}

uint64_t symbolizer__memory(const struct symbolizer *s)
{
	return symcache__memory(s->cache) + s->perfmap_bytes;
}
