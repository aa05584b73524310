/* Finding CPython in a process: which mapped file holds the interpreter (the executable
 * or a libpython*.so), its version, its load address, and from those the layout and the
 * address of the interpreter list (see python_proc.h). */
#include "runtimes/python_proc.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtimes/bincache.h"
#include "runtimes/procmaps.h"
#include "symbols/elf_lookup.h"
#include "util/strbuf.h"

ssize_t py_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	if (addr == 0)
		return -EFAULT;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

int py_read_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = py_read(pid, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* One file mapped by the process: where its first mapping starts. */
struct py_file {
	uint64_t start, pgoff;
	uint64_t end;
	char path[PATH_MAX];
};

/* Parses "X.Y" after "python" in a file name ("libpython3.6m.so.1.0", "python2.7"). */
static int version_from_name(const char *path, int *major, int *minor)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *p = strstr(base, "python");
	if (!p)
		return -ENOENT;
	int a, b;
	if (sscanf(p + 6, "%d.%d", &a, &b) != 2 || a < 2 || a > 3 || b < 0 || b > 99)
		return -ENOENT;
	*major = a;
	*minor = b;
	return 0;
}

/* Executables known to hold no CPython: most of a host's processes run a handful of
 * binaries (shells, compilers, daemons), and looking one up costs an ELF open and a
 * symbol table scan, which every new process of it would pay again. Used by the session's
 * thread only. Bounded (runtimes/bincache.h): a build host makes new executables all day;
 * py_attach__forget() frees it. */
#define NOT_PYTHON_MAX 4096
static struct bincache *not_python;

void py_attach__forget(void)
{
	bincache__free(not_python);
	not_python = NULL;
}

/* Opens the file as the process sees it: through its root, else through map_files. */
static struct elf_lookup *open_file(const struct proc_ref *p, const struct py_file *f)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid, f->path);
	struct elf_lookup *e = strstr(f->path, " (deleted)") ? NULL : elf_lookup__open(path);
	if (!e) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)p->pid,
			 f->start, f->end);
		e = elf_lookup__open(path);
	}
	return e;
}

/* The mapped files worth a look: libpython*, and the executable (the first file
 * mapping, which is the main binary in every process the kernel starts). */
static size_t candidate_files(const struct proc_ref *p, struct py_file *out, size_t max)
{
	size_t nm, n = 0;
	const struct procmap *m = procmaps__get(p->pid, &nm);

	for (size_t k = 0; k < nm && n < max; k++) {
		const char *file = m[k].path, *base = strrchr(file, '/') + 1;
		bool is_lib = strncmp(base, "libpython", 9) == 0;
		bool seen = false;

		for (size_t i = 0; i < n; i++)
			seen |= strcmp(out[i].path, file) == 0;
		if (seen || (n > 0 && !is_lib))
			continue;
		out[n].start = m[k].start;
		out[n].end = m[k].end;
		out[n].pgoff = m[k].pgoff;
		snprintf(out[n].path, sizeof(out[n].path), "%s", file);
		n++;
	}
	return n;
}

/* 2.7 and 3.6 keep the interpreter list in the static interp_head; without .symtab it
 * is found in PyInterpreterState_Head, which is `mov interp_head(%rip), %rax; ret`. */
static int find_interp_head(struct elf_lookup *e, uint64_t *vaddr)
{
	if (elf_lookup__symbol(e, "interp_head", 0, vaddr) == 0)
		return 0;
	uint64_t fn;
	uint8_t code[8];
	if (elf_lookup__symbol(e, "PyInterpreterState_Head", 0, &fn) < 0 || elf_lookup__read(e, fn, code, 8) < 0)
		return -ENOENT;
	if (code[0] != 0x48 || code[1] != 0x8b || code[2] != 0x05 || code[7] != 0xc3)
		return -ENOENT;
	int32_t disp;
	memcpy(&disp, code + 3, 4);
	*vaddr = fn + 7 + (int64_t)disp;
	return 0;
}

static uint64_t type_addr(struct elf_lookup *e, const char *name, uint64_t bias)
{
	uint64_t v;
	return elf_lookup__symbol(e, name, 1, &v) == 0 ? v + bias : 0;
}

