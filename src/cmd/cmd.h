/* One entry point per subcommand, dispatched from main.c. Each parses its own options
 * and returns the process exit code. */
#ifndef KILN_CMD_CMD_H
#define KILN_CMD_CMD_H

#define KILN_VERSION "0.1.0"

int cmd_record(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
