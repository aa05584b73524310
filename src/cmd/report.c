/* kiln report: converts and renders profiles offline (SPEC §4).
 *
 *   kiln report FILE [--format html|col|folded|pprof|top] [-o OUT]
 *   kiln report --diff A B [-o OUT]
 *
 * The input format is recognized from the content (format/detect.h). Exit codes: 0 done,
 * 1 failed (unreadable or invalid input, write error), 2 bad usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "format/col.h"
#include "format/detect.h"
#include "format/html.h"
#include "format/pprof.h"
#include "format/top.h"
#include "util/log.h"
#include "util/strbuf.h"

enum out_format { OUT_HTML, OUT_COL, OUT_FOLDED, OUT_PPROF, OUT_TOP };

static const char *const out_names[] = { "html", "col", "folded", "pprof", "top" };

struct report_args {
	enum out_format format;
	const char *output;	/* NULL: stdout */
	const char *title;
	const char *sample_type;
	size_t limit;
	bool diff;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kiln report FILE [options]\n"
		"       kiln report --diff A B [options]\n"
		"\n"
		"Reads a .col file, folded stacks, a pprof profile (gzipped or not), `perf script`\n"
		"output or a JFR recording (recognized from the content; FILE '-' is standard input)\n"
		"and writes it as:\n"
		"\n"
		"  -f, --format FMT      html (default: a self-contained flamegraph), col, folded,\n"
		"                        pprof (gzipped, for `go tool pprof`) or top (a table)\n"
		"  -o, --output OUT      write to OUT instead of standard output\n"
		"      --diff A B        differential flamegraph of B against A (red: grew in B)\n"
		"      --title TEXT      title of the flamegraph page\n"
		"      --sample-type T   the pprof sample type to read, e.g. cpu (default: the first),\n"
		"                        or the JFR one: cpu, wall, alloc_in_new_tlab_bytes, ...\n"
		"                        (default: the first with samples)\n"
		"  -n, --limit N         rows of the top table (default 30, 0: all)\n"
		"  -h, --help            this help\n");
}

/* Loads path into a new profile. Returns NULL after printing why. */
static struct profile *load(const char *path, const struct report_args *a)
{
	struct strbuf sb = STRBUF_INIT;
	enum input_format fmt;
	struct profile *p;
	char err[256] = "";
	int ret = strcmp(path, "-") ? strbuf_read_file(&sb, path) : strbuf_read_fd(&sb, 0);

	if (ret) {
		log_error("failed to read '%s': %s", path, strerror(-ret));
		strbuf_release(&sb);
		return NULL;
	}
	fmt = input__detect(sb.buf, sb.len);
	if (fmt == INPUT_UNKNOWN) {
		log_error("failed to recognize '%s': %s", path, sb.len ?
			  "not .col, folded stacks, pprof, perf script output or JFR" : "empty file");
		strbuf_release(&sb);
		return NULL;
	}
	p = profile__new();
	ret = input__load(p, sb.buf, sb.len, fmt, a->sample_type, err, sizeof(err));
	if (ret) {
		log_error("failed to parse '%s' as %s: %s", path, input__name(fmt), err);
		profile__free(p);
		p = NULL;
	}
	strbuf_release(&sb);
	return p;
}

static int write_output(FILE *f, struct profile *p, const char *in, const struct report_args *a)
{
	unsigned skip = input__col_prefix(p);
	struct html_options ho = { .title = a->title ? a->title : in, .skip_frames = skip };
	struct strbuf pb = STRBUF_INIT;
	struct profile *q;
	int ret;

	switch (a->format) {
	case OUT_HTML:
		return html__write(f, p, &ho);
	case OUT_COL:
		return col__write(f, p, true);
	case OUT_TOP:	/* the process name is no function: skip it too */
		return top__write(f, p, skip ? COL_PREFIX_FRAMES : 0, a->limit);
	case OUT_FOLDED:
	case OUT_PPROF:
		q = col__split_prefix(p, true);	/* the process stays the root frame */
		if (a->format == OUT_FOLDED) {
			ret = col__write(f, q, false);
		} else {
			ret = pprof__write(&pb, q);
			if (!ret && (fwrite(pb.buf, 1, pb.len, f) != pb.len || fflush(f)))
				ret = -EIO;
		}
		strbuf_release(&pb);
		profile__free(q);
		return ret;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "diff", no_argument, NULL, 'D' },
		{ "title", required_argument, NULL, 'T' },
		{ "sample-type", required_argument, NULL, 'S' },
		{ "limit", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct report_args){ .format = OUT_HTML, .limit = 30 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:n:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'f':
			for (c = 0; c < 5 && strcmp(optarg, out_names[c]); c++)
				;
			if (c == 5) {
				log_error("unknown format '%s': use html, col, folded, pprof or top", optarg);
				return 2;
			}
			a->format = (enum out_format)c;
			break;
		case 'o': a->output = optarg; break;
		case 'D': a->diff = true; break;
		case 'T': a->title = optarg; break;
		case 'S': a->sample_type = optarg; break;
		case 'n':
			errno = 0;
			a->limit = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg) {
				log_error("invalid row limit '%s'", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != (a->diff ? 2 : 1)) {
		log_error(a->diff ? "--diff needs two files" : "report needs one input file");
		usage(stderr);
		return 2;
	}
	if (a->diff && a->format != OUT_HTML) {
		log_error("--diff writes only html");
		return 2;
	}
	return -1;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	struct profile *p = NULL, *q = NULL;
	FILE *f = stdout;
	int ret = parse_args(argc, argv, &a), rc = 1;

	if (ret >= 0)
		return ret;
	p = load(argv[optind], &a);
	if (!p || (a.diff && !(q = load(argv[optind + 1], &a))))
		goto out;
	if (a.output && !(f = fopen(a.output, "w"))) {
		log_error("failed to open '%s': %s", a.output, strerror(errno));
		f = stdout;
		goto out;
	}
	if (a.diff) {
		unsigned sp = input__col_prefix(p), sq = input__col_prefix(q);
		struct html_options ho = { .title = a.title ? a.title : "kiln differential flamegraph",
					   .skip_frames = sp < sq ? sp : sq };
		ret = html__write_diff(f, p, q, &ho);
	} else {
		ret = write_output(f, p, argv[optind], &a);
	}
	if (ret)
		log_error("failed to write '%s': %s", a.output ? a.output : "standard output",
			  strerror(-ret));
	else
		rc = 0;
out:
	if (f != stdout && fclose(f) && !rc) {
		log_error("failed to write '%s': %s", a.output, strerror(errno));
		rc = 1;
	}
	profile__free(p);
	profile__free(q);
	return rc;
}
