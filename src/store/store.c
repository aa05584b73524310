/* The backend-independent part of the store: label sets, query matching, the table of
 * backends by scheme, dispatch. */
#include "store/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "store/clickhouse.h"
#include "store/sqlite.h"

#include "util/log.h"
#include "util/re.h"
#include "util/strbuf.h"

void labels_init(struct labels *l)
{
	l->v = NULL;
	l->n = 0;
}

void labels_release(struct labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	labels_init(l);
}

void labels__set(struct labels *l, const char *name, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i].name, name)) {
			free(l->v[i].value);
			l->v[i].value = xstrdup(value);
			return;
		}
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].name = xstrdup(name);
	l->v[l->n].value = xstrdup(value);
	l->n++;
}

const char *labels__get(const struct labels *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].value;
	return NULL;
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

void labels__sort(struct labels *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), label_cmp);
}

void store_query_init(struct store_query *q)
{
	memset(q, 0, sizeof(*q));
}

void store_query_release(struct store_query *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->m[i].name);
		free(q->m[i].value);
		re__free(q->m[i].re);
	}
	free(q->m);
	free(q->service);
	free(q->profile_type);
	store_query_init(q);
}

bool store_query__matches(const struct store_query *q, const struct labels *l)
{
	for (size_t i = 0; i < q->n; i++) {
		const struct matcher *m = &q->m[i];
		const char *v = labels__get(l, m->name);
		bool hit;

		if (!v)
			v = "";
		switch (m->op) {
		case MATCH_EQ:
			hit = !strcmp(v, m->value);
			break;
		case MATCH_NE:
			hit = strcmp(v, m->value) != 0;
			break;
		case MATCH_RE:
			hit = re__full_match(m->re, v);
			break;
		default:
			hit = !re__full_match(m->re, v);
			break;
		}
		if (!hit)
			return false;
	}
	return true;
}

/* Creates dir and its parents (mode 0755). Returns 0, or -1 with errno set. */
static int mkdir_p(const char *dir)
{
	char *copy = xstrdup(dir);
	int ret = 0;

	for (char *c = copy + 1;; c++) {
		if (*c == '/' || !*c) {
			char saved = *c;
			*c = 0;
			if (mkdir(copy, 0755) && errno != EEXIST) {
				ret = -1;
				break;
			}
			*c = saved;
			if (!saved)
				break;
		}
	}
	free(copy);
	return ret;
}

/* The backends, by scheme. Plain directories go to the first one with open_dir. A new
 * backend is its files under store/ and one line here. */
static const struct store_backend *const backends[] = {
	&sqlite_store_backend,
	&clickhouse_store_backend,
};
#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

/* The length of location's scheme when it starts with one followed by ':' (RFC 3986:
 * a letter, then letters, digits, '+', '-', '.'), else 0. */
static size_t scheme_len(const char *location)
{
	size_t n = 0;

	if (!isalpha((unsigned char)location[0]))
		return 0;
	while (isalnum((unsigned char)location[n]) || location[n] == '+' || location[n] == '-' ||
	       location[n] == '.')
		n++;
	return location[n] == ':' ? n : 0;
}

static const struct store_backend *find_backend(const char *scheme, size_t len)
{
	for (size_t i = 0; i < NR_BACKENDS; i++)
		if (strlen(backends[i]->scheme) == len &&
		    !strncasecmp(backends[i]->scheme, scheme, len))
			return backends[i];
	return NULL;
}

