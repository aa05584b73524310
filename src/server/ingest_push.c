/* Pyroscope's Connect push API: `POST /push.v1.PusherService/Push`, what Grafana Alloy's
 * pyroscope.write and the pyroscope-rs based SDKs (Python, Ruby) send. A Connect unary
 * call: the body is one binary PushRequest (src/format/push.proto), `Content-Type:
 * application/proto`, often `Content-Encoding: gzip`; errors are a non-2xx status with a
 * JSON body {"code": "...", "message": "..."}.
 *
 * Each series is a label set (service_name, __name__, and the client's labels) with pprof
 * samples. Every sample is parsed before anything is stored (one transaction per sample),
 * so a request that does not parse stores nothing. */
#include "server/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "push.pb-c.h"
#include "profile/profile.h"
#include "profile/ptype.h"
#include "server/connect.h"
#include "server/selector.h"
#include "util/log.h"

#define MAX_LABEL_VALUE 256

/* A label name a query can name (the selector's rule), of reasonable length. */
static bool valid_label_name(const char *s)
{
	return s && strlen(s) <= 64 && selector__valid_label_name(s);
}

static bool valid_label_value(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!s || n > MAX_LABEL_VALUE)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			return false;
	return true;
}

/* One parsed sample, ready to store: a series per sample type. */
struct parsed {
	struct profile *p;
	struct pprof_series *types;
	size_t nr_types;
	size_t series;		/* index into the request's label sets */
	int64_t from, until;
};

/* The series' labels without the reserved ones (__name__, __delta__, ...) and
 * service_name, which names the service. Returns the service name, or NULL with an error
 * set; *name is set to the __name__ label (the profile type's name), or NULL. */
static const char *series_labels(const Push__V1__RawProfileSeries *s, struct labels *out,
				 struct response *resp, size_t index, const char **name)
{
	const char *service = NULL;

	*name = NULL;
	for (size_t i = 0; i < s->n_labels; i++) {
		const Push__V1__LabelPair *l = s->labels[i];
		/* service_name has the service-name rule, below */
		if (!valid_label_name(l->name) ||
		    (strcmp(l->name, "service_name") && !valid_label_value(l->value))) {
			connect__error_at(resp, 400, "invalid_argument",
				         "series %zu: invalid label '%.64s': names are [A-Za-z_][A-Za-z0-9_.]*, "
				         "values at most %d printable bytes", index,
				         l->name ? l->name : "", MAX_LABEL_VALUE);
			return NULL;
		}
		if (!strcmp(l->name, "service_name"))
			service = l->value ? l->value : "";
		else if (!strcmp(l->name, "__name__") && ptype__valid_name(l->value))
			*name = l->value;
		else if (strncmp(l->name, "__", 2))
			labels__set(out, l->name, l->value);
		if (out->n > INGEST_MAX_LABELS) {	/* before labels__set grows N^2 */
			connect__error_at(resp, 400, "invalid_argument",
				         "series %zu has more than %d label names", index,
				         INGEST_MAX_LABELS);
			return NULL;
		}
	}
	if (!service || !selector__valid_service(service)) {
		connect__error_at(resp, 400, "invalid_argument",
			         "series %zu: %s service_name label%s", index,
			         service ? "invalid" : "no", service ? ": use 1 to 256 characters of "
			         "[A-Za-z0-9_.-/]" : "");
		return NULL;
	}
	return service;
}

/* The time a sample covers: the pprof's own time and duration, else the request's.
 * Returns 0, or sets a 422 naming the field out of range and returns -ERANGE. */
static int sample_time(struct response *resp, const struct profile *p, int64_t now,
		       int64_t *from, int64_t *until)
{
	json_int_t ns = json_integer_value(json_object_get(profile__meta_const(p), "time_nanos"));
	json_int_t dur = json_integer_value(json_object_get(profile__meta_const(p),
							     "duration_nanos"));

	*from = *until = now;
	if (ns < 0 || dur < 0) {
		connect__error_at(resp, 422, "invalid_argument", "'%s' is out of range: %lld is negative",
			         ns < 0 ? "time_nanos" : "duration_nanos",
			         (long long)(ns < 0 ? ns : dur));
		return -ERANGE;
	}
	if (ns > 0) {
		/* in seconds first: ns + dur may not fit */
		*from = (int64_t)(ns / 1000000000);
		*until = *from + (int64_t)((ns % 1000000000 + dur) / 1000000000);
	}
	if (ingest__check_time(resp, "time_nanos", *from, now) ||
	    ingest__check_time(resp, "duration_nanos", *until, now))
		return -ERANGE;
	return 0;
}

static void release(struct parsed *v, size_t n, struct labels *sets, size_t nsets)
{
	for (size_t i = 0; i < n; i++) {
		profile__free(v[i].p);
		ingest__free_series(v[i].types, v[i].nr_types);
	}
	free(v);
	for (size_t i = 0; i < nsets; i++)
		labels_release(&sets[i]);
	free(sets);
}

