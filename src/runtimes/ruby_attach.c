/* Finding CRuby in a process (see ruby_proc.h): which mapped file holds the interpreter
 * (the ruby executable or a libruby*.so, also one an embedding host loaded), its
 * version, its load address, and from those the layout, the variable that leads to the
 * thread list and the global symbol table that names C functions. */
#include "runtimes/ruby_proc.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtimes/procmaps.h"
#include "symbols/elf_lookup.h"

#define MAX_IOV 256
#define ID2STR_SCAN 96		/* bytes of rb_id2str and its callee searched */
#define DEFAULT_LAST_OP_ID 0xa9	/* tLAST_OP_ID of 2.7-3.4 */

ssize_t rb_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	if (addr == 0)
		return -EFAULT;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

int rb_read_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = rb_read(pid, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

size_t rb_read_spans(pid_t pid, const struct rb_span *spans, size_t n)
{
	struct iovec local[MAX_IOV], remote[MAX_IOV];
	size_t done = 0;

	for (size_t i = 0; i < n; i++)
		memset(spans[i].out, 0, spans[i].len);
	while (done < n) {
		size_t k = 0, want = 0;
		while (k < MAX_IOV && done + k < n && spans[done + k].addr) {
			const struct rb_span *sp = &spans[done + k];
			local[k] = (struct iovec){ sp->out, sp->len };
			remote[k] = (struct iovec){ (void *)(uintptr_t)sp->addr, sp->len };
			k++;
		}
		ssize_t got = k ? process_vm_readv(pid, local, k, remote, k, 0) : 0;
		size_t whole = 0;
		for (; whole < k && got >= (ssize_t)(want + spans[done + whole].len); whole++)
			want += spans[done + whole].len;
		/* a partly read entry is not trusted */
		for (size_t i = whole; i < k; i++)
			memset(spans[done + i].out, 0, spans[done + i].len);
		done += whole;
		if (whole < k || k < MAX_IOV)
			break;
	}
	return done;
}

size_t rb_read_many(pid_t pid, const uint64_t *addrs, size_t n, size_t len, uint8_t *out)
{
	struct rb_span *spans = xmalloc((n ? n : 1) * sizeof(*spans));

	for (size_t i = 0; i < n; i++)
		spans[i] = (struct rb_span){ addrs[i], len, out + i * len };
	size_t got = rb_read_spans(pid, spans, n);
	free(spans);
	return got;
}

/* One file mapped by the process: where its first mapping starts. */
struct rb_file {
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
};

/* The mapped files worth a look: libruby*, and the executable (the first file mapping,
 * which is the main binary in every process the kernel starts). */
static size_t candidate_files(const struct proc_ref *p, struct rb_file *out, size_t max)
{
	size_t nm, n = 0;
	const struct procmap *m = procmaps__get(p->pid, &nm);

	for (size_t k = 0; k < nm && n < max; k++) {
		const char *file = m[k].path, *base = strrchr(file, '/') + 1;
		bool is_lib = strncmp(base, "libruby", 7) == 0;
		bool seen = false;

		for (size_t i = 0; i < n; i++)
			seen |= strcmp(out[i].path, file) == 0;
		if (seen || (n > 0 && !is_lib))
			continue;
		out[n] = (struct rb_file){ m[k].start, m[k].end, m[k].pgoff, "" };
		snprintf(out[n].path, sizeof(out[n].path), "%s", file);
		n++;
	}
	return n;
}

/* Opens the file as the process sees it: through its root, else through map_files. */
static struct elf_lookup *open_file(const struct proc_ref *p, const struct rb_file *f)
{
	char path[PATH_MAX + 64];
	struct elf_lookup *e = NULL;

	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid, f->path);
	if (!strstr(f->path, " (deleted)"))
		e = elf_lookup__open(path);
	if (!e) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)p->pid,
			 f->start, f->end);
		e = elf_lookup__open(path);
	}
	return e;
}

/* The target of a rip-relative operand: disp32 at code[at], the instruction ending at
 * code[end], code loaded at vaddr. */
static uint64_t rip_target(const uint8_t *code, uint64_t vaddr, size_t at, size_t end)
{
	int32_t disp;
	memcpy(&disp, code + at, 4);
	return vaddr + end + (int64_t)disp;
}

