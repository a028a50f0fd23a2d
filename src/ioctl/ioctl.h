/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ioctl.h - GPU driver ioctls: choose a source (kprobe, fentry or the
 * syscall tracepoints) by probing, find the GPU device files, load
 * bpf/ioctl.bpf.c beside the main program, and turn its records into
 * events with names and decoded argument fields.
 */
#ifndef GB_IOCTL_H
#define GB_IOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

#define IOCTL_MAX_DEVS		64
#define IOCTL_MAX_USER_DEVS	16

/* --- source selection (pure: unit-tested with mocked probe results) --- */

/* the driver entry points, as bits of ioctl_caps.funcs / btf_funcs */
enum ioctl_fn {
	IOCTL_FN_NV_UNLOCKED = 0,	/* nvidia_unlocked_ioctl(file, cmd, arg) */
	IOCTL_FN_NV_IOCTL,		/* nvidia_ioctl(inode, file, cmd, arg): older drivers */
	IOCTL_FN_UVM,			/* uvm_unlocked_ioctl_entry */
	IOCTL_FN_KFD,			/* kfd_ioctl */
	IOCTL_FN_AMDGPU,		/* amdgpu_drm_ioctl */
	IOCTL_FN__COUNT,
};

const char *ioctl_fn_name(unsigned fn);

struct ioctl_caps {
	bool kprobe;		/* the kernel can make kprobes (PMU or kprobe_events) */
	unsigned funcs;		/* 1 << IOCTL_FN_*: in /proc/kallsyms */
	unsigned btf_funcs;	/* 1 << IOCTL_FN_*: a FUNC in the module's BTF */
	int fentry_err;		/* trial fentry load: 0 ok, -errno refused, 1 not tried */
	bool user_devs;		/* --ioctl-dev given: entry points cannot see those */
};

/* GB_IOSRC_*, and a one-line reason in why */
int ioctl_choose_source(const struct ioctl_caps *c, char *why, size_t n);
const char *ioctl_source_name(unsigned src);	/* "kprobe", "fentry", "tracepoint" */

/* --- devices --- */

struct ioctl_dev {
	uint32_t dev;		/* kernel dev_t: major << 20 | minor (GB_IOCTL_MINOR_ANY: all) */
	uint16_t kind;		/* enum gb_iodev */
	bool user;		/* from --ioctl-dev: named by its path */
	char name[128];
	char version[32];	/* driver version to decode with ("" = the system's) */
};

/*
 * Parse --ioctl-dev PATH|MAJOR:MINOR[=nvidia|uvm|kfd|drm][@VERSION].
 * Without =KIND the kind comes from the major (195 nvidia, 226 drm, the
 * nvidia-uvm and kfd majors of /proc/devices). 0, or -1 with a one-line
 * message in err.
 */
int ioctl_parse_dev(const char *spec, struct ioctl_dev *d, char *err, size_t n);
const char *ioctl_kind_name(unsigned kind);	/* "nvidia", "uvm", "kfd", "drm" */

/* --- decoding (no BPF: unit-testable with fake records) --- */

struct ioctl_decoder;

struct ioctl_decoder *ioctl_decoder_new(void);
/* Add a watched device; its index is the id BPF reports. -ENOSPC when full. */
int ioctl_decoder_add(struct ioctl_decoder *d, const struct ioctl_dev *dev);
/* Add the GPU devices of this system (/proc/devices); returns how many */
int ioctl_decoder_discover(struct ioctl_decoder *d);
unsigned ioctl_decoder_count(const struct ioctl_decoder *d);
const struct ioctl_dev *ioctl_decoder_dev(const struct ioctl_decoder *d, unsigned i);
/*
 * Settle which layouts decode which kind: NVIDIA/UVM by driver version
 * (/sys/module/nvidia/version, or a stand-in's @VERSION), KFD by the uapi.
 * sys_nv_version: the system's (NULL: read it). A one-line summary is
 * kept for the trace notes.
 */
void ioctl_decoder_settle(struct ioctl_decoder *d, const char *sys_nv_version);
bool ioctl_decoder_decodes(const struct ioctl_decoder *d, unsigned kind);
const char *ioctl_decoder_layout_note(const struct ioctl_decoder *d);
/*
 * Layout entries for the BPF "layouts" map of the kinds that decode:
 * calls fn once per (kind, cmd). Returns the count or fn's error.
 */
int ioctl_decoder_layouts(const struct ioctl_decoder *d,
			  int (*fn)(void *ctx, uint32_t kind, uint32_t cmd, const struct gb_iolayout *l),
			  void *ctx);
