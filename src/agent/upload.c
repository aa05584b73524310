#include "agent/upload.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/col.h"
#include "util/gzip.h"
#include "util/io.h"
#include "util/log.h"
#include "util/strbuf.h"

#define HEALTH_TIMEOUT_S 5
#define UPLOAD_TIMEOUT_S 120
#define SPOOL_SUFFIX ".json.gz"

struct uploader {
	CURL *curl;
	char *server, *token, *service, *spool_dir;
	char *ca_file;			/* NULL: the system's CAs */
	bool insecure;			/* do not verify the server's certificate */
	size_t spool_max;
	char hostname[256];
	json_int_t gpid;
	unsigned seq;
};

enum send_result { SENT, UNREACHABLE, REJECTED };

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int mkdir_p(const char *dir)
{
	char *copy = xstrdup(dir);
	int ret = 0;

	for (char *c = copy + 1;; c++) {
		if (*c != '/' && *c)
			continue;
		char saved = *c;
		*c = 0;
		if (mkdir(copy, 0700) && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*c = saved;
		if (!saved)
			break;
	}
	free(copy);
	return ret;
}

struct uploader *uploader__new(const char *server, const char *token, const char *service,
			       const char *spool_dir, size_t spool_max_bytes)
{
	struct uploader *u;
	struct strbuf url = STRBUF_INIT;
	int ret;

	pthread_once(&curl_once, curl_init_once);
	if (spool_dir && (ret = mkdir_p(spool_dir))) {
		log_error("failed to create spool directory '%s': %s", spool_dir, strerror(-ret));
		return NULL;
	}
	u = xcalloc(1, sizeof(*u));
	u->curl = curl_easy_init();
	if (!u->curl)
		abort();
	if (!strstr(server, "://"))
		strbuf_addstr(&url, "http://");
	strbuf_addstr(&url, server);
	while (url.len && url.buf[url.len - 1] == '/')
		strbuf_setlen(&url, url.len - 1);
	u->server = strbuf_detach(&url, NULL);
	u->token = xstrdup(token ? token : "");
	u->service = xstrdup(service ? service : "");
	u->spool_dir = spool_dir ? xstrdup(spool_dir) : NULL;
	u->spool_max = spool_max_bytes;
	if (gethostname(u->hostname, sizeof(u->hostname) - 1))
		snprintf(u->hostname, sizeof(u->hostname), "unknown");
	return u;
}

void uploader__set_tls(struct uploader *u, const char *ca_file, bool insecure)
{
	free(u->ca_file);
	u->ca_file = ca_file ? xstrdup(ca_file) : NULL;
	u->insecure = insecure;
	if (insecure)
		log_warn("not verifying the certificate of '%s' (--insecure-skip-verify): anyone "
			 "on the network path can read the uploads and the token", u->server);
	else if (strncmp(u->server, "https://", 8))
		log_debug("uploads to '%s' are not encrypted", u->server);
}

void uploader__free(struct uploader *u)
{
	if (!u)
		return;
	curl_easy_cleanup(u->curl);
	free(u->server);
	free(u->token);
	free(u->service);
	free(u->spool_dir);
	free(u->ca_file);
	free(u);
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct strbuf *sb = arg;

	if (sb->len < 65536)
		strbuf_add(sb, data, size * n);
	return size * n;
}

/* One request. body NULL: GET. Returns the outcome; the message goes to err. */
static enum send_result request(struct uploader *u, const char *path, const struct strbuf *body,
				long timeout, char *err, size_t errlen)
{
	struct strbuf url = STRBUF_INIT, h1 = STRBUF_INIT, h2 = STRBUF_INIT, reply = STRBUF_INIT;
	struct curl_slist *headers = NULL;
	char *ekey = curl_easy_escape(u->curl, u->token, 0);
	char *esvc = curl_easy_escape(u->curl, u->service, 0);
	char *ehost = curl_easy_escape(u->curl, u->hostname, 0);
	enum send_result res;
	long status = 0;
	CURLcode rc;

	strbuf_addf(&url, "%s%s?key=%s&service=%s&hostname=%s&timestamp=%lld&version=%s",
		    u->server, path, ekey, esvc, ehost, (long long)time(NULL), "kiln");
	strbuf_addf(&h1, "GPROFILER-API-KEY: %s", u->token);
	strbuf_addf(&h2, "GPROFILER-SERVICE-NAME: %s", u->service);
	headers = curl_slist_append(headers, h1.buf);
	headers = curl_slist_append(headers, h2.buf);
	curl_easy_reset(u->curl);
	curl_easy_setopt(u->curl, CURLOPT_SSL_VERIFYPEER, u->insecure ? 0L : 1L);
	curl_easy_setopt(u->curl, CURLOPT_SSL_VERIFYHOST, u->insecure ? 0L : 2L);
	if (u->ca_file)
		curl_easy_setopt(u->curl, CURLOPT_CAINFO, u->ca_file);
	curl_easy_setopt(u->curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(u->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(u->curl, CURLOPT_CONNECTTIMEOUT, (long)HEALTH_TIMEOUT_S);
	curl_easy_setopt(u->curl, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(u->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(u->curl, CURLOPT_WRITEDATA, &reply);
	if (body) {
		headers = curl_slist_append(headers, "Content-Encoding: gzip");
		headers = curl_slist_append(headers, "Content-Type: application/json");
		headers = curl_slist_append(headers, "Expect:");
		curl_easy_setopt(u->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(u->curl, CURLOPT_POSTFIELDS, body->buf);
		curl_easy_setopt(u->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	}
	curl_easy_setopt(u->curl, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(u->curl);
	if (rc != CURLE_OK) {
		errmsg(err, errlen, "failed to reach '%s%s': %s", u->server, path,
		       curl_easy_strerror(rc));
		res = UNREACHABLE;
		goto out;
	}
	curl_easy_getinfo(u->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		json_t *j = json_loadb(reply.buf, reply.len, 0, NULL);
		json_int_t gpid = json_integer_value(json_object_get(j, "gpid"));
		if (gpid)
			u->gpid = gpid;
		json_decref(j);
		res = SENT;
	} else {
		errmsg(err, errlen, "server '%s' refused %s with %ld: %.200s", u->server, path,
		       status, reply.buf);
		res = status >= 500 || status == 408 || status == 429 ? UNREACHABLE : REJECTED;
	}
out:
	curl_slist_free_all(headers);
	curl_free(ekey);
	curl_free(esvc);
	curl_free(ehost);
	strbuf_release(&url);
	strbuf_release(&h1);
	strbuf_release(&h2);
	strbuf_release(&reply);
	return res;
}

int uploader__health_check(struct uploader *u, char *err, size_t errlen)
{
	enum send_result r = request(u, "/api/v1/health_check", NULL, HEALTH_TIMEOUT_S, err, errlen);
	return r == SENT ? 0 : r == UNREACHABLE ? -EHOSTUNREACH : -EPERM;
}

static void iso_time(char *buf, size_t len, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int build_body(struct uploader *u, const struct profile *p, int64_t start, int64_t end,
		      struct strbuf *out)
{
	const json_t *meta = profile__meta_const(p), *metrics = json_object_get(meta, "metrics");
	char *col = NULL, *json, s[32], e[32];
	size_t len = 0;
	FILE *f = open_memstream(&col, &len);
	json_t *body;
	int ret;

	if (!f)
		return -ENOMEM;
	ret = col__write(f, p, true);
	fclose(f);
	if (ret) {
		free(col);
		return ret;
	}
	if (!start && !end) {
		/* The session's own times, from the .col header the agent wrote. */
		const char *hs = json_string_value(json_object_get(meta, "start_time"));
		const char *he = json_string_value(json_object_get(meta, "end_time"));
		end = time(NULL);
		start = end - 60;
		iso_time(s, sizeof(s), start);
		iso_time(e, sizeof(e), end);
		if (hs && he && strlen(hs) < sizeof(s) && strlen(he) < sizeof(e)) {
			snprintf(s, sizeof(s), "%s", hs);
			snprintf(e, sizeof(e), "%s", he);
		}
	} else {
		iso_time(s, sizeof(s), start);
		iso_time(e, sizeof(e), end);
	}
	body = json_pack("{s:s,s:s,s:s,s:s%,s:f,s:f,s:s,s:I}", "start_time", s, "end_time", e,
			 "hostname", u->hostname, "profile", col, len,
			 "cpu_avg", json_number_value(json_object_get(metrics, "cpu_avg")),
			 "mem_avg", json_number_value(json_object_get(metrics, "mem_avg")),
			 "spawn_time", s, "gpid", u->gpid);
	free(col);
	if (!body)
		return -EINVAL;	/* the .col text is not UTF-8 */
	json = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!json)
		return -ENOMEM;

	strbuf_reset(out);
	ret = gzip__compress(out, json, strlen(json));
	free(json);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the spooled files, oldest first (names start with the zero-padded start time). */
static size_t spool_list(struct uploader *u, char ***names, uint64_t *total)
{
	DIR *d = u->spool_dir ? opendir(u->spool_dir) : NULL;
	struct dirent *de;
	size_t n = 0, slen = strlen(SPOOL_SUFFIX);

	*names = NULL;
	*total = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		if (de->d_name[0] == '.' || len <= slen || strcmp(de->d_name + len - slen, SPOOL_SUFFIX))
			continue;
		if (!fstatat(dirfd(d), de->d_name, &st, 0))
			*total += (uint64_t)st.st_size;
		*names = xrealloc(*names, (n + 1) * sizeof(**names));
		(*names)[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(*names, n, sizeof(**names), name_cmp);
	return n;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void spool_unlink(struct uploader *u, const char *name)
{
	struct strbuf path = STRBUF_INIT;

	strbuf_addf(&path, "%s/%s", u->spool_dir, name);
	if (unlink(path.buf) && errno != ENOENT)
		log_warn("failed to remove '%s': %s", path.buf, strerror(errno));
	strbuf_release(&path);
}

/* Writes body as a new spool file: temporary name, fsync, rename, fsync the directory. */
static int spool_write(struct uploader *u, const struct strbuf *body, int64_t start, char *err,
		       size_t errlen)
{
	struct strbuf tmp = STRBUF_INIT, path = STRBUF_INIT;
	char **names;
	uint64_t total;
	size_t n, first = 0;
	int fd, ret = -EIO;

	if (!u->spool_dir) {
		errmsg(err, errlen, "session lost: server unreachable and no spool directory");
		return -ENOSPC;
	}
	if (body->len > u->spool_max) {
		errmsg(err, errlen, "session lost: %zu bytes do not fit in a spool of %zu",
		       body->len, u->spool_max);
		return -ENOSPC;
	}
	n = spool_list(u, &names, &total);
	/* Drop the oldest sessions to make room: the newest matter most. */
	while (first < n && total + body->len > u->spool_max) {
		struct strbuf p = STRBUF_INIT;
		struct stat st;
		strbuf_addf(&p, "%s/%s", u->spool_dir, names[first]);
		if (!stat(p.buf, &st))
			total -= (uint64_t)st.st_size < total ? (uint64_t)st.st_size : total;
		log_warn("spool full: dropping the oldest session '%s'", names[first]);
		spool_unlink(u, names[first++]);
		strbuf_release(&p);
	}
	free_names(names, n);
	strbuf_addf(&path, "%s/%020lld-%010d-%06u%s", u->spool_dir, (long long)start,
		    (int)getpid(), u->seq++ % 1000000, SPOOL_SUFFIX);
	strbuf_addf(&tmp, "%s/.tmp-%d-%u", u->spool_dir, (int)getpid(), u->seq);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || io__write_all(fd, body->buf, body->len) || fsync(fd)) {
		errmsg(err, errlen, "failed to write '%s': %s", tmp.buf, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp.buf);
		goto out;
	}
	close(fd);
	if (rename(tmp.buf, path.buf)) {
		errmsg(err, errlen, "failed to rename '%s': %s", tmp.buf, strerror(errno));
		unlink(tmp.buf);
		goto out;
	}
	fd = open(u->spool_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	ret = 0;
out:
	strbuf_release(&tmp);
	strbuf_release(&path);
	return ret;
}

int uploader__flush(struct uploader *u, char *err, size_t errlen)
{
	char **names;
	uint64_t total;
	size_t n = spool_list(u, &names, &total);
	int sent = 0, ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT, body = STRBUF_INIT;
		enum send_result r;

		strbuf_addf(&path, "%s/%s", u->spool_dir, names[i]);
		if (strbuf_read_file(&body, path.buf)) {
			strbuf_release(&path);
			continue;	/* taken by a concurrent flush */
		}
		r = request(u, "/api/v2/profiles", &body, UPLOAD_TIMEOUT_S, err, errlen);
		strbuf_release(&path);
		strbuf_release(&body);
		if (r == UNREACHABLE) {
			ret = -EHOSTUNREACH;
			break;
		}
		if (r == REJECTED)
			log_warn("dropping spooled session '%s': %s", names[i], err);
		else
			sent++;
		spool_unlink(u, names[i]);
	}
	free_names(names, n);
	return ret ? ret : sent;
}

size_t uploader__spooled(struct uploader *u)
{
	char **names;
	uint64_t total;
	size_t n = spool_list(u, &names, &total);

	free_names(names, n);
	return n;
}

int uploader__send(struct uploader *u, const struct profile *p, int64_t start, int64_t end,
		   char *err, size_t errlen)
{
	struct strbuf body = STRBUF_INIT;
	enum send_result r = UNREACHABLE;
	int ret;

	ret = build_body(u, p, start, end, &body);
	if (ret) {
		errmsg(err, errlen, "failed to encode session: %s", strerror(-ret));
		strbuf_release(&body);
		return ret;
	}
	/* Older sessions go first; when they cannot, neither can this one. */
	if (uploader__flush(u, err, errlen) >= 0)
		r = request(u, "/api/v2/profiles", &body, UPLOAD_TIMEOUT_S, err, errlen);
	if (r == SENT)
		ret = 0;
	else if (r == REJECTED)
		ret = -EPERM;
	else
		{
		char serr[256];
		ret = spool_write(u, &body, start ? start : (int64_t)time(NULL), serr,
				  sizeof(serr));
		if (ret)
			errmsg(err, errlen, "%s", serr);
		else
			ret = 1;
	}
	strbuf_release(&body);
	return ret;
}
