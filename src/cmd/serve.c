/* kiln serve: store uploaded profiles and answer queries (see server/server.h). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "server/grpc.h"
#include "server/server.h"
#include "util/log.h"
#include "util/strbuf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kiln serve [options]\n\n"
		"  --listen ADDR:PORT      address to serve on, [IPV6]:PORT too (default %s;\n"
		"                          port 0 picks one)\n"
		"  --data-dir DIR          where the SQLite database lives (default ./kiln-data)\n"
		"  --storage URL           where profiles are stored: sqlite:PATH, a directory\n"
		"                          (default: the data dir), or ClickHouse:\n"
		"                          clickhouse://[USER[:PASS]@]HOST:PORT[,HOST:PORT]/DB\n"
		"                          [?cluster=NAME&secure=1&cacert=FILE&insecure=1]\n"
		"                          (HTTP port; password also from $KILN_CLICKHOUSE_PASSWORD)\n"
		"  --retention-days N      keep raw data N days, hourly 4N, daily 16N (default 30;\n"
		"                          0 keeps everything)\n"
		"  --token T               a write token: may upload (repeatable)\n"
		"  --read-token T          a read token: may query and use the UI (repeatable)\n"
		"  --tokens-file FILE      tokens from FILE, one per line: TOKEN [write|read|rw]\n"
		"                          [tenant=NAME] (write when no role is given; # comments);\n"
		"                          a tenant's token sees only the tenant's services.\n"
		"                          With any token, every route but the health checks and\n"
		"                          the UI's files needs one; without, only loopback\n"
		"                          addresses are served\n"
		"  --insecure-open         serve a non-loopback address without any token\n"
		"  --otlp-grpc-listen ADDR:PORT\n"
		"                          also take OTLP profiles over gRPC (HTTP/2; TLS with\n"
		"                          --tls-cert) there, as the OTel eBPF profiler sends them\n"
		"  --otlp-grpc             the same on --listen's address, port %d\n"
		"  --tls-cert FILE, --tls-key FILE\n"
		"                          serve HTTPS with this PEM certificate (chain) and key\n"
		"  --max-body-bytes N      largest request body accepted (default %u)\n"
		"  --threads N             HTTP worker threads, and as many query threads (default 4)\n"
		"  --client-connections N  connections one client address may hold (default %u;\n"
		"                          raise it behind a proxy that funnels many clients)\n"
		"  --query-timeout S       a query's store read stops after S seconds: 503\n"
		"                          (default %d)\n"
		"  --max-waiting-uploads N uploads that may wait at once for a ClickHouse store to\n"
		"                          acknowledge them (no thread held): 503 beyond (default %u)\n"
		"  Pyroscope's ingest limits (/ingest, the Connect push, OTLP; 0: no limit):\n"
		"  --max-profile-size N    bytes of a pushed profile, uncompressed: 413 beyond\n"
		"                          (default %u)\n"
		"  --max-profile-samples N samples of one pushed profile: 400 beyond (default %u)\n"
		"  --max-stack-depth N     frames of a pushed stack kept, from the root: deeper\n"
		"                          stacks lose their leaf end (default %u)\n"
		"  --reject-older-than S, --reject-newer-than S\n"
		"                          the ingestion window: an upload starting more than S\n"
		"                          seconds before now, or ending more than S after: 422\n"
		"                          (default: none; a day ahead is always refused)\n"
		"  -v, --verbose / -q, --quiet\n",
		SERVER_DEFAULT_LISTEN, GRPC_DEFAULT_PORT, SERVER_DEFAULT_MAX_BODY, SERVER_DEFAULT_CLIENT_CONNECTIONS,
		SERVER_DEFAULT_QUERY_TIMEOUT_MS / 1000, SERVER_DEFAULT_WAITING_UPLOADS,
		INGEST_DEFAULT_MAX_PROFILE_BYTES,
		INGEST_DEFAULT_MAX_SAMPLES, INGEST_DEFAULT_MAX_DEPTH);
}

struct tokens {
	char **v;
	char **tenant;		/* per token, NULL: none */
	size_t n;
};

