#include <stdio.h>

#include "cmd/cmd.h"

int cmd_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "kiln: 'serve' is not built yet\n");
	return 1;
}