/* Reads the version and layout of the interpreter in e (mapped at bias). */
static int find_layout(struct runtime_proc *rp, struct elf_lookup *e, const struct py_file *f,
		       const struct proc_ref *p, uint64_t runtime, bool old, char *skip_reason)
{
	int major = 0, minor = 0;
	uint64_t sym;
	uint32_t hex = 0;
	if (elf_lookup__symbol(e, "Py_Version", 1, &sym) == 0 && elf_lookup__read(e, sym, &hex, 4) == 0 &&
	    (hex >> 24) == 3) {
		major = 3;
		minor = (int)(hex >> 16 & 0xff);
	} else if (version_from_name(f->path, &major, &minor) < 0) {
		char exe[64], target[PATH_MAX];
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)p->pid);
		ssize_t n = readlink(exe, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		if (version_from_name(target, &major, &minor) < 0) {
			if (!old) {
				snprintf(skip_reason, 128, "unknown CPython version in '%s'", f->path);
				return -ENOTSUP;
			}
			/* 2.7 has no _PyEval_EvalFrameDefault; 3.6 does */
			major = elf_lookup__symbol(e, "_PyEval_EvalFrameDefault", 1, &sym) == 0 ? 3 : 2;
			minor = major == 3 ? 6 : 7;
		}
	}
	snprintf(rp->version, sizeof(rp->version), "%d.%d", major, minor);
	if (major == 3 && minor >= 13) {
		uint8_t dbg[PY_DEBUG_OFFSETS_3_13_SIZE];
		uint64_t hexv = 0;
		int err = py_read_all(p->pid, runtime, dbg, sizeof(dbg));
		if (err == 0)
			err = py_layout__from_debug_offsets(dbg, sizeof(dbg), &rp->l, &hexv);
		if (err < 0) {
			snprintf(skip_reason, 128, "unsupported CPython %s%s", rp->version,
				 err == -ENOTSUP ? "" : " (no _Py_DebugOffsets)");
			return -ENOTSUP;
		}
	} else if (py_layout__for_version(major, minor, &rp->l) < 0) {
		snprintf(skip_reason, 128, "unsupported CPython %s", rp->version);
		return -ENOTSUP;
	}
	return 0;
}

int py_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason)
{
	struct py_file files[8];
	size_t n = candidate_files(p, files, 8);
	for (size_t i = 0; i < n; i++) {
		const struct py_file *f = &files[i];
		const char *base = strrchr(f->path, '/') + 1;
		bool named = strstr(base, "python") != NULL;
		struct bin_id id;
		bool have_id = !named && bin_id__of(&id, p->pid, f->start, f->end, f->pgoff);
		if (have_id && not_python && bincache__find(not_python, &id))
			continue;
		struct elf_lookup *e = open_file(p, f);
		if (!e)
			continue;
		uint64_t runtime = 0, head = 0, bias = 0;
		bool old = false;
		int err = -ENOENT;
		if (elf_lookup__symbol(e, "_PyRuntime", !named, &runtime) == 0) {
			err = 0;
		} else if (elf_lookup__symbol(e, "_PyThreadState_Current", !named, &runtime) == 0) {
			old = true;
			err = find_interp_head(e, &head);
			if (err < 0)
				snprintf(skip_reason, 128, "no interp_head in '%s'", f->path);
		}
		if (err == 0 && elf_lookup__bias(e, f->start, f->pgoff, &bias) < 0) {
			snprintf(skip_reason, 128, "failed to find the load address of '%s'", f->path);
			err = -ENOEXEC;
		}
		if (err == 0)
			err = find_layout(rp, e, f, p, runtime + bias, old, skip_reason);
		if (err == 0) {
			rp->interp_head = old ? head + bias : runtime + bias + rp->l.rt_interp_head;
			rp->code_type = type_addr(e, "PyCode_Type", bias);
			rp->str_type = type_addr(e, rp->l.py2_str ? "PyString_Type" : "PyUnicode_Type", bias);
			rp->bytes_type = type_addr(e, rp->l.py2_str ? "PyString_Type" : "PyBytes_Type", bias);
		}
		elf_lookup__free(e);
		if (err != -ENOENT)
			return err;
		if (have_id) {
			if (!not_python)
				not_python = bincache__new(1, NOT_PYTHON_MAX);
			*(char *)bincache__add(not_python, &id) = 1;
		}
	}
	return -ENOENT;
}
