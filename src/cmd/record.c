/* kiln record: sample this machine into collapsed stacks and flamegraphs (SPEC §2).
 * Options keep gProfiler's names and defaults. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/output.h"
#include "agent/sampler.h"
#include "agent/session.h"
#include "agent/otlp_export.h"
#include "agent/upload.h"
#include "cmd/cmd.h"
#include "profile/profile.h"
#include "runtimes/registry.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Upload settings (-u): parsed here, sent by the upload client. */
struct record_upload {
	bool enabled;
	const char *server_host;
	const char *token;
	const char *service_name;
	const char *spool_dir;		/* default: OUTPUT_DIR/spool */
	const char *otlp_endpoint;	/* --otlp-endpoint: also sent as OTLP profiles */
};

/* Sessions kept on disk while the server cannot be reached (agent/upload.h). */
#define SPOOL_MAX_BYTES (128u << 20)

struct record_options {
	unsigned freq;
	unsigned duration;
	const char *output_dir;
	bool rotating;
	bool flamegraph;
	bool continuous;
	pid_t *pids;
	size_t nr_pids;
	enum perf_mode perf_mode;
	uint32_t stack_size;
	struct runtime_choices runtimes;	/* --<runtime>-mode and the runtimes' flags */
	struct record_upload upload;
};

enum {
	OPT_ROTATING = 256, OPT_NO_FLAMEGRAPH, OPT_FLAMEGRAPH, OPT_PIDS, OPT_PERF_MODE,
	OPT_STACK_SIZE, OPT_SERVER_HOST, OPT_TOKEN, OPT_SERVICE_NAME, OPT_SPOOL_DIR,
	OPT_OTLP_ENDPOINT,
	OPT_RUNTIME = 512,	/* and up: the runtimes' options (runtimes/registry.h) */
	OPT_RUNTIME_VALUE = 768,	/* and up: the runtimes' value options */
};

#define MAX_OPTIONS 64

