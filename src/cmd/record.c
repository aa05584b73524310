#include <stdio.h>

#include "cmd/cmd.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "kiln: 'record' is not built yet\n");
	return 1;
}
