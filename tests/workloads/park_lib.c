/*
 * park_lib.c - built twice for tests/workloads/park_work.c: as
 * libnccl-park.so (an NCCL-like proxy thread parked in a read) and as
 * libpython3-park.so (a Python-like thread that holds its global lock while
 * it reads). Only the library's name matters: gpubpf must never borrow a
 * thread with a frame in either.
 */
#include <unistd.h>

__attribute__((visibility("default"), noinline)) long park_read(int fd)
{
	char c;
	long n = read(fd, &c, 1);

	__asm__ volatile("" ::: "memory");	/* a frame of its own, not a tail call */
	return n;
}