void ingest__push(struct request *r, struct response *resp)
{
	const char *ctype = req__header(r, "Content-Type");
	Push__V1__PushRequest *req = NULL;
	struct labels *sets = NULL;
	struct parsed *v = NULL;
	size_t nv = 0, total = 0;
	int64_t now = req__now();
	struct strbuf scratch = STRBUF_INIT;

	if (!ctype || strncmp(ctype, "application/proto", 17)) {
		connect__error_at(resp, 415, "invalid_argument",
			         "unsupported Content-Type '%.64s': send application/proto",
			         ctype ? ctype : "");
		return;
	}
	if (req__gunzip_body(r, resp, false))
		return;
	req = push__v1__push_request__unpack(NULL, r->body.len, (const uint8_t *)r->body.buf);
	if (!req) {
		connect__error_at(resp, 400, "invalid_argument", "body is not a PushRequest");
		return;
	}
	if (req->n_series > INGEST_MAX_SERIES_PER_PUSH) {
		connect__error_at(resp, 400, "invalid_argument",
			         "push has %zu series, more than the limit of %d", req->n_series,
			         INGEST_MAX_SERIES_PER_PUSH);
		push__v1__push_request__free_unpacked(req, NULL);
		return;
	}
	for (size_t i = 0; i < req->n_series; i++)
		total += req->series[i]->n_samples;
	sets = xcalloc(req->n_series + 1, sizeof(*sets));
	v = xcalloc(total + 1, sizeof(*v));
	for (size_t i = 0; i < req->n_series; i++) {
		const Push__V1__RawProfileSeries *s = req->series[i];
		const char *service, *name;

		labels_init(&sets[i]);
		service = series_labels(s, &sets[i], resp, i, &name);
		if (!service)
			goto out;
		labels__sort(&sets[i]);
		for (size_t j = 0; j < s->n_samples; j++) {
			const ProtobufCBinaryData *raw = &s->samples[j]->raw_profile;
			struct parsed *ps = &v[nv++];
			char err[256];
			int ret;

			const void *data = raw->data;
			size_t len = raw->len;
			ps->p = profile__new();
			ps->series = i;
			ret = ingest__limit_size(r->srv, &data, &len, &scratch, err, sizeof(err));
			if (ret) {
				connect__error_at(resp, ret == -EFBIG ? 413 : 400, "invalid_argument",
						  "series %zu sample %zu: %s", i, j, err);
				goto out;
			}
			ret = ingest__parse_pprof(ps->p, data, len, service, name,
						  &ps->types, &ps->nr_types, err, sizeof(err));
			if (!ret && (ret = ingest__limit_samples(r->srv, ps->p, err, sizeof(err)))) {
				connect__error_at(resp, 400, "invalid_argument",
						  "series %zu sample %zu: %s", i, j, err);
				goto out;
			}
			if (ret) {
				connect__error_at(resp, 400, "invalid_argument", "series %zu sample %zu: %s",
					         i, j, ret == -ENOENT ? "pprof profile has no sample "
					         "type kiln knows (cpu, wall, samples, space, ...)" : err);
				goto out;
			}
			if (sample_time(resp, ps->p, now, &ps->from, &ps->until))
				goto out;
			/* the whole push is checked before any of it is stored */
			if (ingest__limit_window(r->srv, ps->from, ps->until, now, err, sizeof(err))) {
				connect__error_at(resp, 422, "invalid_argument",
						  "series %zu sample %zu: %s", i, j, err);
				goto out;
			}
		}
	}
	for (size_t k = 0; k < nv; k++) {
		struct labels *series;
		uint32_t *stack_series;
		size_t nr_series;
		int ret = 0;
		ingest__series(v[k].p, &sets[v[k].series], &series, &nr_series, &stack_series);
		for (size_t t = 0; t < v[k].nr_types && !ret; t++) {
			const struct pprof_series *ty = &v[k].types[t];
			struct store_put put = {
				.service = ty->service, .from = v[k].from, .until = v[k].until,
				.profile = v[k].p, .profile_type = ty->profile_type,
				.type_index = ty->index, .series = series, .nr_series = nr_series,
				.stack_series = stack_series, .units = ty->units,
				.max_depth = ingest__max_depth(r->srv),
				.sample_rate = (uint32_t)json_number_value(
					json_object_get(profile__meta(v[k].p), "frequency")),
			};
			ret = ingest__store(r, resp, &put);
		}
		ingest__free_series_labels(series, nr_series, stack_series);
		if (ret)
			goto out;
	}
	resp->status = 200;
	resp->content_type = "application/proto";	/* an empty PushResponse */
	strbuf_reset(&resp->body);
out:
	strbuf_release(&scratch);
	release(v, nv, sets, req->n_series);
	push__v1__push_request__free_unpacked(req, NULL);
}
