/* bench/server: the store's figures against SPEC §5.
 *
 *   ingest      stack rows per second per core (CPU time of this process) putting a
 *               synthetic day of HOSTS hosts uploading every INTERVAL s, each upload
 *               ROWS distinct stacks drawn from a fleet-wide pool (as the same services
 *               run on every host), depth 8-40, in per-process series
 *   query       latency of a merged flamegraph over HTTP, by the legacy render (GET
 *               /pyroscope/render, JSON and timeline included; cached by request after
 *               its first, cold run) and by Grafana's call (POST SelectMergeStacktraces,
 *               Connect JSON, not cached): the first run, and the median wall and CPU
 *               time (server and client, which a machine shared with other work
 *               inflates less) of 5, for the whole day of all hosts, the last 24 h
 *               unaligned to days, one hour, and one host for the day
 *   disk        bytes on disk (database + WAL) per stored stack sample (raw rows)
 *
 * Ingest goes through the store interface, as the server's handlers call it; with
 * BENCH_HTTP=N it goes through a kiln server in this process instead (BENCH_THREADS HTTP
 * threads, default 4), N uploaders at once each POSTing gProfiler uploads (JSON with the
 * .col text, the same stacks and series) on a connection of its own: what a fleet's
 * agents do, so that the server's threads, not the bench's, bound what is in flight.
 *
 * Usage: server [DIR [HOSTS [HOURS [ROWS]]]] (defaults: a temp dir, 100 hosts, 24 h,
 * HOSTS 0: only the queries, over a DIR a previous run filled;
 * 300 rows per upload: a host busy on a few cores at 11 Hz for 60 s). Prints one line per figure with the target beside it. */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile/ptype.h"
#include "server/server.h"
#include "store/store.h"
#include "util/strbuf.h"

#define INTERVAL 60
#define POOL 20000
#define PROCESSES 12

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct pool_stack {
	const char *frames[40];
	uint32_t depth;
};

/* A fleet-wide pool of stacks: a tree of call paths over a few thousand function names. */
static struct pool_stack *make_pool(char **names, size_t nr_names)
{
	struct pool_stack *pool = calloc(POOL, sizeof(*pool));

	for (size_t i = 0; i < POOL; i++) {
		struct pool_stack *s = &pool[i];
		/* Share prefixes: start from an earlier stack's prefix half of the time. */
		if (i > 16 && next_rand() % 2) {
			const struct pool_stack *base = &pool[next_rand() % i];
			s->depth = 1 + (uint32_t)(next_rand() % base->depth);
			memcpy(s->frames, base->frames, s->depth * sizeof(*s->frames));
		} else {
			s->depth = 1;
			s->frames[0] = names[next_rand() % 32];
		}
		uint32_t target = 8 + (uint32_t)(next_rand() % 33);
		while (s->depth < target && s->depth < 40)
			s->frames[s->depth++] = names[next_rand() % nr_names];
	}
	return pool;
}

/* One host's upload of one interval, generated before the timed puts. */
struct upload {
	struct profile *p;
	struct labels series[PROCESSES];
	uint32_t *stack_series;
	struct store_put put;
};

static void make_upload(struct upload *u, const struct pool_stack *pool, int h, int64_t t,
			int rows)
{
	char host[32];

	u->p = profile__new();
	u->stack_series = malloc((size_t)rows * sizeof(*u->stack_series));
	snprintf(host, sizeof(host), "host-%03d", h);
	for (int k = 0; k < PROCESSES; k++) {
		char proc[32];
		snprintf(proc, sizeof(proc), "proc-%d", k);
		labels_init(&u->series[k]);
		labels__set(&u->series[k], "host", host);
		labels__set(&u->series[k], "process", proc);
		labels__sort(&u->series[k]);
	}
	for (int r = 0; r < rows; r++) {
		/* skewed: most samples in few stacks */
		uint64_t x = next_rand() % POOL;
		const struct pool_stack *ps = &pool[(x * x / POOL) % POOL];
		size_t idx = profile__add_names(u->p, ps->frames, ps->depth, 1 + next_rand() % 20);
		if (idx < (size_t)rows)
			u->stack_series[idx] = (uint32_t)((ps - pool) % PROCESSES);
	}
	u->put = (struct store_put){ .service = "fleet", .from = t, .until = t + INTERVAL,
				     .profile = u->p, .series = u->series, .nr_series = PROCESSES,
				     .stack_series = u->stack_series };
}

/* The upload as gProfiler's agent sends it: JSON whose "profile" is the .col text, each
 * stack under its process ("0;;proc-K;..."), for host h. */
