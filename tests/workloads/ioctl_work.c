// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl_work - GPU-driver-shaped ioctls on stand-in devices, for the ioctl
 * tracer's tests (tests/integ/ioctl_*.sh) and benchmark. The argument
 * structs are laid out here from the public headers on purpose, not from
 * gpubpf's tables, so the test compares two independent readings.
 *
 *   ioctl_work calls NVDEV KFDDEV   the call sequence below (ioctls fail with
 *                                   ENOTTY on /dev/null-like devices: fine)
 *   ioctl_work bench N PATH         N TCGETS ioctls on PATH; prints ns per call
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* nvos.h (open-gpu-kernel-modules) */
struct nvos21 {
	uint32_t hRoot, hObjectParent, hObjectNew, hClass;
	uint64_t pAllocParms;
	uint32_t paramsSize, status;
};

struct nvos54 {
	uint32_t hClient, hObject, cmd, flags;
	uint64_t params;
	uint32_t paramsSize, status;
};

/* linux/kfd_ioctl.h */
struct kfd_alloc {
	uint64_t va_addr, size, handle, mmap_offset;
	uint32_t gpu_id, flags;
};

#define NV_IOWR(nr, T)	_IOWR('F', nr, T)
#define NV_RM_ALLOC	NV_IOWR(0x2b, struct nvos21)
#define NV_RM_CONTROL	NV_IOWR(0x2a, struct nvos54)
#define KFD_ALLOC	_IOWR('K', 0x16, struct kfd_alloc)

static int open_or_die(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd < 0) {
		fprintf(stderr, "ioctl_work: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static int calls(const char *nvdev, const char *kfddev)
{
	struct nvos21 alloc = { .hRoot = 0xc1d00001, .hObjectParent = 0xc1d00002,
				.hObjectNew = 0xcafe0001, .hClass = 0x40, .paramsSize = 16 };
	struct nvos54 ctl = { .hClient = 0xc1d00001, .hObject = 0x5c000001,
			      .cmd = 0x20800102, .paramsSize = 0x88 };
	struct kfd_alloc ka = { .va_addr = 0x7f0000000000ull, .size = 0x200000,
				.gpu_id = 0x1234, .flags = 0x2 };
	int nv = open_or_die(nvdev), kfd = open_or_die(kfddev), zero = open_or_die("/dev/zero");
	long page = sysconf(_SC_PAGESIZE);
	int pfd[2];
	char *gone, *edge;

	if (pipe(pfd))
		return 1;
	/* the same calls on descriptors that are not watched: never recorded */
	ioctl(zero, NV_RM_ALLOC, &alloc);
	ioctl(pfd[0], NV_RM_CONTROL, &ctl);
	ioctl(zero, KFD_ALLOC, &ka);
	/* 1-3: decoded */
	ioctl(nv, NV_RM_ALLOC, &alloc);
	ioctl(nv, NV_RM_CONTROL, &ctl);
	ioctl(kfd, KFD_ALLOC, &ka);
	/* 4: a cmd no table knows */
	ioctl(nv, _IOWR('F', 0x7e, uint64_t), &alloc);
	/* 5: NULL argument */
	ioctl(nv, NV_RM_CONTROL, NULL);
	/* 6: an unmapped argument */
	gone = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED)
		return 1;
	munmap(gone, page);
	ioctl(nv, NV_RM_CONTROL, gone);
	/* 7: a known escape with a struct too short for its layout */
	ioctl(nv, _IOWR('F', 0x2b, uint64_t), &alloc);
	/* 8: a struct running off the end of its mapping */
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge == MAP_FAILED)
		return 1;
	munmap(edge + page, page);
	memcpy(edge + page - 8, &ctl, 8);
	ioctl(nv, NV_RM_CONTROL, edge + page - 8);
	printf("%d\n", (int)getpid());
	return 0;
}

static int bench(long n, const char *path)
{
	struct termios t;
	struct timespec a, b;
	int fd = open_or_die(path);
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		ioctl(fd, TCGETS, &t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "calls"))
		return calls(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "bench") && atol(argv[2]) > 0)
		return bench(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: ioctl_work calls NVDEV KFDDEV | ioctl_work bench N PATH\n");
	return 2;
}