static struct store *unknown_scheme(const char *location, size_t len, char *err,
				    size_t errlen)
{
	struct strbuf known = STRBUF_INIT;

	for (size_t i = 0; i < NR_BACKENDS; i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", backends[i]->scheme);
	errmsg(err, errlen, "failed to open store '%s': unknown storage scheme '%.*s' (known: %s)",
	       location, (int)len, location, known.buf);
	strbuf_release(&known);
	return NULL;
}

struct store *store__open(const char *location, const struct store_options *opts, char *err,
			  size_t errlen)
{
	size_t len = scheme_len(location);
	const struct store_backend *b = len ? find_backend(location, len) : NULL;
	const char *url = strstr(location, "://");

	if (b)
		return b->open(location + len + 1, opts, err, errlen);
	if (url)
		return unknown_scheme(location, (size_t)(url - location), err, errlen);
	if (!*location) {
		errmsg(err, errlen, "failed to open store: the storage location is empty");
		return NULL;
	}
	for (size_t i = 0; i < NR_BACKENDS; i++) {
		if (!backends[i]->open_dir)
			continue;
		if (mkdir_p(location) < 0) {
			errmsg(err, errlen, "failed to create data directory '%s': %s", location,
			       strerror(errno));
			return NULL;
		}
		return backends[i]->open_dir(location, opts, err, errlen);
	}
	errmsg(err, errlen, "failed to open store '%s': no backend keeps stores in directories",
	       location);
	return NULL;
}

int64_t store__resolution(const struct store *s)
{
	return s->resolution;
}

void store__close(struct store *s)
{
	if (s)
		s->ops->close(s);
}

/* A write bumps the generation before and after: a read that ran alongside it, whatever
 * it saw, is cached at a generation that is gone once the write has returned. */
int store__put(struct store *s, const struct store_put *put, char *err, size_t errlen)
{
	int ret;

	__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	ret = s->ops->put(s, put, err, errlen);
	__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	return ret;
}

bool store__concurrent_puts(const struct store *s)
{
	return s->concurrent_puts;
}

bool store__async_puts(const struct store *s)
{
	return s->ops->put_async != NULL;
}

/* An asynchronous put's caller, and its store's generation to bump when it is done. */
struct put_async {
	struct store *s;
	store_put_done *done;
	void *arg;
};

static void put_async_done(void *arg, int ret, const char *err)
{
	struct put_async a = *(struct put_async *)arg;

	free(arg);
	__atomic_add_fetch(&a.s->generation, 1, __ATOMIC_SEQ_CST);
	a.done(a.arg, ret, err);
}

int store__put_async(struct store *s, const struct store_put *put, store_put_done *done,
		     void *arg, char *err, size_t errlen)
{
	struct put_async *a;
	int ret;

	if (!s->ops->put_async) {
		errmsg(err, errlen, "failed to store profile: this store has no asynchronous puts");
		return -ENOTSUP;
	}
	a = xmalloc(sizeof(*a));
	*a = (struct put_async){ s, done, arg };
	__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	ret = s->ops->put_async(s, put, put_async_done, a, err, errlen);
	if (ret) {
		free(a);
		__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	}
	return ret;
}

uint64_t store__generation(const struct store *s)
{
	return __atomic_load_n(&s->generation, __ATOMIC_SEQ_CST);
}

bool store__concurrent_reads(const struct store *s)
{
	return s->concurrent_reads;
}

void store_tree_init(struct store_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void store_tree_release(struct store_tree *t)
{
	free(t->parent);
	free(t->name);
	free(t->self);
	free(t->names);
	free(t->strings);
	store_tree_init(t);
}

int store__select_tree(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, struct store_tree *out, char *err, size_t errlen)
{
	return s->ops->select_tree(s, q, from, until, out, err, errlen);
}

int store__select(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		  struct profile *out, char *err, size_t errlen)
{
	return s->ops->select(s, q, from, until, out, err, errlen);
}

int store__series(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		  struct store_series *out, char *err, size_t errlen)
{
	return s->ops->series(s, q, from, until, out, err, errlen);
}

int store__label_names(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, char ***out, size_t *n, char *err, size_t errlen)
{
	return s->ops->label_names(s, q, from, until, out, n, err, errlen);
}

int store__label_pairs(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, char ***out, size_t *n, char *err, size_t errlen)
{
	return s->ops->label_values(s, q, NULL, from, until, out, n, err, errlen);
}

int store__label_values(struct store *s, const struct store_query *q, const char *name,
			int64_t from, int64_t until, char ***out, size_t *n, char *err,
			size_t errlen)
{
	return s->ops->label_values(s, q, name, from, until, out, n, err, errlen);
}

void store__free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int store__services(struct store *s, struct store_service **out, size_t *n, char *err,
		    size_t errlen)
{
	return s->ops->services(s, out, n, err, errlen);
}

void store__free_services(struct store_service *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].units);
		free(v[i].spy_name);
		free(v[i].profile_type);
		for (size_t k = 0; k < v[i].nr_types; k++)
			free(v[i].types[k]);
		free(v[i].types);
	}
	free(v);
}

int store__retain(struct store *s, int64_t before, char *err, size_t errlen)
{
	int ret;

	__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	ret = s->ops->retain(s, before, err, errlen);
	__atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
	return ret;
}

int store__stats(struct store *s, struct store_stats *out, char *err, size_t errlen)
{
	return s->ops->stats(s, out, err, errlen);
}