/*
 * A GB_REC_IOCTL record to an event (strings interned in strs). Updates
 * the per-process device-memory counter. 0, or -EINVAL for a bad record.
 */
struct intern;
int ioctl_decoder_event(struct ioctl_decoder *d, const void *data, size_t size,
			struct intern *strs, struct gb_event *ev);
/* "pid 42 (comm): kfd 4096 B live, nvidia 2 vidmem objects live; ..." or "" */
void ioctl_decoder_devmem(const struct ioctl_decoder *d, char *buf, size_t n);
void ioctl_decoder_free(struct ioctl_decoder *d);

/* --- names and fields (ioctl_names.c) --- */

/* the ioctl's name for a device kind (drm: amdgpu names when amdgpu) or NULL */
const char *ioctl_cmd_name(unsigned kind, uint32_t cmd, bool amdgpu);
/* an RM control command's or class's name, or NULL */
const char *ioctl_nv_ctrl_name(uint32_t ctrl);
const char *ioctl_nv_class_name(uint32_t cls);
/* the decoded fields of an ioctl event: text (" cmd=0x... k=v") appended to b,
 * or members of the JSON object the writer has open */
struct gb_buf;
struct gb_json;
void ioctl_event_text(struct gb_buf *b, const struct gb_event *ev);
void ioctl_event_json(struct gb_json *j, const struct gb_event *ev);

/* --- attach (needs BPF) --- */

struct ioctl_attach;

struct ioctl_opts {
	const char *devs[IOCTL_MAX_USER_DEVS];	/* --ioctl-dev specs */
	unsigned ndevs;
	bool filter;		/* only tgids in the targets map */
	int ringbuf_fd, targets_fd, drops_fd;	/* the main program's maps */
};

/*
 * Probe, choose the source, load and attach. 0, or -errno with a one-line
 * message naming the cause and the fix in err.
 */
int ioctl_attach(const struct ioctl_opts *o, struct ioctl_attach **out, char *err, size_t errlen);
unsigned ioctl_attach_source(const struct ioctl_attach *a);
const char *ioctl_attach_reason(const struct ioctl_attach *a);
struct ioctl_decoder *ioctl_attach_decoder(struct ioctl_attach *a);
void ioctl_detach(struct ioctl_attach *a);	/* NULL is fine */

/* --- layout tables (ioctl_names.c), shared by ioctl.c and the tests --- */

/* where a decoded field lives in struct gb_event */
enum ioctl_slot {
	IOS_NONE = 0,
	IOS_ARG, IOS_ARG_LO, IOS_ARG_HI,
	IOS_AUX0, IOS_AUX0_LO, IOS_AUX0_HI,
	IOS_AUX1, IOS_AUX1_LO, IOS_AUX1_HI,
	IOS_BYTES, IOS_PTR, IOS_DEVICE,
};

struct ioctl_field {
	const char *name;	/* NULL: unused */
	uint8_t off, len;	/* in the argument struct */
	uint8_t slot;		/* enum ioctl_slot */
	bool hex;		/* print as hex in text */
};

/*
 * One decodable (kind, cmd). decoder ids are stored in traces (gb_event.src):
 * append only, never renumber.
 */
struct ioctl_layout_desc {
	uint16_t decoder;
	uint16_t kind;		/* enum gb_iodev */
	uint32_t cmd;
	uint16_t size;		/* sizeof the struct */
	struct ioctl_field f[GB_IOCTL_NF];
};

const struct ioctl_layout_desc *ioctl_layout_descs(unsigned *n);
const struct ioctl_layout_desc *ioctl_layout_by_decoder(unsigned id);
/* decoded words (layout order) into the event's slots */
void ioctl_pack_fields(const struct ioctl_layout_desc *l, const __u64 *w, struct gb_event *ev);
uint64_t ioctl_field_value(const struct ioctl_field *f, const struct gb_event *ev);

/* decoder ids with meaning to the device-memory counter */
enum {
	IOCTL_DEC_NV_ALLOC21 = 1, IOCTL_DEC_NV_ALLOC64, IOCTL_DEC_NV_CONTROL, IOCTL_DEC_NV_FREE,
	IOCTL_DEC_NV_MAP_MEMORY, IOCTL_DEC_NV_XFER, IOCTL_DEC_UVM_FREE, IOCTL_DEC_UVM_MIGRATE,
	IOCTL_DEC_UVM_MAP_EXTERNAL, IOCTL_DEC_KFD_ALLOC, IOCTL_DEC_KFD_FREE, IOCTL_DEC_KFD_MAP,
	IOCTL_DEC_KFD_UNMAP, IOCTL_DEC_KFD_CREATE_QUEUE,
};

#endif