static const struct option fixed_options[] = {
	{ "profiling-frequency", required_argument, NULL, 'f' },
	{ "profiling-duration", required_argument, NULL, 'd' },
	{ "output-dir", required_argument, NULL, 'o' },
	{ "rotating-output", no_argument, NULL, OPT_ROTATING },
	{ "no-flamegraph", no_argument, NULL, OPT_NO_FLAMEGRAPH },
	{ "flamegraph", no_argument, NULL, OPT_FLAMEGRAPH },
	{ "continuous", no_argument, NULL, 'c' },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "perf-mode", required_argument, NULL, OPT_PERF_MODE },
	{ "perf-dwarf-stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "upload-results", no_argument, NULL, 'u' },
	{ "server-host", required_argument, NULL, OPT_SERVER_HOST },
	{ "token", required_argument, NULL, OPT_TOKEN },
	{ "service-name", required_argument, NULL, OPT_SERVICE_NAME },
	{ "spool-dir", required_argument, NULL, OPT_SPOOL_DIR },
	{ "otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
};

/* The fixed options, then the runtimes', then the terminator, into opts (MAX_OPTIONS). */
static void build_options(struct option *opts)
{
	size_t n = sizeof(fixed_options) / sizeof(fixed_options[0]);

	memcpy(opts, fixed_options, sizeof(fixed_options));
	n += runtime_cli__options(opts + n, MAX_OPTIONS - 1 - n, OPT_RUNTIME);
	n += runtime_cli__value_options(opts + n, MAX_OPTIONS - 1 - n, OPT_RUNTIME_VALUE);
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static void usage(FILE *f)
{
	fputs("usage: kiln record [options]\n"
	      "\n"
	      "Samples every process on this machine and writes collapsed stacks (.col) and a\n"
	      "flamegraph (.html) per session. Needs root (or CAP_PERFMON).\n"
	      "\n"
	      "  -f, --profiling-frequency HZ  samples per second per CPU (11)\n"
	      "  -d, --profiling-duration S    length of one session in seconds (60)\n"
	      "  -o, --output-dir DIR          where profile_<time>.col/.html and the last_*\n"
	      "                                symlinks go (.)\n"
	      "      --rotating-output         keep only the newest session's files\n"
	      "      --no-flamegraph           write only the .col file\n"
	      "  -c, --continuous              sessions back to back until SIGINT/SIGTERM\n"
	      "      --pids P[,P...]           profile only these processes (and their children)\n"
	      "      --perf-mode MODE          fp, dwarf, smart or disabled (smart)\n"
	      "      --perf-dwarf-stack-size B user stack copied per sample in dwarf/smart mode\n"
	      "                                (16384, at most 65528)\n",
	      f);
	runtime_cli__usage(f);
	fputs("  -u, --upload-results          upload each session (needs --token and\n"
	      "                                --service-name; --server-host URL, default\n"
	      "                                http://127.0.0.1:4040)\n"
	      "      --spool-dir DIR           sessions the server could not take wait here\n"
	      "                                (OUTPUT_DIR/spool, at most 128 MiB)\n"
	      "      --otlp-endpoint URL       also send each session as OTLP profiles over\n"
	      "                                HTTP (e.g. a Collector's http://host:4318)\n"
	      "  -v, --verbose                 more messages;  -q, --quiet  errors only\n"
	      "  -h, --help                    this text\n",
	      f);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(struct record_options *o, const char *arg)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > INT_MAX || (*end && *end != ','))
			return -EINVAL;
		o->pids = xrealloc(o->pids, (o->nr_pids + 1) * sizeof(*o->pids));
		o->pids[o->nr_pids++] = (pid_t)v;
		p = *end ? end + 1 : end;
	}
	return o->nr_pids ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv, struct record_options *o)
{
	struct option long_options[MAX_OPTIONS];
	unsigned long v;
	int c, idx = -1;

	build_options(long_options);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:d:o:cuvqh", long_options, &idx)) != -1) {
		switch (c) {
		case 'f':
			if (parse_uint(optarg, 1, 100000, &v) < 0)
				goto bad;
			o->freq = (unsigned)v;
			break;
		case 'd':
			if (parse_uint(optarg, 1, 86400 * 7, &v) < 0)
				goto bad;
			o->duration = (unsigned)v;
			break;
		case 'o': o->output_dir = optarg; break;
		case OPT_ROTATING: o->rotating = true; break;
		case OPT_NO_FLAMEGRAPH: o->flamegraph = false; break;
		case OPT_FLAMEGRAPH: o->flamegraph = true; break;
		case 'c': o->continuous = true; break;
		case OPT_PIDS:
			if (parse_pids(o, optarg) < 0)
				goto bad;
			break;
		case OPT_PERF_MODE:
			if (perf_mode__parse(optarg, &o->perf_mode) < 0)
				goto bad;
			break;
		case OPT_STACK_SIZE:
			if (parse_uint(optarg, 8, SAMPLER_MAX_STACK_SIZE, &v) < 0 || v % 8)
				goto bad;
			o->stack_size = (uint32_t)v;
			break;
		case 'u': o->upload.enabled = true; break;
		case OPT_SERVER_HOST: o->upload.server_host = optarg; break;
		case OPT_TOKEN: o->upload.token = optarg; break;
		case OPT_SERVICE_NAME: o->upload.service_name = optarg; break;
		case OPT_SPOOL_DIR: o->upload.spool_dir = optarg; break;
		case OPT_OTLP_ENDPOINT: o->upload.otlp_endpoint = optarg; break;
		case 'v': log_level = LOG_DEBUG; break;
		case 'q': log_level = LOG_ERROR; break;
		case 'h': usage(stdout); return 1;
		default:
			if (c >= OPT_RUNTIME_VALUE) {
				if (runtime_choices__apply_value(&o->runtimes, OPT_RUNTIME_VALUE, c,
								 optarg) < 0)
					goto bad;
				break;
			}
			if (c >= OPT_RUNTIME) {
				if (runtime_choices__apply(&o->runtimes, OPT_RUNTIME, c, optarg) < 0)
					goto bad;
				break;
			}
			usage(stderr);
			return -EINVAL;
		}
		idx = -1;
	}
	if (optind < argc) {
		log_error("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (o->upload.enabled && (!o->upload.token || !o->upload.service_name)) {
		log_error("--upload-results needs --token and --service-name");
		return -EINVAL;
	}
	return 0;
bad:
	if (idx >= 0)
		log_error("invalid value '%s' for option '--%s'", optarg, long_options[idx].name);
	else
		log_error("invalid value '%s' for option '-%c'", optarg, c);
	return -EINVAL;
}