/* Finds ruby_global_symbols when the library does not export it (Debian's does not):
 * rb_id2str is `cmp $tLAST_OP_ID, %rdi; ...; jmp lookup`, and lookup compares the
 * serial with global_symbols.last_id (`cmp %reg, last_id(%rip)`) and then loads
 * global_symbols.ids (`mov ids(%rip), %rdi`), 16 bytes further: the struct starts at
 * last_id. Returns 0 with the link-time address in *vaddr, or -ENOENT. */
static int find_global_symbols(struct elf_lookup *e, uint64_t *vaddr, uint64_t *last_op)
{
	uint8_t code[ID2STR_SCAN];
	uint64_t fn, target = 0;

	if (elf_lookup__symbol(e, "rb_id2str", 0, &fn) < 0 || elf_lookup__read(e, fn, code, 32) < 0)
		return -ENOENT;
	for (size_t i = 0; i + 7 <= 32; i++) {
		if (code[i] == 0x48 && code[i + 1] == 0x81 && code[i + 2] == 0xff) {
			uint32_t imm;
			memcpy(&imm, code + i + 3, 4);
			if (imm < 0x1000)
				*last_op = imm;
		}
		if (code[i] == 0xe9 && !target)
			target = rip_target(code, fn, i + 1, i + 5);
	}
	if (!target || elf_lookup__read(e, target, code, sizeof(code)) < 0)
		return -ENOENT;
	for (size_t i = 0; i + 6 <= sizeof(code); i++) {
		if (code[i] != 0x39 || (code[i + 1] & 0xc7) != 0x05)
			continue;
		uint64_t last_id = rip_target(code, target, i + 2, i + 6);
		for (size_t j = i + 6; j + 7 <= sizeof(code); j++)
			if ((code[j] & 0xf8) == 0x48 && code[j + 1] == 0x8b &&
			    (code[j + 2] & 0xc7) == 0x05 &&
			    rip_target(code, target, j + 3, j + 7) == last_id + 16) {
				*vaddr = last_id;
				return 0;
			}
	}
	return -ENOENT;
}

/* Reads the version of the interpreter in e and its layout. */
static int find_layout(struct runtime_proc *rp, struct elf_lookup *e, char *skip_reason)
{
	char v[16] = "";
	uint64_t sym;
	int major = 0, minor = 0;

	int got = -ENOENT;
	/* the string may end its section: read as much of it as the section holds */
	if (elf_lookup__symbol(e, "ruby_version", 0, &sym) == 0)
		for (size_t len = sizeof(v) - 1; got < 0 && len >= 4; len--)
			got = elf_lookup__read(e, sym, v, len);
	if (got == 0 && rb_layout__parse_version(v, sizeof(v), &major, &minor) == 0) {
		v[strcspn(v, " ")] = 0;
	} else {
		int32_t api[3];
		if (elf_lookup__symbol(e, "ruby_api_version", 0, &sym) < 0 ||
		    elf_lookup__read(e, sym, api, sizeof(api)) < 0 || api[0] < 1 || api[0] > 9 ||
		    api[1] < 0 || api[1] > 99) {
			snprintf(skip_reason, 128, "unknown ruby version");
			return -ENOTSUP;
		}
		major = api[0];
		minor = api[1];
		snprintf(v, sizeof(v), "%d.%d", major, minor);
	}
	v[strspn(v, "0123456789.")] = 0;
	snprintf(rp->version, sizeof(rp->version), "%s", v);
	if (rb_layout__for_version(major, minor, &rp->l) < 0) {
		snprintf(skip_reason, 128, "unsupported ruby %s", rp->version);
		return -ENOTSUP;
	}
	return 0;
}

/* Looks at one file: -ENOENT when it holds no CRuby. Symbols are looked up in .symtab
 * too: a ruby built without --enable-shared (rbenv's default) exports none of them, and
 * only files named ruby* or libruby* get here. */
