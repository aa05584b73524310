/* OTLP profiles over HTTP: `POST /v1development/profiles`, what the OpenTelemetry
 * Collector's otlphttp exporter sends (binary protobuf ExportProfilesServiceRequest,
 * Content-Type application/x-protobuf, often gzipped; format/otlp.h reads it). Each OTLP
 * profile is stored like a pushed pprof: its service named after its type
 * ("checkout.cpu"), one series per label set of its stacks. The whole request is parsed
 * before anything is stored. The answer is an empty ExportProfilesServiceResponse.
 *
 * gRPC senders (the OTel eBPF profiler exports OTLP over gRPC only) need HTTP/2, which
 * libmicrohttpd does not speak: server/grpc.c listens for them and hands each Export's
 * message here as the body of a request without a libmicrohttpd connection. */
#include "server/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/otlp.h"
#include "profile/ptype.h"
#include "server/selector.h"
#include "util/log.h"

/* A label set of an OTLP push becomes a series: a request with more is refused. */
#define MAX_SERIES 10000

/* The service name kiln stores: OTLP's, with what the service-name rule refuses made '_'
 * (Pyroscope's "unknown_service:node" is "unknown_service_node"), and the type suffix. */
static char *stored_service(const char *service, const struct profile *p)
{
	struct strbuf sb = STRBUF_INIT;
	const char *suffix = ptype__suffix(profile__type(p, 0).type, NULL);

	for (const char *c = service; *c && sb.len < 200; c++) {
		char one[2] = { *c, 0 };
		strbuf_addch(&sb, selector__valid_service(one) ? *c : '_');
	}
	if (!sb.len)
		strbuf_addstr(&sb, "unknown_service");
	if (suffix)
		strbuf_addf(&sb, ".%s", suffix);
	return strbuf_detach(&sb, NULL);
}

/* Stores one parsed profile, a series per label set. Returns 0, or a negative errno with
 * the error response set. */
static int put_profile(struct request *r, struct response *resp, const struct otlp_profile *op,
		       int64_t now)
{
	struct profile *p = op->p;
	struct labels *series;
	uint32_t *stack_series;
	size_t nseries;
	struct strbuf id = STRBUF_INIT;
	char *service = stored_service(op->service, p);
	int64_t period = 0;
	struct profile_type pt;
	int ret;

	ingest__series(p, NULL, &series, &nseries, &stack_series);
	ptype__id(&id, p, 0, NULL);
	struct store_put put = {
		.service = service, .profile_type = id.buf, .from = op->from ? op->from : now,
		.until = op->until ? op->until : now + 1, .profile = p, .series = series,
		.nr_series = nseries, .stack_series = stack_series,
		.units = ptype__units(profile__type(p, 0).type, profile__type(p, 0).unit),
		.spy_name = "otlp", .max_depth = ingest__max_depth(r->srv),
		.sample_rate = profile__period(p, &pt, &period) && period > 0 &&
			       !strcmp(pt.unit, "nanoseconds") && period <= 1000000000 ?
			       (uint32_t)(1000000000 / period) : 0,
	};
	ret = ingest__store(r, resp, &put);
	ingest__free_series_labels(series, nseries, stack_series);
	free(service);
	strbuf_release(&id);
	return ret;
}

void ingest__otlp(struct request *r, struct response *resp)
{
	const char *ctype = req__header(r, "Content-Type");
	struct otlp_profile *v = NULL;
	size_t n = 0, sets = 0;
	char err[256];

	if (!ctype || (strncmp(ctype, "application/x-protobuf", 22) &&
		       strncmp(ctype, "application/protobuf", 20))) {
		resp__error(resp, 415, "unsupported Content-Type '%.64s': send OTLP profiles as "
			    "application/x-protobuf", ctype ? ctype : "");
		return;
	}
	if (req__gunzip_body(r, resp, false))
		return;
	/* the size limit binds the request, uncompressed: its profiles share one dictionary */
	const void *body = r->body.buf;
	size_t len = r->body.len;
	struct strbuf scratch = STRBUF_INIT;
	int ret = ingest__limit_size(r->srv, &body, &len, &scratch, err, sizeof(err));
	strbuf_release(&scratch);	/* a body gzipped twice is not OTLP */
	if (ret) {
		resp__error(resp, ret == -EFBIG ? 413 : 400, "%s", err);
		return;
	}
	if (otlp__parse(r->body.buf, r->body.len, &v, &n, err, sizeof(err))) {
		resp__error(resp, 400, "invalid OTLP profiles: %s", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		sets += profile__nr_labelsets(v[i].p);
	if (sets > MAX_SERIES) {
		resp__error(resp, 422, "the request has %zu label sets: at most %d", sets, MAX_SERIES);
		otlp__free(v, n);
		return;
	}
	int64_t now = req__now();
	/* every profile is checked before any is stored */
	for (size_t i = 0; i < n; i++) {
		int64_t from = v[i].from ? v[i].from : now, until = v[i].until ? v[i].until : now + 1;
		if (ingest__limit_samples(r->srv, v[i].p, err, sizeof(err))) {
			resp__error(resp, 400, "profile %zu: %s", i, err);
		} else if (ingest__limit_window(r->srv, from, until, now, err, sizeof(err))) {
			resp__error(resp, 422, "profile %zu: %s", i, err);
		} else {
			continue;
		}
		otlp__free(v, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!profile__nr_stacks(v[i].p))
			continue;
		if (put_profile(r, resp, &v[i], now)) {
			otlp__free(v, n);
			return;
		}
	}
	otlp__free(v, n);
	resp->status = 200;
	resp->content_type = "application/x-protobuf";	/* an empty ExportProfilesServiceResponse */
	strbuf_reset(&resp->body);
}
