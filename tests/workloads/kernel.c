/* Known-answer workload for kernel frames: nearly all of its CPU time is spent in the
 * kernel, reading /dev/zero (clear_user) and writing /dev/null. Runs argv[1] seconds. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);

	if (zero < 0 || null < 0)
		return 1;
	while (time(NULL) < end) {
		if (read(zero, buf, sizeof(buf)) < 0 || write(null, buf, sizeof(buf)) < 0)
			return 1;
	}
	return 0;
}