static int try_file(struct runtime_proc *rp, const struct proc_ref *p, const struct rb_file *f,
		    char *skip_reason)
{
	uint64_t var = 0, bias = 0, syms = 0;
	int err = -ENOENT;
	struct elf_lookup *e = open_file(p, f);

	if (!e)
		return -ENOENT;
	if (elf_lookup__symbol(e, "ruby_version", 0, &var) < 0 &&
	    elf_lookup__symbol(e, "ruby_api_version", 0, &var) < 0)
		goto out;
	err = find_layout(rp, e, skip_reason);
	if (err < 0)
		goto out;
	const char *name = rp->l.has_ractor ? "ruby_single_main_ractor" : "ruby_current_vm_ptr";
	if (elf_lookup__symbol(e, name, 0, &var) < 0) {
		snprintf(skip_reason, 128, "no %s in ruby %s", name, rp->version);
		err = -ENOTSUP;
		goto out;
	}
	if (elf_lookup__bias(e, f->start, f->pgoff, &bias) < 0) {
		snprintf(skip_reason, 128, "failed to find the load address of '%s'", f->path);
		err = -ENOEXEC;
		goto out;
	}
	rp->ractor_var = var + bias;
	rp->last_op_id = DEFAULT_LAST_OP_ID;
	if (elf_lookup__symbol(e, "ruby_global_symbols", 0, &syms) == 0 ||
	    find_global_symbols(e, &syms, &rp->last_op_id) == 0)
		rp->symbols = syms + bias;
	err = 0;
out:
	elf_lookup__free(e);
	return err;
}

int rb_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason)
{
	struct rb_file *files = xmalloc(8 * sizeof(*files));
	size_t n = candidate_files(p, files, 8);
	int err = -ENOENT;

	for (size_t i = 0; i < n && err == -ENOENT; i++) {
		const char *base = strrchr(files[i].path, '/') + 1;
		/* the executable is only opened when its name says ruby: a host that
		 * embeds the interpreter maps libruby */
		if (i == 0 && strncmp(base, "ruby", 4) && strncmp(base, "libruby", 7))
			continue;
		err = try_file(rp, p, &files[i], skip_reason);
	}
	free(files);
	return err;
}

char *rb_read_string(struct runtime_proc *rp, uint64_t addr)
{
	uint8_t head[48];
	uint64_t len, ptr;
	char *s;

	if (rb_read_all(rp->pid, addr, head, sizeof(head)) < 0 ||
	    (rb_rd64(head, 0) & RB_T_MASK) != RB_T_STRING)
		return NULL;
	uint64_t flags = rb_rd64(head, 0);
	bool embedded = !(flags & RB_FL_USER1);
	if (rp->l.str_kind == RB_STR_31 && embedded) {
		/* up to 23 chars in the object, NUL-terminated */
		size_t k = 0;
		while (k < 24 && head[16 + k])
			k++;
		s = xmalloc(k + 1);
		memcpy(s, head + 16, k);
		s[k] = 0;
		return s;
	}
	len = rb_rd64(head, 16);
	ptr = embedded ? addr + 24 : rb_rd64(head, 24);
	if (len > 4096)
		len = 4096;
	s = xmalloc(len + 1);
	if (rb_read_all(rp->pid, ptr, s, len) < 0) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	return s;
}

int rb_read_array_entry(struct runtime_proc *rp, uint64_t addr, uint64_t i, uint64_t *out)
{
	uint8_t head[40];
	uint64_t len, flags;

	if (rb_read_all(rp->pid, addr, head, sizeof(head)) < 0)
		return -EFAULT;
	flags = rb_rd64(head, 0);
	if ((flags & RB_T_MASK) != RB_T_ARRAY)
		return -EINVAL;
	if (flags & RB_FL_USER1) {	/* embedded: the elements follow the header */
		unsigned bits = rp->l.str_kind == RB_STR_31 ? 2 : 7;
		len = (flags >> 15) & ((1u << bits) - 1);
		if (i >= len)
			return -ERANGE;
		return rb_read_all(rp->pid, addr + 16 + 8 * i, out, 8);
	}
	len = rb_rd64(head, 16);
	if (i >= len)
		return -ERANGE;
	return rb_read_all(rp->pid, rb_rd64(head, 32) + 8 * i, out, 8);
}