static char *upload_body(const struct upload *u, int h)
{
	struct strbuf col = STRBUF_INIT;
	char host[32];

	for (size_t i = 0; i < profile__nr_stacks(u->p); i++) {
		struct profile_stack ps = profile__stack(u->p, i);
		strbuf_addf(&col, "0;;proc-%u", u->stack_series[i]);
		for (uint32_t k = 0; k < ps.depth; k++)
			strbuf_addf(&col, ";%s", profile__name(u->p, ps.frames[k]));
		strbuf_addf(&col, " %llu\n", (unsigned long long)ps.count);
	}
	snprintf(host, sizeof(host), "host-%03d", h);
	json_t *j = json_pack("{s:s,s:I,s:I,s:s}", "profile", col.buf, "start_time",
			      (json_int_t)u->put.from, "end_time", (json_int_t)u->put.until,
			      "hostname", host);
	char *body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	strbuf_release(&col);
	return body;
}

static void free_upload(struct upload *u)
{
	for (int k = 0; k < PROCESSES; k++)
		labels_release(&u->series[k]);
	profile__free(u->p);
	free(u->stack_series);
}

/* The uploads of one interval, taken in turn by every putting thread. */
struct putter {
	struct store *s;
	struct upload *up;
	size_t n, next;
	int failed;
};

