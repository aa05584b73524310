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
		"  --token T               accept uploads with this token (repeatable); without any\n"
		"                          token, uploads are accepted from anyone who can connect\n"
		"  --tokens-file FILE      read tokens from FILE, one per line (# comments)\n"
		"  --max-body-bytes N      largest request body accepted (default %u)\n"
		"  --threads N             HTTP worker threads (default 4)\n"
		"  -v, --verbose / -q, --quiet\n",
		SERVER_DEFAULT_LISTEN, SERVER_DEFAULT_MAX_BODY);
}

static int read_tokens(const char *path, char ***tokens, size_t *n)
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
		*tokens = xrealloc(*tokens, (*n + 1) * sizeof(**tokens));
		(*tokens)[(*n)++] = xstrdup(line);
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
		{ "max-body-bytes", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server_options opts = { .listen = SERVER_DEFAULT_LISTEN, .data_dir = "kiln-data",
				       .retention_days = 30 };
	const char *data_dir = NULL, *storage = NULL;
	char **tokens = NULL, err[512];
	size_t nr_tokens = 0;
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
			if (!*optarg)
				goto bad;
			tokens = xrealloc(tokens, (nr_tokens + 1) * sizeof(*tokens));
			tokens[nr_tokens++] = xstrdup(optarg);
			break;
		case 'T':
			if (read_tokens(optarg, &tokens, &nr_tokens))
				goto out;
			break;
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
	opts.tokens = (const char *const *)tokens;
	opts.nr_tokens = nr_tokens;

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
		printf("kiln: serving on http://%s:%u/ (data in %s%s)\n",
		       *host ? host : "127.0.0.1", server__port(srv), opts.data_dir,
		       nr_tokens ? "" : ", uploads without token");
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
	for (size_t i = 0; i < nr_tokens; i++)
		free(tokens[i]);
	free(tokens);
	return ret;
}
