#include "agent/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/col.h"
#include "format/html.h"
#include "util/log.h"
#include "util/strbuf.h"

int output__init(struct output *o, const char *dir, bool flamegraph, bool rotating)
{
	struct stat st;

	o->dir = dir;
	o->flamegraph = flamegraph;
	o->rotating = rotating;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int err = -errno;
		log_error("failed to create '%s': %s", dir, strerror(errno));
		return err;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_error("failed to use '%s': not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

typedef int (*writer_fn)(FILE *f, const struct profile *p);

static int write_col(FILE *f, const struct profile *p)
{
	return col__write(f, p, true);
}

static int write_html(FILE *f, const struct profile *p)
{
	const json_t *host = json_object_get(profile__meta_const(p), "hostname");
	const json_t *end = json_object_get(profile__meta_const(p), "end_time");
	char title[256];
	struct html_options opts = { title, 0 };
	struct profile *view = col__process_root(p);
	int ret;

	snprintf(title, sizeof(title), "kiln: %s, %s", json_is_string(host) ?
		 json_string_value(host) : "", json_is_string(end) ? json_string_value(end) : "");
	ret = html__write(f, view, &opts);
	profile__free(view);
	return ret;
}

/* Writes dir/name through dir/.name.tmp and a rename, so that a reader never sees half a
 * file. */
static int write_file(const char *dir, const char *name, writer_fn fn, const struct profile *p)
{
	struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT;
	FILE *f;
	int ret;

	strbuf_addf(&path, "%s/%s", dir, name);
	strbuf_addf(&tmp, "%s/.%s.tmp", dir, name);
	f = fopen(tmp.buf, "we");
	if (!f) {
		ret = -errno;
		log_error("failed to create '%s': %s", tmp.buf, strerror(errno));
		goto out;
	}
	ret = fn(f, p);
	if (fflush(f) != 0 && !ret)
		ret = -errno;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp.buf, path.buf) < 0)
		ret = -errno;
	if (ret) {
		log_error("failed to write '%s': %s", path.buf, strerror(-ret));
		unlink(tmp.buf);
	}
out:
	strbuf_release(&path);
	strbuf_release(&tmp);
	return ret;
}

/* Points dir/link at target (a name in dir) atomically: a new symlink under a temporary
 * name renamed over the old one. */
static int replace_symlink(const char *dir, const char *link, const char *target)
{
	struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT;
	int ret = 0;

	strbuf_addf(&path, "%s/%s", dir, link);
	strbuf_addf(&tmp, "%s/.%s.%d.tmp", dir, link, (int)getpid());
	unlink(tmp.buf);
	if (symlink(target, tmp.buf) < 0 || rename(tmp.buf, path.buf) < 0) {
		ret = -errno;
		log_error("failed to update '%s': %s", path.buf, strerror(errno));
		unlink(tmp.buf);
	}
	strbuf_release(&path);
	strbuf_release(&tmp);
	return ret;
}

/* The name dir/link points at, when it is a plain name in dir; "" otherwise. */
static void old_target(const char *dir, const char *link, char *buf, size_t len)
{
	struct strbuf path = STRBUF_INIT;
	ssize_t n;

	strbuf_addf(&path, "%s/%s", dir, link);
	n = readlink(path.buf, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strchr(buf, '/') || strncmp(buf, "profile_", 8))
		buf[0] = '\0';
	strbuf_release(&path);
}

static void remove_old(const char *dir, const char *old, const char *now)
{
	struct strbuf path = STRBUF_INIT;

	if (!old[0] || !strcmp(old, now))
		return;
	strbuf_addf(&path, "%s/%s", dir, old);
	if (unlink(path.buf) < 0 && errno != ENOENT)
		log_warn("failed to remove '%s': %s", path.buf, strerror(errno));
	strbuf_release(&path);
}

int output__write(struct output *o, const struct profile *p)
{
	char stamp[64], col[128], html[128], old_col[256], old_html[256];
	struct timespec ts;
	struct tm tm;
	struct stat st;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H_%M_%S", &tm);
	snprintf(col, sizeof(col), "profile_%s.%03ldZ.col", stamp, ts.tv_nsec / 1000000);
	snprintf(html, sizeof(html), "profile_%s.%03ldZ.html", stamp, ts.tv_nsec / 1000000);
	for (int i = 1; i < 1000; i++) {	/* two sessions in one millisecond */
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", o->dir, col);
		ret = stat(path.buf, &st);
		strbuf_release(&path);
		if (ret < 0)
			break;
		snprintf(col, sizeof(col), "profile_%s.%03ldZ-%d.col", stamp, ts.tv_nsec / 1000000, i);
		snprintf(html, sizeof(html), "profile_%s.%03ldZ-%d.html", stamp,
			 ts.tv_nsec / 1000000, i);
	}
	old_target(o->dir, "last_profile.col", old_col, sizeof(old_col));
	old_target(o->dir, "last_flamegraph.html", old_html, sizeof(old_html));

	ret = write_file(o->dir, col, write_col, p);
	if (ret < 0)
		return ret;
	if (o->flamegraph) {
		ret = write_file(o->dir, html, write_html, p);
		if (ret < 0)
			return ret;
	}
	ret = replace_symlink(o->dir, "last_profile.col", col);
	if (!ret && o->flamegraph)
		ret = replace_symlink(o->dir, "last_flamegraph.html", html);
	if (ret < 0)
		return ret;
	if (o->rotating) {
		remove_old(o->dir, old_col, col);
		remove_old(o->dir, old_html, o->flamegraph ? html : "");
	}
	log_info("wrote %s/%s (%" JSON_INTEGER_FORMAT " samples, %zu stacks, %" JSON_INTEGER_FORMAT
		 " lost)%s%s", o->dir, col,
		 json_integer_value(json_object_get(profile__meta_const(p), "samples")),
		 profile__nr_stacks(p),
		 json_integer_value(json_object_get(profile__meta_const(p), "lost")),
		 o->flamegraph ? " and " : "", o->flamegraph ? html : "");
	return 0;
}