static void add_token(struct tokens *t, const char *token, const char *tenant)
{
	t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->tenant = xrealloc(t->tenant, (t->n + 1) * sizeof(*t->tenant));
	t->tenant[t->n] = tenant ? xstrdup(tenant) : NULL;
	t->v[t->n++] = xstrdup(token);
}

static void free_tokens(struct tokens *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i]);
		free(t->tenant[i]);
	}
	free(t->v);
	free(t->tenant);
}

/* Lines "TOKEN [ROLE] [tenant=NAME]": ROLE write (the default), read, or rw for both. */
static int read_tokens(const char *path, struct tokens *write, struct tokens *read)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = strbuf_read_file(&sb, path);
	char *line, *save = NULL;

	if (ret) {
		log_error("failed to read '%s': %s", path, strerror(-ret));
		return ret;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = 0;
		line += strspn(line, " \t");
		if (!*line || *line == '#')
			continue;
		const char *role = "write", *tenant = NULL;
		char *word = line + strcspn(line, " \t");
		while (*word) {
			*word++ = 0;
			word += strspn(word, " \t");
			char *next = word + strcspn(word, " \t");
			char saved = *next;
			*next = 0;
			if (!strncmp(word, "tenant=", 7)) {
				tenant = word + 7;
			} else if (!strcmp(word, "write") || !strcmp(word, "read") ||
				   !strcmp(word, "rw")) {
				role = word;
			} else if (*word) {
				log_error("failed to read '%s': unknown word '%s' after a token (use "
					  "write, read or rw, and tenant=NAME)", path, word);
				strbuf_release(&sb);
				return -EINVAL;
			}
			*next = saved;
			word = next;
		}
		if (strcmp(role, "read"))
			add_token(write, line, tenant);
		if (strcmp(role, "write"))
			add_token(read, line, tenant);
	}
	strbuf_release(&sb);
	return 0;
}

