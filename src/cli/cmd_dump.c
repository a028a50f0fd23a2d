// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_dump.c - gpubpf dump: ask the running flight recorder (record --flight) for a dump */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "cmds.h"
#include "incident/flight.h"
#include "core/util.h"

static const char usage_text[] =
"Usage: gpubpf dump [--timeout SECS]\n"
"\n"
"Ask the running flight recorder (gpubpf record --flight SECS) to write the\n"
"last SECS seconds it holds, with every call still in flight, as a trace, and\n"
"print that file's path. The recorder keeps running. It is found through its\n"
"socket, /run/gpubpf/flight.sock, which only root can reach.\n"
"\n"
"      --timeout SECS  wait at most SECS for the file (default 60)\n"
"  -h, --help          this text\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf record -a --flight 30 -o incident.sbt &\n"
"  sudo gpubpf dump            # prints incident.1.sbt\n"
"  gpubpf view incident.1.sbt\n";

static const struct option long_opts[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_dump(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[256], path[sizeof(a.sun_path)], resp[4200];
	double timeout = 60;
	struct pollfd p;
	size_t got = 0;
	ssize_t n;
	int c, fd;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (gb_parse_num(optarg, &timeout) || !(timeout > 0) || timeout > 86400) {
				gb_err("bad --timeout '%s': give seconds, e.g. --timeout 120", optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'gpubpf dump --help' for usage.\n");
			return 2;
		}
	}
	if (optind < argc) {
		gb_err("unexpected argument '%s': gpubpf dump takes no file (the recorder's -o names the dumps)",
		       argv[optind]);
		return 2;
	}
	if (flight_socket_path(dir, sizeof(dir), path, sizeof(path))) {
		gb_err("the flight recorder's socket path is too long: set GPUBPF_RUN_DIR to a shorter directory");
		return 1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			gb_err("cannot reach the flight recorder at %s: permission denied; run as root (sudo gpubpf dump)", path);
		else if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR)
			gb_err("no flight recorder is running (nothing listens on %s): start one with sudo gpubpf record -a --flight SECS",
			       path);
		else
			gb_err("cannot reach the flight recorder at %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (send(fd, "dump\n", 5, MSG_NOSIGNAL) != 5) {
		gb_err("the flight recorder at %s did not take the request: %s", path, strerror(errno));
		close(fd);
		return 1;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got < sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
		if (poll(&p, 1, (int)(timeout * 1000)) != 1) {
			gb_err("the flight recorder did not answer within %.0f s: it may be stalled; try again or raise --timeout",
			       timeout);
			close(fd);
			return 1;
		}
		n = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	resp[got] = 0;
	resp[strcspn(resp, "\n")] = 0;
	if (!strncmp(resp, "ok ", 3)) {
		printf("%s\n", resp + 3);
		return 0;
	}
	if (!strncmp(resp, "error ", 6))
		gb_err("the flight recorder could not dump: %s", resp + 6);
	else
		gb_err("the flight recorder gave no answer (it stopped?)");
	return 1;
}
