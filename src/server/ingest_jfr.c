/* Pyroscope's `POST /ingest?format=jfr`, what its Java agent sends by default: a JFR
 * recording, raw or in a multipart body (part `jfr`, usually gzipped, and an optional
 * `labels` part, a LabelsSnapshot protobuf for the async-profiler context ids). The
 * recording is read by format/jfr.h into one profile with a sample type per event kind;
 * each kind that has samples is stored as its own series, typed as Pyroscope types it
 * ("process_cpu:cpu:nanoseconds:cpu:nanoseconds", "memory:alloc_in_new_tlab_bytes:...")
 * under the legacy name "<app>.<kind>" ("app.cpu", "app.alloc_in_new_tlab_bytes", ...). */
#include "server/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/jfr.h"
#include "profile/ptype.h"
#include "server/multipart.h"
#include "server/selector.h"
#include "util/log.h"

/* Pyroscope's default sampleRate (types.DefaultSampleRate) when an upload gives none. */
#define DEFAULT_RATE 100

/* The length of app without a type suffix the agent or a user may have put on it. */
static size_t base_len(const char *app)
{
	const char *dot = strrchr(app, '.');

	if (!dot)
		return strlen(app);
	if (ptype__legacy(dot + 1) || !strcmp(dot + 1, "itimer"))
		return (size_t)(dot - app);
	for (int t = 0; t < JFR_NR_TYPES; t++)
		if (!strcmp(dot + 1, jfr__type_info((enum jfr_sample_type)t)->suffix))
			return (size_t)(dot - app);
	return strlen(app);
}

/* Finds the recording (and the labels) in the body: *jfr, *labels (NULL when none). */
static int find_parts(struct request *r, struct response *resp, const char **jfr,
		      size_t *jlen, const char **labels, size_t *llen)
{
	const char *ctype = req__header(r, "Content-Type");
	char boundary[128], err[256];
	int ret;

	*labels = NULL;
	*llen = 0;
	if (!ctype || !strstr(ctype, "multipart/form-data")) {
		*jfr = r->body.buf;
		*jlen = r->body.len;
		return 0;
	}
	if (multipart__boundary(ctype, boundary, sizeof(boundary))) {
		resp__error(resp, 400, "multipart body without a boundary");
		return -EINVAL;
	}
	ret = multipart__find(r->body.buf, r->body.len, boundary, "jfr", jfr, jlen, err,
			      sizeof(err));
	if (ret) {
		resp__error(resp, 422, "%s", ret == -ENOENT ? "multipart body has no 'jfr' part" : err);
		return ret;
	}
	ret = multipart__find(r->body.buf, r->body.len, boundary, "labels", labels, llen, err,
			      sizeof(err));
	if (ret == -ENOENT)
		return 0;
	if (ret)
		resp__error(resp, 422, "%s", err);
	return ret;
}

/* A part as sent, gzipped or not, inflated into scratch within the size limit. */
static int inflate_part(struct request *r, struct response *resp, const char *what,
			const void **data, size_t *len, struct strbuf *scratch)
{
	char err[256];
	int ret = ingest__limit_size(r->srv, data, len, scratch, err, sizeof(err));

	if (ret)
		resp__error(resp, ret == -EFBIG ? 413 : 422, "%s: %s", what, err);
	return ret;
}

void ingest__jfr(struct request *r, struct response *resp, const struct store_query *q,
		 int64_t from, int64_t until, unsigned long rate, const char *spy)
{
	const char *jfr, *lab;
	size_t jlen, llen, nr_series = 0;
	struct strbuf js = STRBUF_INIT, ls = STRBUF_INIT, name = STRBUF_INIT;
	struct jfr_labels *labels = NULL;
	struct profile *p = profile__new();
	struct labels base, *series = NULL;
	uint32_t *stack_series = NULL;
	struct jfr_stats st;
	char err[256];

	labels_init(&base);
	if (find_parts(r, resp, &jfr, &jlen, &lab, &llen))
		goto out;
	const void *jd = jfr, *ld = lab;
	if (inflate_part(r, resp, "the JFR recording", &jd, &jlen, &js))
		goto out;
	if (ld && inflate_part(r, resp, "the labels", &ld, &llen, &ls))
		goto out;
	if (ld && jfr__parse_labels(ld, llen, &labels, err, sizeof(err))) {
		resp__error(resp, 422, "invalid 'labels' part: %s", err);
		goto out;
	}
	int64_t period = 1000000000 / (int64_t)(rate ? rate : DEFAULT_RATE);
	if (jfr__parse(p, jd, jlen, labels, period, &st, err, sizeof(err))) {
		resp__error(resp, 422, "invalid JFR recording: %s", err);
		goto out;
	}
	log_debug("jfr upload for '%s': %zu chunks, %zu events, %zu cpu, %zu wall, %zu tlab, "
		  "%zu outside tlab, %zu lock, %zu park samples, %zu without labels", q->service,
		  st.chunks, st.events, st.samples[JFR_CPU], st.samples[JFR_WALL],
		  st.samples[JFR_TLAB_OBJECTS], st.samples[JFR_OUTSIDE_OBJECTS],
		  st.samples[JFR_LOCK_COUNT], st.samples[JFR_PARK_COUNT], st.unlabeled);
	if (ingest__limit_samples(r->srv, p, err, sizeof(err))) {
		resp__error(resp, 400, "%s", err);
		goto out;
	}
	selector__to_labels(q, &base);
	ingest__series(p, &base, &series, &nr_series, &stack_series);
	size_t blen = base_len(q->service);
	for (int t = 0; t < JFR_NR_TYPES; t++) {
		const struct jfr_type_info *ti = jfr__type_info((enum jfr_sample_type)t);
		if (!st.samples[t])
			continue;
		strbuf_reset(&name);
		strbuf_addf(&name, "%.*s.%s", (int)blen, q->service, ti->suffix);
		struct store_put put = {
			.service = name.buf, .from = from, .until = until, .profile = p,
			.profile_type = ti->id, .type_index = (size_t)t, .series = series,
			.nr_series = nr_series, .stack_series = stack_series, .units = ti->units,
			.spy_name = spy,
			.sample_rate = t == JFR_CPU || t == JFR_WALL ?
				       (uint32_t)(rate ? rate : DEFAULT_RATE) : 0,
		};
		if (ingest__store(r, resp, &put))
			goto out;
	}
	resp->status = 200;
	resp->content_type = "text/plain";
	strbuf_reset(&resp->body);
out:
	ingest__free_series_labels(series, nr_series, stack_series);
	labels_release(&base);
	jfr__free_labels(labels);
	profile__free(p);
	strbuf_release(&js);
	strbuf_release(&ls);
	strbuf_release(&name);
}
