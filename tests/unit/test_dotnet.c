/* The .NET runtime's parts that need no runtime: the NetTrace decoder on a stream built
 * here in the layout a CoreCLR 3.1 session writes (whole, fed byte by byte, truncated at
 * every length, corrupted at every byte, garbage), the method table and the naming of a
 * thread's stacks, and the IPC client against a fake diagnostics socket that answers
 * with an error, says nothing, or closes the stream midway (bounded, never hung). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtimes/dotnet.h"
#include "runtimes/dotnet_ipc.h"
#include "runtimes/dotnet_nettrace.h"
#include "util/strbuf.h"

/* --- a NetTrace writer, for the decoder's input --- */

static void le(struct strbuf *sb, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		strbuf_addch(sb, i < 8 ? (char)(v >> (8 * i) & 0xff) : 0);
}

static void var(struct strbuf *sb, uint64_t v)
{
	do {
		strbuf_addch(sb, (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void u16z(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		le(sb, (unsigned char)*s, 2);
	le(sb, 0, 2);
}

static void begin(struct strbuf *sb, const char *type)
{
	strbuf_add(sb, "\5\5\1", 3);
	le(sb, 2, 4);
	le(sb, 2, 4);
	le(sb, strlen(type), 4);
	strbuf_addstr(sb, type);
	strbuf_addch(sb, 6);
}

static void block(struct strbuf *sb, const char *type, const struct strbuf *body)
{
	begin(sb, type);
	le(sb, body->len, 4);
	while (sb->len % 4)
		strbuf_addch(sb, 0);
	strbuf_add(sb, body->buf, body->len);
	strbuf_addch(sb, 6);
}

static void event_header(struct strbuf *b)
{
	le(b, 20, 2);	/* header size */
	le(b, 1, 2);	/* compressed headers */
	le(b, 1, 8);
	le(b, 2, 8);
}

static void metadata(struct strbuf *b, uint32_t id, const char *provider, uint32_t event)
{
	struct strbuf p = STRBUF_INIT;

	le(&p, id, 4);
	u16z(&p, provider);
	le(&p, event, 4);
	u16z(&p, "");
	le(&p, 0, 8 + 4 + 4 + 4);
	strbuf_addch(b, (char)(0x02 | 0x04 | 0x80));
	var(b, 1);
	var(b, 7);
	var(b, 0);
	var(b, 7);
	var(b, 100);
	var(b, p.len);
	strbuf_add(b, p.buf, p.len);
	strbuf_release(&p);
}

static void method(struct strbuf *b, uint64_t start, uint32_t size, const char *ns,
		   const char *name)
{
	struct strbuf p = STRBUF_INIT;

	le(&p, 1, 8);
	le(&p, 2, 8);
	le(&p, start, 8);
	le(&p, size, 4);
	le(&p, 0, 8);
	u16z(&p, ns);
	u16z(&p, name);
	u16z(&p, "void ()");
	le(&p, 0, 2);
	strbuf_addch(b, (char)(0x01 | 0x80));
	var(b, 2);	/* metadata id */
	var(b, 10);	/* timestamp delta */
	var(b, p.len);
	strbuf_add(b, p.buf, p.len);
	strbuf_release(&p);
}

/* A stream: 3 methods (Ns.C.Outer at 0x1000, Ns.C.Inner at 0x2000, Leaf at 0x3000), one
 * stack Leaf < Inner < Outer, 5 samples of thread 42 on it, the last 4 with headers that
 * omit what repeats (the payload size too). */
static void build_stream(struct strbuf *sb)
{
	struct strbuf b = STRBUF_INIT;

	strbuf_add(sb, "Nettrace", 8);
	le(sb, 20, 4);
	strbuf_addstr(sb, "!FastSerialization.1");
	begin(sb, "Trace");
	le(sb, 0, 48);
	strbuf_addch(sb, 6);
	event_header(&b);
	metadata(&b, 1, "Microsoft-DotNETCore-SampleProfiler", 0);
	metadata(&b, 2, "Microsoft-Windows-DotNETRuntime", 143);
	metadata(&b, 3, "Microsoft-Windows-DotNETRuntime", 80);
	block(sb, "MetadataBlock", &b);
	strbuf_reset(&b);
	le(&b, 1, 4);	/* first id */
	le(&b, 1, 4);	/* count */
	le(&b, 24, 4);
	le(&b, 0x3010, 8);	/* leaf first */
	le(&b, 0x2020, 8);
	le(&b, 0x1030, 8);
	block(sb, "StackBlock", &b);
	strbuf_reset(&b);
	event_header(&b);
	method(&b, 0x1000, 0x100, "Ns.C", "Outer");
	method(&b, 0x2000, 0x100, "Ns.C", "Inner");
	method(&b, 0x3000, 0x100, "", "Leaf");
	strbuf_addch(&b, (char)(0x01 | 0x04 | 0x08 | 0x80));
	var(&b, 1);
	var(&b, 42);
	var(&b, 1);
	var(&b, 5);
	var(&b, 4);
	le(&b, 2, 4);
	for (int i = 0; i < 4; i++) {
		strbuf_addch(&b, 0);	/* everything as before */
		var(&b, 5);
		le(&b, 2, 4);
	}
	block(sb, "EventBlock", &b);
	strbuf_addch(sb, 1);	/* end of stream */
	strbuf_release(&b);
}

struct seen {
	int samples, methods;
	uint64_t tid;
	uint32_t nr_ips;
	char last_method[64];
};

static void on_sample(void *ctx, const struct nettrace_sample *s)
{
	struct seen *x = ctx;

	x->samples++;
	x->tid = s->tid;
	x->nr_ips = s->nr_ips;
}

static void on_method(void *ctx, const struct nettrace_method *m)
{
	struct seen *x = ctx;

	x->methods++;
	snprintf(x->last_method, sizeof(x->last_method), "%s|%s", m->ns, m->name);
}

static int decode(const struct strbuf *sb, size_t len, size_t chunk, struct seen *x)
{
	struct nettrace_sink sink = { x, on_sample, on_method };
	struct nettrace *nt = nettrace__new(&sink);
	int r = 0;

	memset(x, 0, sizeof(*x));
	for (size_t off = 0; off < len && !r; off += chunk)
		r = nettrace__feed(nt, sb->buf + off, off + chunk <= len ? chunk : len - off);
	nettrace__free(nt);
	return r;
}

static void test_whole_stream(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct seen x;

	build_stream(&sb);
	assert_int_equal(decode(&sb, sb.len, sb.len, &x), 1);
	assert_int_equal(x.samples, 5);
	assert_int_equal(x.methods, 3);
	assert_int_equal(x.tid, 42);
	assert_int_equal(x.nr_ips, 3);
	assert_string_equal(x.last_method, "|Leaf");
	assert_int_equal(decode(&sb, sb.len, 1, &x), 1);	/* byte by byte */
	assert_int_equal(x.samples, 5);
	assert_int_equal(x.methods, 3);
	strbuf_release(&sb);
}

static void test_truncated(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct seen x;

	build_stream(&sb);
	for (size_t len = 0; len < sb.len; len++) {
		assert_int_equal(decode(&sb, len, 7, &x), 0);	/* more expected, no error */
		assert_true(x.samples <= 5 && x.methods <= 3);
	}
	strbuf_release(&sb);
}

static void test_corrupt(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct seen x;
	int errors = 0;

	build_stream(&sb);
	for (size_t i = 0; i < sb.len; i++) {
		for (int v = 0; v < 3; v++) {
			char keep = sb.buf[i];
			sb.buf[i] = (char)(v == 0 ? 0xff : v == 1 ? 0 : keep ^ 0x80);
			int r = decode(&sb, sb.len, 13, &x);
			assert_true(r == 0 || r == 1 || r == -EPROTO);
			assert_true(x.samples <= 5 && x.methods <= 3);
			errors += r < 0;
			sb.buf[i] = keep;
		}
	}
	assert_true(errors > 0);
	/* garbage from the start, and a block that claims 1 GiB */
	strbuf_reset(&sb);
	for (int i = 0; i < 4096; i++)
		strbuf_addch(&sb, (char)(i * 7919 % 251));
	assert_int_equal(decode(&sb, sb.len, 100, &x), -EPROTO);
	strbuf_reset(&sb);
	build_stream(&sb);
	strbuf_setlen(&sb, 8 + 24 + 15 + 5 + 48 + 1);	/* up to the Trace object */
	begin(&sb, "EventBlock");
	le(&sb, 1u << 30, 4);
	assert_int_equal(decode(&sb, sb.len, sb.len, &x), -EPROTO);
	strbuf_release(&sb);
}

static void test_names(void **state)
{
	struct dotnet_methods m;
	struct dotnet_thread *threads = NULL;
	size_t nr = 0;
	uint64_t ips[] = { 0x3010, 0x9999, 0x2020, 0x1030 };	/* leaf first; one unknown */
	struct nettrace_sample s = { 42, ips, 4 };
	struct profile *p = NULL;

	dotnet_methods_init(&m);
	dotnet_methods__add(&m, &(struct nettrace_method){ 0x1000, 0x100, "Ns.C", "Outer" });
	dotnet_methods__add(&m, &(struct nettrace_method){ 0x2000, 0x100, "Ns.C", "Inner" });
	dotnet_methods__add(&m, &(struct nettrace_method){ 0x3000, 0x10, "Ns.C", "Old" });
	dotnet_methods__add(&m, &(struct nettrace_method){ 0x3000, 0x100, "Ns.D", "Leaf" });
	assert_string_equal(dotnet_methods__find(&m, 0x3050), "Ns.D.Leaf");	/* the later */
	assert_null(dotnet_methods__find(&m, 0x2100));
	assert_null(dotnet_methods__find(&m, 0x10));
	dotnet_threads__add(&threads, &nr, &s);
	dotnet_threads__add(&threads, &nr, &s);
	dotnet_threads__add(&threads, &nr, &(struct nettrace_sample){ 42, NULL, 0 });
	assert_int_equal(nr, 1);
	assert_int_equal(threads[0].samples, 2);
	assert_int_equal(dotnet_thread__name(&threads[0], &m, &p), 2);
	assert_int_equal(profile__nr_stacks(p), 1);
	struct profile_stack st = profile__stack(p, 0);
	assert_int_equal(st.depth, 4);
	assert_int_equal(st.count, 2);
	assert_string_equal(profile__name(p, st.frames[0]), "Ns.C.Outer_[net]");
	assert_string_equal(profile__name(p, st.frames[1]), "Ns.C.Inner_[net]");
	assert_string_equal(profile__name(p, st.frames[2]), "[unknown]_[net]");
	assert_string_equal(profile__name(p, st.frames[3]), "Ns.D.Leaf_[net]");
	assert_int_equal(threads[0].samples, 0);
	profile__free(p);
	profile__free(threads[0].raw);
	free(threads);
	dotnet_methods_release(&m);
}

/* --- a fake diagnostics socket --- */

enum fake_mode { FAKE_ERROR, FAKE_SILENT, FAKE_CUT };

struct fake {
	int lfd;
	enum fake_mode mode;
	char path[100];
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;
	unsigned char req[1024];
	int fd = accept(f->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	(void)!read(fd, req, sizeof(req));
	if (f->mode == FAKE_ERROR) {
		unsigned char r[24] = "DOTNET_IPC_V1";
		r[14] = 24, r[16] = 0xff, r[17] = 0xff;
		r[20] = 0x15, r[21] = 0x15, r[22] = 0x13, r[23] = 0x80;
		(void)!write(fd, r, sizeof(r));
	} else if (f->mode == FAKE_SILENT) {
		usleep(2500 * 1000);	/* past the client's bound */
	} else {
		struct strbuf sb = STRBUF_INIT;
		unsigned char r[28] = "DOTNET_IPC_V1";
		r[14] = 28, r[16] = 0xff, r[20] = 7;
		(void)!write(fd, r, sizeof(r));
		build_stream(&sb);
		(void)!write(fd, sb.buf, sb.len / 2);	/* then the process "dies" */
		strbuf_release(&sb);
	}
	close(fd);
	return NULL;
}

static void fake_start(struct fake *f, pthread_t *t, enum fake_mode mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *tmp = getenv("TMPDIR");

	f->mode = mode;
	snprintf(f->path, sizeof(f->path), "%s/dotnet-diagnostic-%d-1-socket",
		 tmp && tmp[0] == '/' ? tmp : "/tmp", (int)getpid());
	unlink(f->path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(pthread_create(t, NULL, fake_serve, f), 0);
}

static void fake_stop(struct fake *f, pthread_t t)
{
	pthread_join(t, NULL);
	close(f->lfd);
	unlink(f->path);
}

static void test_ipc_faults(void **state)
{
	struct fake f;
	pthread_t t;
	uint64_t sid = 0;
	unsigned char buf[4096];

	assert_int_equal(dotnet_ipc__start_session(getpid(), 1, &sid), -ENOENT);

	fake_start(&f, &t, FAKE_ERROR);
	assert_int_equal(dotnet_ipc__start_session(getpid(), 1, &sid), -EREMOTEIO);
	fake_stop(&f, t);

	fake_start(&f, &t, FAKE_SILENT);
	assert_int_equal(dotnet_ipc__start_session(getpid(), 1, &sid), -ETIMEDOUT);
	fake_stop(&f, t);

	fake_start(&f, &t, FAKE_CUT);
	int fd = dotnet_ipc__start_session(getpid(), 1, &sid);
	assert_true(fd >= 0);
	assert_int_equal(sid, 7);
	struct seen x = { 0 };
	struct nettrace *nt = nettrace__new(&(struct nettrace_sink){ &x, on_sample, on_method });
	long n;
	int r = 0, reads = 0;
	while ((n = dotnet_ipc__read(fd, buf, sizeof(buf), 1000)) > 0 && reads++ < 1000)
		r = nettrace__feed(nt, buf, (size_t)n);
	assert_int_equal(n, 0);		/* the end of the stream, not a hang */
	assert_int_equal(r, 0);		/* an unfinished stream: no end mark */
	nettrace__free(nt);
	close(fd);
	fake_stop(&f, t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_stream),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_ipc_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
