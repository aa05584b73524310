/* Finding V8 in a node process (see node_proc.h): the mapped node executable (or
 * libnode, or under another name a large executable that exports V8's postmortem
 * symbols), V8's version from v8::internal::Version, the layout from the v8dbg_*
 * postmortem symbols, and where the process keeps the embedded builtins' code (the
 * builtins run JavaScript too: the interpreter, the entry frames). A binary is looked at
 * once: what it gave is remembered by file identity. */
#include "runtimes/node_proc.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/bincache.h"
#include "runtimes/procmaps.h"
#include "symbols/elf_lookup.h"

#define NR_KNOWN 32
#define MIN_V8_TEXT (16u << 20)	/* V8's code alone is more than this (node 20: 26 MiB, 24: 41 MiB) */
#define BLOB_CODE "_ZN2v88internal12_GLOBAL__N_127current_embedded_blob_code_E"
#define BLOB_SIZE "_ZN2v88internal12_GLOBAL__N_132current_embedded_blob_code_size_E"
#define BLOB_CODE_FN "_ZN2v88internal7Isolate23CurrentEmbeddedBlobCodeEv"
#define BLOB_SIZE_FN "_ZN2v88internal7Isolate27CurrentEmbeddedBlobCodeSizeEv"
#define BC_SIZES "_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE"

/* What a node binary or libnode holds, remembered per file (runtimes/bincache.h). */
struct known {
	int status;			/* 0, -ENOENT (no V8) or -ENOTSUP */
	char version[32];
	struct nd_layout l;
	uint64_t blob_var, blob_size_var;	/* file vaddrs, 0 when not found */
	uint64_t seg;			/* a mapping at pgoff is biased by start - seg */
	uint8_t bc_sizes[3][256];	/* see runtime_proc */
	uint32_t nr_bytecodes;
};

static struct bincache *known;

bool nd_attach__is_node_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "node") || !strcmp(base, "nodejs") || !strncmp(base, "libnode.so", 10);
}

/* The first mapping of libnode, else of the node binary: where a node links libnode
 * (Debian's), V8 is in the library. */
static int node_mapping(const struct procmap *m, size_t n, pid_t pid, struct bin_mapping *out)
{
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		if (!nd_attach__is_node_file(m[i].path))
			continue;
		const char *base = strrchr(m[i].path, '/');
		bool lib = base && !strncmp(base + 1, "libnode.so", 10);
		if (m[i].path[0] != '/' || (found && !lib))
			continue;	/* have the executable's already */
		*out = (struct bin_mapping){ pid, m[i].start, m[i].end, m[i].pgoff, "" };
		snprintf(out->path, sizeof(out->path), "%s", m[i].path);
		found = true;
		if (lib)
			break;
	}
	return found ? 0 : -ENOENT;
}

static bool get_int(void *ctx, const char *name, int32_t *out)
{
	uint64_t v;

	return elf_lookup__symbol(ctx, name, 1, &v) == 0 &&
	       elf_lookup__read(ctx, v, out, sizeof(*out)) == 0;
}

/* The variable that the exported accessor fn returns, from its first instruction, where
 * the variable is a static one that only .symtab names (stripped: Debian's libnode):
 * `mov rax, [rip + d]` (48 8b 05 d) or `mov eax, [rip + d]` (8b 05 d), then `ret`.
 * Returns 0, or -ENOENT when the code is not one of those. */
static int accessor_var(struct elf_lookup *e, const char *fn, uint64_t *var)
{
	uint8_t c[8];
	uint64_t at;
	int32_t d;

	if (elf_lookup__symbol(e, fn, 1, &at) < 0 || elf_lookup__read(e, at, c, sizeof(c)) < 0)
		return -ENOENT;
	if (c[0] == 0x48 && c[1] == 0x8b && c[2] == 0x05 && c[7] == 0xc3) {
		memcpy(&d, c + 3, 4);
		*var = at + 7 + (uint64_t)(int64_t)d;
	} else if (c[0] == 0x8b && c[1] == 0x05 && c[6] == 0xc3) {
		memcpy(&d, c + 2, 4);
		*var = at + 6 + (uint64_t)(int64_t)d;
	} else {
		return -ENOENT;
	}
	return 0;
}

/* V8's uint8_t kBytecodeSizes[3][count]: each bytecode's size at operand scales 1, 2 and
 * 4. Taken only when it looks like one: the four scaling prefixes first (size 1 at every
 * scale), and no size 0 or larger than a bytecode of five quadruple operands. */
static void bytecode_sizes(struct elf_lookup *e, struct known *k)
{
	uint8_t t[3 * 256];
	uint64_t at, size;

	k->nr_bytecodes = 0;
	if (elf_lookup__object(e, BC_SIZES, 0, &at, &size) < 0 || size % 3 || size / 3 < 8 ||
	    size / 3 > 256 || elf_lookup__read(e, at, t, (size_t)size) < 0)
		return;
	uint32_t n = (uint32_t)(size / 3);
	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t b = 0; b < n; b++) {
			uint8_t v = t[s * n + b];
			if (v == 0 || v > 1 + 5 * 4 || (b < 4 && v != 1))
				return;
			k->bc_sizes[s][b] = v;
		}
	k->nr_bytecodes = n;
}

