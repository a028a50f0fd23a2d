/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record.h - options of gpubpf record, shared with the parts it drives */
#ifndef GB_RECORD_H
#define GB_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "collect/stack_record.h"

#define RECORD_MAX_PIDS 256
#define RECORD_MAX_LIBS 64

struct record_opts {
	bool all;
	pid_t pids[RECORD_MAX_PIDS];
	unsigned npids;
	char **cmd;
	const char *output;
	uint64_t duration_ns;
	uint64_t ring_size;
	const char *libs[RECORD_MAX_LIBS];
	unsigned nlibs;
	bool lean;
	struct stack_opts stack;	/* --stack, --python */
	const char *ready_file;
	const char *perfetto;
	const char *cupti_lib;
	const char *xray_dir;
	bool cupti_inject;
	bool ioctl;		/* --ioctl: GPU driver ioctls (user/ioctl.c) */
	const char *ioctl_devs[16];	/* --ioctl-dev specs */
	unsigned nioctl_devs;
	int child_status;
};

int record_ensure_tracefs(void);
/* one-line error and -1 if a PID does not exist */
int record_check_pids(const pid_t *pids, unsigned n);
/* one-line error and -1 when BPF cannot work here (shared with top) */
int record_check_privileges(void);
int record_check_btf(void);
const char *cupti_default_lib(void);

/* provided by the exporters when built in */
int gb_export_file(const char *sbt_path, const char *format, const char *out_path,
		   char *err, size_t errlen) __attribute__((weak));
#endif
