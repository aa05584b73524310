/* Pyroscope's ingest limits, each a `kiln serve` flag (server_options):
 *   - the size of a pushed profile, uncompressed (Pyroscope: max_profile_size_bytes,
 *     4 MiB): 413;
 *   - the samples of one pushed profile (max_profile_stacktrace_samples, 16,000), counted
 *     as distinct (stack, labels) pairs once parsed: 400;
 *   - the depth of a pushed stack (max_profile_stacktrace_depth, 1,000 frames): deeper
 *     stacks are cut, keeping the frames nearest the root, as Pyroscope's validation
 *     does (it keeps a pprof sample's last location ids, the root end);
 *   - the ingestion window (reject_older_than / reject_newer_than): an upload that starts
 *     earlier than that many seconds before now, or ends later than that many after it:
 *     422. Off by default, unlike Pyroscope's 1 h / 10 min, because kiln's agent spools
 *     uploads while the server is down and sends them late; the fixed bound of a day
 *     ahead (ingest__check_time) holds anyway.
 * Size, samples and depth bind the Pyroscope routes (/ingest, the Connect push, OTLP); the
 * window binds every upload, gProfiler's too. */
#include "server/http.h"

#include <errno.h>
#include <stdint.h>

#include "util/log.h"

size_t ingest__max_profile_bytes(const struct server *srv)
{
	size_t v = srv->opts.max_profile_bytes;

	return v ? v : INGEST_DEFAULT_MAX_PROFILE_BYTES;
}

size_t ingest__max_samples(const struct server *srv)
{
	size_t v = srv->opts.max_profile_samples;

	return v ? v : INGEST_DEFAULT_MAX_SAMPLES;
}

uint32_t ingest__max_depth(const struct server *srv)
{
	size_t v = srv->opts.max_stack_depth;

	if (!v)
		return INGEST_DEFAULT_MAX_DEPTH;
	return v >= STORE_MAX_DEPTH ? 0 : (uint32_t)v;
}

int ingest__limit_size(const struct server *srv, const void **data, size_t *len,
		       struct strbuf *scratch, char *err, size_t errlen)
{
	size_t max = ingest__max_profile_bytes(srv);
	const uint8_t *d = *data;

	if (*len >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
		strbuf_reset(scratch);
		int ret = gzip__decompress(scratch, d, *len, max == SIZE_MAX ? max - 1 : max);
		if (ret == -EINVAL) {
			errmsg(err, errlen, "profile is not valid gzip");
			return -EINVAL;
		}
		if (ret && ret != -EFBIG) {
			errmsg(err, errlen, "cannot decompress the profile");
			return ret;
		}
		if (ret == -EFBIG) {
			errmsg(err, errlen, "profile is larger than the limit of %zu bytes "
			       "uncompressed (--max-profile-size)", max);
			return -EFBIG;
		}
		*data = scratch->buf;
		*len = scratch->len;
	}
	if (*len > max) {
		errmsg(err, errlen, "profile of %zu bytes is larger than the limit of %zu bytes "
		       "uncompressed (--max-profile-size)", *len, max);
		return -EFBIG;
	}
	return 0;
}

int ingest__limit_samples(const struct server *srv, const struct profile *p, char *err,
			  size_t errlen)
{
	size_t max = ingest__max_samples(srv), n = profile__nr_stacks(p);

	if (n <= max)
		return 0;
	errmsg(err, errlen, "profile has %zu samples, more than the limit of %zu "
	       "(--max-profile-samples)", n, max);
	return -E2BIG;
}

int ingest__limit_window(const struct server *srv, int64_t from, int64_t until, int64_t now,
			 char *err, size_t errlen)
{
	int64_t older = srv->opts.reject_older_than, newer = srv->opts.reject_newer_than;

	if (older > 0 && from < now - older) {
		errmsg(err, errlen, "profile starts at %lld, outside the ingestion window: older "
		       "than %lld s before now (%lld, --reject-older-than)", (long long)from,
		       (long long)older, (long long)now);
		return -ERANGE;
	}
	if (newer > 0 && until > now + newer) {
		errmsg(err, errlen, "profile ends at %lld, outside the ingestion window: newer "
		       "than %lld s after now (%lld, --reject-newer-than)", (long long)until,
		       (long long)newer, (long long)now);
		return -ERANGE;
	}
	return 0;
}
