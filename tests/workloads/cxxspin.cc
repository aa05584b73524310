// Known-answer workload for symbol sources: a C++ method (demangled name) and a static
// function (no .dynsym entry), each about half of the CPU. The e2e test strips copies of
// it and leaves the names only in MiniDebugInfo or in a separate debug file. Runs
// argv[1] seconds (default 30).
#include <cstdlib>
#include <ctime>

static volatile unsigned long sink;
// Storing the frame address forces a frame in a leaf (see ratio.c).
static void *volatile frame_sink;

namespace shapes {
struct Circle {
	unsigned long r;
	__attribute__((noipa)) unsigned long area(int n) const;
};

unsigned long Circle::area(int n) const
{
	unsigned long x = sink + r;

	frame_sink = __builtin_frame_address(0);
	for (int i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}
}

static __attribute__((noipa)) unsigned long spin_static(int n)
{
	unsigned long x = sink;

	frame_sink = __builtin_frame_address(0);
	for (int i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	time_t end = time(nullptr) + seconds;
	shapes::Circle c{ 3 };

	while (time(nullptr) < end) {
		sink = c.area(1000000);
		sink = spin_static(1000000);
	}
	return 0;
}
