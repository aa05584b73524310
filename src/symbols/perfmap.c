#include "symbols/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/strbuf.h"

#define PERFMAP_MAX (512u << 20)
#define UNSIZED_MAX 4096

void perfmap_init(struct perfmap *pm)
{
	memset(pm, 0, sizeof(*pm));
	symtab_init(&pm->tab);
}

void perfmap_release(struct perfmap *pm)
{
	symtab_release(&pm->tab);
	perfmap_init(pm);
}

static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && isxdigit((unsigned char)*s); s++, digits++) {
		int d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);

		if (digits >= 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || (s < end && *s != ' ' && *s != '\t'))
		return false;
	*p = s;
	*out = v;
	return true;
}

/* One line without its newline; false when it is garbage. */
static bool parse_line(struct symtab *t, const char *s, const char *end)
{
	uint64_t start, size;

	if (!parse_hex(&s, end, &start))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (!parse_hex(&s, end, &size))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (s == end || start + size < start)
		return false;
	symtab__add(t, start, size, s, (size_t)(end - s));
	return true;
}

/* Reads [from, size) of fd into sb. */
static int read_from(int fd, uint64_t from, uint64_t size, struct strbuf *sb)
{
	strbuf_grow(sb, (size_t)(size - from));
	while (from + sb->len < size) {
		ssize_t n = pread(fd, sb->buf + sb->len, (size_t)(size - from - sb->len),
				  (off_t)(from + sb->len));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;	/* truncated under us: parse what there is */
		sb->len += (size_t)n;	/* strbuf_setlen() only shortens */
		sb->buf[sb->len] = '\0';
	}
	return 0;
}

int perfmap__refresh(struct perfmap *pm, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	const char *p, *end, *nl;
	size_t bad = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_ino == pm->ino && (uint64_t)st.st_size == pm->size) {
		close(fd);
		return 0;
	}
	if ((uint64_t)st.st_size > PERFMAP_MAX) {
		close(fd);
		return -EFBIG;
	}
	/* JITs append: parse only the new lines, unless this is another or a shorter file. */
	if ((uint64_t)st.st_ino != pm->ino || (uint64_t)st.st_size < pm->size) {
		symtab_release(&pm->tab);
		pm->parsed = 0;
		pm->bad_lines = 0;
	}
	err = read_from(fd, pm->parsed, (uint64_t)st.st_size, &sb);
	close(fd);
	if (err < 0) {
		strbuf_release(&sb);
		return err;
	}
	symtab__reopen(&pm->tab);
	p = sb.buf;
	end = sb.buf + sb.len;
	/* A last line without its newline is still being written: leave it for next time. */
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		if (nl > p && !parse_line(&pm->tab, p, nl))
			bad++;
		p = nl + 1;
	}
	symtab__finish(&pm->tab, SYMTAB_LAST_WINS, UNSIZED_MAX);
	pm->parsed += (uint64_t)(p - sb.buf);
	pm->size = (uint64_t)st.st_size;
	pm->ino = (uint64_t)st.st_ino;
	pm->bad_lines += bad;
	if (pm->bad_lines && !pm->warned) {
		log_warn("skipped %zu malformed line%s in '%s'", pm->bad_lines,
			 pm->bad_lines == 1 ? "" : "s", path);
		pm->warned = true;
	}
	strbuf_release(&sb);
	return 1;
}

const char *perfmap__find(const struct perfmap *pm, uint64_t addr)
{
	return symtab__find(&pm->tab, addr, NULL);
}

size_t perfmap__memory(const struct perfmap *pm)
{
	return sizeof(*pm) + symtab__memory(&pm->tab);
}
