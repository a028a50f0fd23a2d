/* static_work - a statically linked program that waits for a file: no loader to inject with */
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (argc > 1 && access(argv[1], F_OK))
		nanosleep(&ts, NULL);
	return 0;
}