static void inspect(void *value, const struct bin_mapping *m)
{
	struct known *k = value;
	pid_t pid = m->pid;
	char path[PATH_MAX + 64];
	int32_t major, minor, build, patch;
	uint64_t bias;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	struct elf_lookup *e = elf_lookup__open(path);
	if (!e) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
		e = elf_lookup__open(path);
	}
	k->status = -ENOENT;
	if (!e)
		return;
	uint64_t v8dbg;
	/* a file not named node is V8 only when it exports the postmortem symbols: one look
	 * at its .dynsym, never its .symtab (a large unstripped binary) */
	if (!nd_attach__is_node_file(m->path) &&
	    elf_lookup__symbol(e, "v8dbg_off_fp_function", 1, &v8dbg) < 0)
		goto out;
	if (elf_lookup__bias(e, m->start, m->pgoff, &bias) < 0 ||
	    !get_int(e, "_ZN2v88internal7Version6major_E", &major) ||
	    !get_int(e, "_ZN2v88internal7Version6minor_E", &minor) ||
	    !get_int(e, "_ZN2v88internal7Version6build_E", &build) ||
	    !get_int(e, "_ZN2v88internal7Version6patch_E", &patch))
		goto out;
	k->seg = m->start - bias;
	snprintf(k->version, sizeof(k->version), "%d.%d.%d", major, minor, build);
	k->status = -ENOTSUP;
	int32_t probe;
	if (!get_int(e, "v8dbg_off_fp_function", &probe) ||
	    nd_layout__fill(&k->l, major, minor, build, get_int, e) < 0)
		goto out;
	if ((elf_lookup__symbol(e, BLOB_CODE, 0, &k->blob_var) < 0 ||
	     elf_lookup__symbol(e, BLOB_SIZE, 0, &k->blob_size_var) < 0) &&
	    (accessor_var(e, BLOB_CODE_FN, &k->blob_var) < 0 ||
	     accessor_var(e, BLOB_SIZE_FN, &k->blob_size_var) < 0))
		k->blob_var = k->blob_size_var = 0;
	bytecode_sizes(e, k);
	k->status = 0;
out:
	elf_lookup__free(e);
}

/* What file m holds, looked at once per file (bincache.h). */
static struct known *known_of(const struct bin_mapping *m, struct known *scratch)
{
	return bincache__get_mapped(&known, sizeof(struct known), NR_KNOWN, m, scratch, inspect);
}

/* node under another name: the first file with an executable mapping of at least
 * MIN_V8_TEXT bytes that inspect() finds V8 in (by its exported postmortem symbols), and
 * its first mapping in *out. Every other process with a large binary costs a stat per
 * such file here, and one look at its .dynsym the first time the file is seen. */
static struct known *v8_by_symbols(const struct procmap *m, size_t n, pid_t pid,
				   struct bin_mapping *out, struct known *scratch)
{
	for (size_t i = 0; i < n; i++) {
		if (!m[i].exec || m[i].end - m[i].start < MIN_V8_TEXT || m[i].path[0] != '/')
			continue;
		size_t first = 0;
		while (strcmp(m[first].path, m[i].path))
			first++;
		*out = (struct bin_mapping){ pid, m[first].start, m[first].end, m[first].pgoff, "" };
		snprintf(out->path, sizeof(out->path), "%s", m[first].path);
		struct known *k = known_of(out, scratch);
		if (k->status != -ENOENT)
			return k;
	}
	return NULL;
}

int nd_attach__find(struct runtime_proc *rp, const struct proc_ref *p, char *skip_reason)
{
	struct bin_mapping m;
	struct known one, *k = NULL;
	size_t n;
	const struct procmap *maps = procmaps__get(p->pid, &n);

	if (!maps)
		return -ESRCH;
	if (node_mapping(maps, n, p->pid, &m) == 0)
		k = known_of(&m, &one);
	else if (!(k = v8_by_symbols(maps, n, p->pid, &m, &one)))
		return -ENOENT;
	if (k->status == -ENOTSUP)
		snprintf(skip_reason, 128, "unsupported node (V8 %s)", k->version);
	if (k->status < 0)
		return k->status;
	rp->l = k->l;
	memcpy(rp->bc_sizes, k->bc_sizes, sizeof(rp->bc_sizes));
	rp->nr_bytecodes = k->nr_bytecodes;
	snprintf(rp->version, sizeof(rp->version), "%s", k->version);
	if (k->blob_var) {
		rp->blob_var = k->blob_var + (m.start - k->seg);
		rp->blob_size_var = k->blob_size_var + (m.start - k->seg);
	}
	return 0;
}
