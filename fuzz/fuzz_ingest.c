/* The HTTP ingest routes end to end, in process: a real server (server/server.h) on a
 * loopback port, and each input POSTed to the route its first byte picks — gProfiler
 * JSON (plain or gzip), Pyroscope /ingest as folded, lines, pprof and multipart, the
 * Connect push, OTLP profiles, Connect queries (their selectors) and JFR, raw and in
 * the Java agent's multipart. A crash in a
 * handler thread is reported with the input that caused it. */
#include "fuzz.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server.h"
#include "util/log.h"

static uint16_t port;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char dir[64];
	struct server_options o = { .listen = "127.0.0.1:0", .threads = 2,
				    .max_body_bytes = 1 << 20, .max_decoded_bytes = 8 << 20 };
	char err[256];
	struct server *srv;

	snprintf(dir, sizeof(dir), "/tmp/kiln-fuzz-ingest.%d", (int)getpid());
	o.data_dir = dir;
	log_level = LOG_ERROR;
	srv = server__start(&o, err, sizeof(err));
	if (!srv) {
		fprintf(stderr, "fuzz_ingest: %s\n", err);
		abort();
	}
	port = server__port(srv);
	return 0;	/* the server lives until the process ends */
}

static const struct {
	const char *path, *ctype, *encoding;
} routes[] = {
	{ "/api/v2/profiles", "application/json", NULL },
	{ "/api/v2/profiles", "application/json", "gzip" },
	{ "/ingest?name=fz.cpu%7Bh%3Da%7D&from=1700000000&until=1700000010", "text/plain", NULL },
	{ "/ingest?name=fz.cpu&format=lines&from=now-10s&until=now", "text/plain", NULL },
	{ "/ingest?name=fz&format=pprof", "application/octet-stream", NULL },
	{ "/ingest?name=fz", "multipart/form-data; boundary=XbX", NULL },
	{ "/push.v1.PusherService/Push", "application/proto", NULL },
	{ "/push.v1.PusherService/Push", "application/proto", "gzip" },
	{ "/v1development/profiles", "application/x-protobuf", NULL },
	{ "/querier.v1.QuerierService/LabelNames", "application/proto", NULL },
	{ "/querier.v1.QuerierService/SelectMergeStacktraces", "application/proto", NULL },
	{ "/querier.v1.QuerierService/SelectSeries", "application/json", NULL },
	{ "/ingest?name=fz&format=jfr&sampleRate=100", "application/octet-stream", NULL },
	{ "/ingest?name=fz&format=jfr&spyName=javaspy", "multipart/form-data; boundary=XbX", NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char head[512], buf[4096];
	size_t r;
	int fd, n;

	if (!size)
		return 0;
	r = data[0] % (sizeof(routes) / sizeof(routes[0]));
	data++, size--;
	/* libFuzzer's timeout alarm may interrupt a connect that waits for the server's
	 * backlog on a loaded machine: that is no finding, so connect again */
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		if (fd < 0 || errno != EINTR) {
			perror("fuzz_ingest: connect");
			abort();
		}
		close(fd);
	}
	n = snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n"
		     "Content-Type: %s\r\n%s%s%sGPROFILER-SERVICE-NAME: fz\r\n"
		     "Content-Length: %zu\r\n\r\n", routes[r].path, routes[r].ctype,
		     routes[r].encoding ? "Content-Encoding: " : "",
		     routes[r].encoding ? routes[r].encoding : "", routes[r].encoding ? "\r\n" : "",
		     size);
	if (write(fd, head, (size_t)n) != n || (size && write(fd, data, size) != (ssize_t)size)) {
		close(fd);
		return 0;
	}
	while (read(fd, buf, sizeof(buf)) > 0)	/* until the server closes */
		;
	close(fd);
	return 0;
}
