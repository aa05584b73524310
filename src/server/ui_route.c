/* The web UI's files, served from the binary (src/ui/assets.h): `/` is index.html and
 * `/ui/NAME` any embedded file. Nothing is read from disk, so the UI needs no files beside
 * the binary and no network beyond kiln itself.
 *
 * index.html is sent with its stylesheets and scripts inlined (built once), so that the
 * page needs one request before it can ask for data instead of seven; the files stay
 * available under /ui/ for anything that links them. */
#include "server/http.h"

#include <pthread.h>
#include <string.h>

#include "ui/assets.h"

/* Content type by file extension; only the kinds src/ui/ holds. */
static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	return "application/octet-stream";
}

static const struct tag {
	const char *open, *close, *inline_open, *inline_close;
} tags[] = {
	{ "<script src=\"/ui/", "\"></script>", "<script>", "</script>" },
	{ "<link rel=\"stylesheet\" href=\"/ui/", "\">", "<style>", "</style>" },
};

static struct strbuf index_page = STRBUF_INIT;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

/* Appends the tag at p (of kind t) inlined when its file is embedded and cannot end the
 * element early; returns the end of the tag, or NULL when it is not well formed. */
static const char *inline_tag(struct strbuf *out, const struct tag *t, const char *p)
{
	const char *name = p + strlen(t->open), *q = strchr(name, '"');
	char file[64];
	const struct asset *a;

	if (!q || (size_t)(q - name) >= sizeof(file) || strncmp(q, t->close, strlen(t->close)))
		return NULL;
	memcpy(file, name, (size_t)(q - name));
	file[q - name] = 0;
	a = strchr(file, '/') ? NULL : asset__find(file);
	q += strlen(t->close);
	if (!a || strcasestr(a->data, t->inline_close)) {
		strbuf_add(out, p, (size_t)(q - p));
		return q;
	}
	strbuf_addstr(out, t->inline_open);
	strbuf_add(out, a->data, a->size);
	strbuf_addstr(out, t->inline_close);
	return q;
}

static void build_index(void)
{
	const struct asset *a = asset__find("index.html");
	const char *p;

	if (!a)
		return;
	strbuf_grow(&index_page, a->size + 65536);
	for (p = a->data; *p;) {
		const char *next = NULL, *end = NULL;
		const struct tag *t = NULL;
		for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
			const char *m = strstr(p, tags[i].open);
			if (m && (!next || m < next))
				next = m, t = &tags[i];
		}
		if (!next) {
			strbuf_addstr(&index_page, p);
			break;
		}
		strbuf_add(&index_page, p, (size_t)(next - p));
		end = inline_tag(&index_page, t, next);
		if (!end) {	/* keep the rest as it is */
			strbuf_addstr(&index_page, next);
			break;
		}
		p = end;
	}
}

const char *ui__index(size_t *len)
{
	pthread_once(&index_once, build_index);
	*len = index_page.len;
	return index_page.len ? index_page.buf : NULL;
}

void ui__asset(struct request *r, struct response *resp)
{
	const char *name = !strcmp(r->url, "/") ? "index.html" : r->url + strlen("/ui/");
	const struct asset *a;
	const char *page;
	size_t len;

	if (!strcmp(r->url, "/") && (page = ui__index(&len))) {
		strbuf_add(&resp->body, page, len);
		resp->status = 200;
		resp->content_type = content_type(name);
		return;
	}
	/* base names only: no directories, no dot files */
	if (!*name || strchr(name, '/') || name[0] == '.' || !(a = asset__find(name))) {
		resp__error(resp, 404, "no such file '%.64s'", r->url);
		return;
	}
	strbuf_add(&resp->body, a->data, a->size);
	resp->status = 200;
	resp->content_type = content_type(name);
}