static bool parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && end != s && !*end && *out <= max && s[0] != '-';
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "data-dir", required_argument, NULL, 'd' },
		{ "storage", required_argument, NULL, 's' },
		{ "retention-days", required_argument, NULL, 'r' },
		{ "token", required_argument, NULL, 't' },
		{ "tokens-file", required_argument, NULL, 'T' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "read-token", required_argument, NULL, 'R' },
		{ "insecure-open", no_argument, NULL, 'O' },
		{ "otlp-grpc-listen", required_argument, NULL, 'G' },
		{ "otlp-grpc", no_argument, NULL, 'g' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "max-body-bytes", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 'j' },
		{ "client-connections", required_argument, NULL, 'N' },
		{ "query-timeout", required_argument, NULL, 'Q' },
		{ "max-waiting-uploads", required_argument, NULL, 'W' },
		{ "max-profile-size", required_argument, NULL, 'P' },
		{ "max-profile-samples", required_argument, NULL, 'S' },
		{ "max-stack-depth", required_argument, NULL, 'D' },
		{ "reject-older-than", required_argument, NULL, 'o' },
		{ "reject-newer-than", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server_options opts = { .listen = SERVER_DEFAULT_LISTEN, .data_dir = "kiln-data",
				       .retention_days = 30 };
	const char *data_dir = NULL, *storage = NULL;
	bool grpc_default = false;
	char grpc_listen[96];
	struct tokens tokens = { 0 }, readers = { 0 };
	char err[512];
	unsigned long long v;
	struct server *srv;
	sigset_t set;
	int c, sig, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': opts.listen = optarg; break;
		case 'd': data_dir = optarg; break;
		case 's': storage = optarg; break;
		case 'r':
			if (!parse_num(optarg, 100000, &v))
				goto bad;
			opts.retention_days = (int)v;
			break;
		case 't':
		case 'R':
			if (!*optarg)
				goto bad;
			add_token(c == 't' ? &tokens : &readers, optarg, NULL);
			break;
		case 'T':
			if (read_tokens(optarg, &tokens, &readers))
				goto out;
			break;
		case 'O': opts.insecure_open = true; break;
		case 'G': opts.otlp_grpc_listen = optarg; break;
		case 'g': grpc_default = true; break;
		case 'C': opts.tls_cert = optarg; break;
		case 'K': opts.tls_key = optarg; break;
		case 'b':
			if (!parse_num(optarg, 1ULL << 32, &v) || !v)
				goto bad;
			opts.max_body_bytes = (size_t)v;
			break;
		case 'j':
			if (!parse_num(optarg, 64, &v) || !v)
				goto bad;
			opts.threads = (unsigned)v;
			break;
		case 'N':
			if (!parse_num(optarg, 100000, &v) || !v)
				goto bad;
			opts.client_connections = (unsigned)v;
			break;
		case 'Q':
			if (!parse_num(optarg, 86400, &v) || !v)
				goto bad;
			opts.query_timeout_ms = (int)v * 1000;
			break;
		case 'W':
			if (!parse_num(optarg, 1000000, &v) || !v)
				goto bad;
			opts.max_waiting_uploads = (unsigned)v;
			break;
		case 'P':
		case 'S':
			if (!parse_num(optarg, 1ULL << 40, &v))
				goto bad;
			*(c == 'P' ? &opts.max_profile_bytes : &opts.max_profile_samples) =
				v ? (size_t)v : SIZE_MAX;
			break;
		case 'D':
			if (!parse_num(optarg, 1ULL << 31, &v))
				goto bad;
			opts.max_stack_depth = v ? (size_t)v : SIZE_MAX;
			break;
		case 'o':
		case 'n':
			if (!parse_num(optarg, 100ULL * 365 * 86400, &v))
				goto bad;
			*(c == 'o' ? &opts.reject_older_than : &opts.reject_newer_than) = (int64_t)v;
			break;
		case 'v': log_level = LOG_DEBUG; break;
		case 'q': log_level = LOG_ERROR; break;
		case 'h': usage(stdout); ret = 0; goto out;
		default: usage(stderr); goto out;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (data_dir && storage) {
		log_error("--data-dir and --storage both say where profiles are stored: give one");
		goto out;
	}
	if (storage || data_dir)
		opts.data_dir = storage ? storage : data_dir;
	if (grpc_default && !opts.otlp_grpc_listen) {
		const char *colon = strrchr(opts.listen, ':');
		snprintf(grpc_listen, sizeof(grpc_listen), "%.*s:%d",
			 colon ? (int)(colon - opts.listen) : 0, opts.listen, GRPC_DEFAULT_PORT);
		opts.otlp_grpc_listen = grpc_listen;
	}
	opts.tokens = (const char *const *)tokens.v;
	opts.nr_tokens = tokens.n;
	opts.read_tokens = (const char *const *)readers.v;
	opts.nr_read_tokens = readers.n;
	opts.token_tenants = (const char *const *)tokens.tenant;
	opts.read_token_tenants = (const char *const *)readers.tenant;
	if (tokens.n && !readers.n)
		log_info("no read token: queries and the web UI are refused until one is given "
			 "(--read-token)");
	if (readers.n && !tokens.n)
		log_info("no write token: uploads are refused until one is given (--token)");
	if (opts.insecure_open && !tokens.n && !readers.n)
		log_info("serving without tokens (--insecure-open): anyone who can connect may "
			 "read and upload");

	/* Block the stop signals before the server's threads start, so they inherit it. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv = server__start(&opts, err, sizeof(err));
	if (!srv) {
		log_error("%s", err);
		ret = 1;
		goto out;
	}
	{
		char host[64];
		const char *colon = strrchr(opts.listen, ':');
		snprintf(host, sizeof(host), "%.*s", (int)(colon - opts.listen), opts.listen);
		printf("kiln: serving on %s://%s:%u/ (data in %s%s)\n", opts.tls_cert ? "https" : "http",
		       *host ? host : "127.0.0.1", server__port(srv), opts.data_dir,
		       tokens.n || readers.n ? "" : ", open to anyone who can connect");
		if (opts.otlp_grpc_listen)
			printf("kiln: OTLP over gRPC%s on %s, port %u\n",
			       opts.tls_cert ? " (TLS)" : "", opts.otlp_grpc_listen,
			       server__grpc_port(srv));
		fflush(stdout);
	}
	sigwait(&set, &sig);
	log_info("stopping on signal %d", sig);
	server__stop(srv);
	ret = 0;
	goto out;
bad:
	log_error("invalid option value '%s'", optarg);
	usage(stderr);
out:
	free_tokens(&tokens);
	free_tokens(&readers);
	return ret;
}