static json_t *run_arguments(const struct record_options *o)
{
	json_t *pids = json_array(), *args;

	for (size_t i = 0; i < o->nr_pids; i++)
		json_array_append_new(pids, json_integer(o->pids[i]));
	args = json_pack("{s:i, s:i, s:s?, s:b, s:b, s:b, s:o, s:s, s:i}",
			 "frequency", (int)o->freq, "duration", (int)o->duration,
			 "output_dir", o->output_dir, "rotating_output", o->rotating,
			 "flamegraph", o->flamegraph, "continuous", o->continuous, "pids", pids,
			 "perf_mode", perf_mode__name(o->perf_mode),
			 "perf_dwarf_stack_size", (int)o->stack_size);
	runtime_choices__to_json(&o->runtimes, args);
	json_object_set_new(args, "upload_results", json_boolean(o->upload.enabled));
	json_object_set_new(args, "server_host", o->upload.server_host ?
			    json_string(o->upload.server_host) : json_null());
	json_object_set_new(args, "service_name", o->upload.service_name ?
			    json_string(o->upload.service_name) : json_null());
	return args;
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* No SA_RESTART: the poll returns at once. A second signal kills as usual. */
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
		return -errno;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o = {
		.freq = 11, .duration = 60, .flamegraph = true, .perf_mode = PERF_MODE_SMART,
		.stack_size = 16384,
	};
	struct session_config cfg = { 0 };
	struct session *s = NULL;
	struct output out = { 0 };
	struct uploader *up = NULL;
	struct otlp_exporter *otlp = NULL;
	char err[512] = "";
	json_t *args = NULL;
	int ret;

	runtime_choices_init(&o.runtimes);
	ret = parse_args(argc, argv, &o);
	if (ret)
		goto out;
	if (!o.output_dir)
		o.output_dir = ".";
	if (o.upload.enabled) {
		struct strbuf spool = STRBUF_INIT;
		if (!o.upload.spool_dir)
			strbuf_addf(&spool, "%s/spool", o.output_dir);
		else
			strbuf_addstr(&spool, o.upload.spool_dir);
		up = uploader__new(o.upload.server_host ? o.upload.server_host
							: "http://127.0.0.1:4040",
				   o.upload.token, o.upload.service_name, spool.buf, SPOOL_MAX_BYTES);
		strbuf_release(&spool);
		if (!up) {
			ret = -EINVAL;
			goto out;
		}
		if (uploader__health_check(up, err, sizeof(err)) < 0)
			log_warn("%s: sessions are spooled until the server answers", err);
	}
	if (o.upload.otlp_endpoint)
		otlp = otlp_exporter__new(o.upload.otlp_endpoint, o.upload.service_name);
	ret = output__init(&out, o.output_dir, o.flamegraph, o.rotating);
	if (ret < 0)
		goto out;
	args = run_arguments(&o);
	cfg.freq = o.freq;
	cfg.mode = o.perf_mode;
	cfg.stack_size = o.stack_size;
	cfg.pids = o.pids;
	cfg.nr_pids = o.nr_pids;
	cfg.runtimes = &o.runtimes;
	cfg.run_arguments = args;
	for (size_t i = 0; i < o.nr_pids; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/proc/%d", (int)o.pids[i]);
		if (access(path, F_OK) < 0)
			log_warn("process %d does not exist (yet): it is profiled if it appears",
				 (int)o.pids[i]);
	}
	ret = install_signals();
	if (ret < 0) {
		log_error("failed to install signal handlers: %s", strerror(-ret));
		goto out;
	}
	ret = session__open(&cfg, &s, err, sizeof(err));
	if (ret < 0) {
		log_error("%s", err);
		goto out;
	}
	log_info("profiling %s at %u Hz, perf mode %s, %us sessions%s into '%s'",
		 o.nr_pids ? "the given processes" : "every process", o.freq,
		 perf_mode__name(session__mode(s)), o.duration,
		 o.continuous ? " (continuous)" : "", o.output_dir);
	do {
		struct profile *p;
		uint64_t start_ns = wall_ns();
		ret = session__run(s, (uint64_t)o.duration * 1000, &stop_requested);
		if (ret < 0) {
			log_error("failed to read samples: %s", strerror(-ret));
			break;
		}
		p = session__flush(s);
		ret = output__write(&out, p);
		if (up) {
			int sent = uploader__send(up, p, 0, 0, err, sizeof(err));
			if (sent == 1)
				log_warn("%s: session spooled", err);
			else if (sent < 0)
				log_error("failed to upload the session: %s", err);
		}
		if (otlp && otlp_exporter__send(otlp, p, start_ns, wall_ns(), err, sizeof(err)))
			log_error("%s", err);
		profile__free(p);
		if (ret < 0)
			break;
	} while (o.continuous && !stop_requested);
out:
	otlp_exporter__free(otlp);
	uploader__free(up);
	session__free(s);
	json_decref(args);
	runtime_choices_release(&o.runtimes);
	free(o.pids);
	if (ret > 0)
		return 0;	/* --help */
	return ret < 0 ? 1 : 0;
}