static void *put_all(void *arg)
{
	struct putter *c = arg;
	char err[256];
	size_t i;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->n) {
		if (store__put(c->s, &c->up[i].put, err, sizeof(err))) {
			fprintf(stderr, "bench: %s\n", err);
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	return NULL;
}

static size_t on_data(char *d, size_t size, size_t n, void *arg)
{
	*(size_t *)arg += size * n;
	return size * n;
}

/* The uploads of one interval over HTTP, taken in turn by every uploader. */
struct uploader {
	uint16_t port;
	char **bodies;
	size_t n, *next;
	int *failed;
	CURL *c;		/* its own connection, kept across intervals */
	pthread_t t;
};

static void *upload_all(void *arg)
{
	struct uploader *u = arg;
	char url[96];
	size_t i, bytes;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	h = curl_slist_append(h, "GPROFILER-SERVICE-NAME: fleet");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v2/profiles", u->port);
	while ((i = __atomic_fetch_add(u->next, 1, __ATOMIC_RELAXED)) < u->n) {
		long status = 0;
		bytes = 0;
		curl_easy_setopt(u->c, CURLOPT_URL, url);
		curl_easy_setopt(u->c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(u->c, CURLOPT_POSTFIELDS, u->bodies[i]);
		curl_easy_setopt(u->c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(u->c, CURLOPT_WRITEDATA, &bytes);
		/* an agent's next upload is 60 s on, past the server's 15 s idle timeout: a new
		 * connection each time, as the agent's */
		curl_easy_setopt(u->c, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(u->c, CURLOPT_FORBID_REUSE, 1L);
		CURLcode rc = curl_easy_perform(u->c);
		curl_easy_getinfo(u->c, CURLINFO_RESPONSE_CODE, &status);
		if (rc != CURLE_OK || status != 200) {
			fprintf(stderr, "bench: upload %zu: %s, HTTP %ld\n", i, curl_easy_strerror(rc),
				status);
			__atomic_store_n(u->failed, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	curl_slist_free_all(h);
	return NULL;
}

/* GET path, or POST body as JSON when body is not NULL; the wall time it took. */
static double timed_request(uint16_t port, const char *path, const char *body, size_t *bytes)
{
	struct strbuf url = STRBUF_INIT;
	struct curl_slist *headers = NULL;
	CURL *c = curl_easy_init();
	long status = 0;
	double t0, t1;

	*bytes = 0;
	strbuf_addf(&url, "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url.buf);
	if (body) {
		headers = curl_slist_append(headers, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, bytes);
	t0 = now_s(CLOCK_MONOTONIC);
	if (curl_easy_perform(c) != CURLE_OK)
		fprintf(stderr, "bench: failed to get '%s'\n", url.buf);
	t1 = now_s(CLOCK_MONOTONIC);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		fprintf(stderr, "bench: '%s' answered %ld\n", url.buf, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(headers);
	strbuf_release(&url);
	return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define REPS 5

/* Runs a request REPS times: the first (cold) wall time, the median wall and CPU times. */
static void timed(uint16_t port, const char *path, const char *body, double *first,
		  double *median, double *median_cpu, size_t *bytes)
{
	double wall[REPS], cpu[REPS];

	for (int rep = 0; rep < REPS; rep++) {
		double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		wall[rep] = timed_request(port, path, body, bytes);
		cpu[rep] = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	*first = wall[0];
	qsort(wall, REPS, sizeof(*wall), cmp_double);
	qsort(cpu, REPS, sizeof(*cpu), cmp_double);
	*median = wall[REPS / 2];
	*median_cpu = cpu[REPS / 2];
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/kiln-bench-server.XXXXXX", err[256];
	const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
	int hosts = argc > 2 ? atoi(argv[2]) : 100;
	double hours = argc > 3 ? atof(argv[3]) : 24;	/* 0.25: a quarter of an hour */
	int64_t span = (int64_t)(hours * 3600);
	int rows = argc > 4 ? atoi(argv[4]) : 300;
	int64_t day = (time(NULL) / 86400 - 2) * 86400;	/* a whole UTC day, two days ago */
	char **names = malloc(3000 * sizeof(*names));
	struct store_options so = { 0 };
	struct store *s = NULL;
	struct store_stats st;
	uint64_t total_rows = 0;

	if (!dir || hosts < 0 || span < INTERVAL || rows <= 0 || rows > POOL) {
		fprintf(stderr, "usage: server [DIR [HOSTS [HOURS [ROWS]]]]\n");
		return 2;
	}
	for (int i = 0; i < 3000; i++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s::module_%d::function_%d(int, std::string const&)",
			    i < 32 ? "root" : "ns", i % 97, i);
		names[i] = strbuf_detach(&sb, NULL);
	}
	struct pool_stack *pool = make_pool(names, 3000);
	const char *env = getenv("BENCH_THREADS"), *http_env = getenv("BENCH_HTTP");
	int threads = env && atoi(env) > 0 ? atoi(env) : 1;
	int uploaders = http_env ? atoi(http_env) : 0;
	struct server *isrv = NULL;
	struct uploader *ul = NULL;
	char listen0[] = "127.0.0.1:0";

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (hosts && uploaders > 0) {
		struct server_options io = { .listen = listen0, .data_dir = dir,
					     .threads = env ? (unsigned)threads : 4,
					     /* one address for every uploader: a closed
					      * connection counts until the server reaps it */
					     .client_connections = 4 * (unsigned)uploaders + 64 };
		if (!(isrv = server__start(&io, err, sizeof(err)))) {
			fprintf(stderr, "bench: %s\n", err);
			return 1;
		}
		ul = calloc((size_t)uploaders, sizeof(*ul));
		for (int i = 0; i < uploaders; i++)
			ul[i].c = curl_easy_init();
	} else if (!(s = store__open(dir, &so, err, sizeof(err)))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}

	if (!hosts) {
		if (store__retain(s, 0, err, sizeof(err)) < 0)
			fprintf(stderr, "bench: %s\n", err);
		store__close(s);
		goto queries;
	}
	/* Ingest: one put per host per interval, as the server does per upload; with
	 * BENCH_THREADS=N, N threads put an interval's uploads at once (as N HTTP workers do),
	 * the profiles generated before (outside the timed part); with BENCH_HTTP, the
	 * uploaders send them to the server. */
	double cpu = 0, wall = 0, gen = 0;
	struct upload *up = calloc(hosts ? (size_t)hosts : 1, sizeof(*up));
	char **bodies = calloc(hosts ? (size_t)hosts : 1, sizeof(*bodies));
	for (int64_t t = day; t < day + span; t += INTERVAL) {
		double g0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		for (int h = 0; h < hosts; h++) {
			make_upload(&up[h], pool, h, t, rows);
			if (isrv)
				bodies[h] = upload_body(&up[h], h);
		}
		struct putter ctx = { .s = s, .up = up, .n = (size_t)hosts };
		size_t next = 0;
		int failed = 0;
		pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
		double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
		gen += c0 - g0;
		if (isrv) {
			for (int i = 0; i < uploaders; i++) {
				ul[i] = (struct uploader){ server__port(isrv), bodies, (size_t)hosts,
							   &next, &failed, ul[i].c, 0 };
				pthread_create(&ul[i].t, NULL, upload_all, &ul[i]);
			}
			for (int i = 0; i < uploaders; i++)
				pthread_join(ul[i].t, NULL);
		} else {
			for (int i = 1; i < threads; i++)
				pthread_create(&tid[i], NULL, put_all, &ctx);
			put_all(&ctx);
			for (int i = 1; i < threads; i++)
				pthread_join(tid[i], NULL);
		}
		free(tid);
		cpu += now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		wall += now_s(CLOCK_MONOTONIC) - w0;
		if (ctx.failed || failed)
			return 1;
		for (int h = 0; h < hosts; h++) {
			total_rows += profile__nr_stacks(up[h].p);
			free_upload(&up[h]);
			free(bodies[h]);
		}
	}
	free(bodies);
	if (isrv) {
		for (int i = 0; i < uploaders; i++)
			curl_easy_cleanup(ul[i].c);
		free(ul);
		server__stop(isrv);
		if (!(s = store__open(dir, &so, err, sizeof(err)))) {
			fprintf(stderr, "bench: %s\n", err);
			return 1;
		}
	}
	free(up);
	/* The server's hourly maintenance: closes the day's last hour and the day itself. */
	double m0 = now_s(CLOCK_MONOTONIC);
	if (store__retain(s, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	double maint = now_s(CLOCK_MONOTONIC) - m0;
	if (store__stats(s, &st, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	store__close(s);
	printf("data: %d hosts x %g h, upload every %d s, %d stacks per upload: %llu stack rows, "
	       "%llu samples, %llu distinct stack nodes\n", hosts, hours, INTERVAL, rows,
	       (unsigned long long)total_rows, (unsigned long long)st.samples,
	       (unsigned long long)st.stacks);
	if (uploaders > 0)
		printf("ingest: %.0f stack rows/s per core (%.1f s CPU of the server and its "
		       "clients), %.0f rows/s wall (%.1f s, %d HTTP uploaders, %d server threads; "
		       "generating the uploads took %.1f s more)   target >= 100000 rows/s/core\n",
		       total_rows / cpu, cpu, total_rows / wall, wall, uploaders,
		       env ? threads : 4, gen);
	else
		printf("ingest: %.0f stack rows/s per core (%.1f s CPU in store__put), %.0f rows/s "
		       "wall (%.1f s, %d putting thread%s; generating the profiles took %.1f s "
		       "more)   target >= 100000 rows/s/core\n", total_rows / cpu, cpu,
		       total_rows / wall, wall, threads, threads > 1 ? "s" : "", gen);
	printf("maintenance: %.1f s to roll up the last hour and the day\n", maint);
	printf("disk: %.2f bytes per stored stack sample (%llu bytes, %llu raw rows incl. hour "
	       "and day rollups)   target < 20\n", (double)st.bytes / (double)st.rows,
	       (unsigned long long)st.bytes, (unsigned long long)st.rows);

queries:
	/* Queries through the real HTTP server. */
	struct strbuf listen = STRBUF_INIT, path = STRBUF_INIT;
	strbuf_addstr(&listen, "127.0.0.1:0");
	struct server_options o = { .listen = listen.buf, .data_dir = dir, .threads = 2 };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	struct { const char *what; int64_t from, until; const char *filter, *selector; } q[] = {
		{ "whole day, all hosts", day, day + span, "", "" },
		{ "24 h unaligned, all hosts", day + 1800, day + 1800 + 86400, "", "" },
		{ "one hour, all hosts", day + 7200, day + 10800, "", "" },
		{ "whole day, one host", day, day + span, "%7Bhost%3D%22host-007%22%7D",
		  ",host=\\\"host-007\\\"" },
	};
	/* the server's CPU is in this process: the legacy render caches its flamegraphs by
	 * request, so its first run is the uncached one; Connect's answers are not cached */
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		size_t bytes;
		double first, med, med_cpu;
		strbuf_reset(&path);
		strbuf_addf(&path, "/pyroscope/render?query=fleet%s&from=%lld&until=%lld", q[i].filter,
			    (long long)q[i].from, (long long)q[i].until);
		timed(server__port(srv), path.buf, NULL, &first, &med, &med_cpu, &bytes);
		printf("query: %-26s render  %7.1f ms cold, %7.1f ms wall, %7.1f ms CPU median of %d "
		       "(%zu bytes of flamebearer JSON)%s\n", q[i].what, first * 1e3, med * 1e3,
		       med_cpu * 1e3, REPS, bytes, i == 0 ? "   target < 1000 ms" : "");
		struct strbuf body = STRBUF_INIT;
		strbuf_addf(&body, "{\"profileTypeID\":\"%s\",\"labelSelector\":"
			    "\"{service_name=\\\"fleet\\\"%s}\",\"start\":%lld,\"end\":%lld}",
			    PTYPE_CPU_SAMPLES, q[i].selector, (long long)q[i].from * 1000,
			    (long long)q[i].until * 1000);
		timed(server__port(srv), "/querier.v1.QuerierService/SelectMergeStacktraces", body.buf,
		      &first, &med, &med_cpu, &bytes);
		printf("query: %-26s Connect %7.1f ms cold, %7.1f ms wall, %7.1f ms CPU median of %d "
		       "(%zu bytes of FlameGraph JSON, SelectMergeStacktraces)\n", q[i].what,
		       first * 1e3, med * 1e3, med_cpu * 1e3, REPS, bytes);
		strbuf_release(&body);
	}
	server__stop(srv);
	curl_global_cleanup();
	strbuf_release(&listen);
	strbuf_release(&path);
	return 0;
}
