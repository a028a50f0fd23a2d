/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* recorder.h - gpubpf record's options, and the recording they drive (recorder.c) */
#ifndef GB_RECORDER_H
#define GB_RECORDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "incident/flight.h"
#include "collect/stack_record.h"

#define RECORD_MAX_PIDS 256
#define RECORD_MAX_LIBS 64
#define RECORD_RING_DEF		(8ull << 20)	/* default --ring-size */
#define RECORD_RING_DWARF	(64ull << 20)	/* default --ring-size with --stack dwarf */

/* default mode: one launch in this many (per CPU) also gets its return probe */
#define RECORD_LAUNCH_SAMPLE	64	/* the launch.returns note says it in words; a power of two (the draw is a mask) */
_Static_assert((RECORD_LAUNCH_SAMPLE & (RECORD_LAUNCH_SAMPLE - 1)) == 0, "RECORD_LAUNCH_SAMPLE: a power of two");

struct record_opts {
	bool all;
	pid_t pids[RECORD_MAX_PIDS];
	unsigned npids;
	bool children;		/* -p --children: their descendants too, each with its own links */
	const char *ack_dir;	/* --ack-dir: DIR/PID once a followed process is linked */
	char **cmd;
	bool cmd_ended;		/* out: -- CMD ended while recording or before record returned */
	int cmd_wstatus;	/* out: its wait status */
	const char *output;
	uint64_t duration_ns;
	uint64_t ring_size;	/* RECORD_RING_DEF, RECORD_RING_DWARF with --stack dwarf */
	const char *libs[RECORD_MAX_LIBS];
	unsigned nlibs;
	bool lean;		/* --lean: launches in 64-byte records from registers */
	bool launch_rets;	/* --launch-returns */
	unsigned no_oplibs;	/* library kinds --libs / --no-libs leave out (LIB_MASK_OPLIBS bits) */
	struct stack_opts stack;	/* --stack, --python */
	bool no_symbols;	/* --no-symbols: the trace carries no frame names */
	const char *ready_file;
	const char *perfetto;
	const char *cupti_lib;
	const char *xray_dir;
	bool cupti_inject;
	bool ioctl;		/* --ioctl: GPU driver ioctls (src/ioctl/) */
	const char *ioctl_devs[16];	/* --ioctl-dev specs */
	unsigned nioctl_devs;
	/* --flight SECS: keep the last SECS in memory, dump on a trigger (flight.h) */
	uint64_t flight_ns;
	uint64_t flight_mem;		/* --flight-mem (default 64M) */
	bool trigger_error;		/* --trigger-on-error */
	int error_codes[32];		/* the codes it triggers on */
	unsigned nerror_codes;
	uint64_t trigger_stuck_ns;	/* --trigger-stuck SECS, 0 = off */
};



/*
 * Record until Ctrl-C, -d or the command's end (argc/argv go into the
 * trace's metadata). 0, or 1 after a one-line error; what was recorded
 * before an error stays readable.
 */
int recorder_run(struct record_opts *o, int argc, char **argv);

/*
 * -p: the calls the targets are blocked in now, begun before the probes
 * were attached (attached.c): one GB_EF_ATTACHED event each, with its
 * stack when stacks are on, through the collector. Returns how many.
 */
struct collector;
unsigned recorder_blocked_at_attach(struct collector *c, const pid_t *pids, unsigned npids);
#endif
