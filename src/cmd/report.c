#include <stdio.h>

#include "cmd/cmd.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "kiln: 'report' is not built yet\n");
	return 1;
}
