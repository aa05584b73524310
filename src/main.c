/* kiln: a system-wide continuous profiler. main() only dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "sample this machine into collapsed stacks and flamegraphs" },
	{ "serve", cmd_serve, "store uploaded profiles and serve the query API and web UI" },
	{ "report", cmd_report, "convert and render profiles (.col, folded, pprof, perf script)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kiln <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'kiln <command> --help' lists a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("kiln %s\n", KILN_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "kiln: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
