// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl.bpf.c - GPU driver ioctls. Three sources of the same record, one
 * chosen at run time by src/ioctl/ioctl_attach.c (the others are never loaded):
 *   kprobe/kretprobe on the driver entry points (nvidia_unlocked_ioctl,
 *     uvm_unlocked_ioctl_entry, kfd_ioctl, amdgpu_drm_ioctl ...),
 *   fentry/fexit on the same (one program pair per driver: a tracing
 *     program is bound to its target at load),
 *   syscalls:sys_{enter,exit}_ioctl, which sees every ioctl of every
 *     process: the descriptor's inode must be a watched character device
 *     (fd -> struct file -> f_inode->i_rdev, looked up in "watch").
 * The argument struct is read at return, when the driver has written its
 * outputs, field by field as the "layouts" map says (user space fills it
 * from version-keyed tables). Records go to the main program's ring buffer,
 * pid filter and drop counter: user space reuses those maps' fds before
 * load, as for cupti.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpubpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define S_IFMT_		0170000
#define S_IFCHR_	0020000
#define IOC_SIZE(cmd)	(((cmd) >> 16) & 0x3fff)
#define DEV_MAJOR(d)	((d) >> 20)

#include "common.bpf.h"

/* watched devices: exact dev_t, or major << 20 | GB_IOCTL_MINOR_ANY */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct gb_iowatch);
} watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct gb_iolayout_key);
	__type(value, struct gb_iolayout);
} layouts SEC(".maps");

struct pending {
	__u64 ts;
	__u64 arg;
	__u32 cmd;
	__s32 fd;
	__u32 dev;
	__u16 kind;
	__u16 id;
	__u16 source;
};

/* ioctls between entry and return, by thread; LRU: a killed thread cannot leak */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pending);
} inflight SEC(".maps");

/* the watch entry of a file's device; NULL if it is not a watched char device */
static __always_inline struct gb_iowatch *watched(struct file *f, __u32 *dev)
{
	struct inode *ino = BPF_CORE_READ(f, f_inode);
	struct gb_iowatch *w;
	__u32 key;

	if (!ino || (BPF_CORE_READ(ino, i_mode) & S_IFMT_) != S_IFCHR_)
		return NULL;
	*dev = BPF_CORE_READ(ino, i_rdev);
	w = bpf_map_lookup_elem(&watch, dev);
	if (w)
		return w;
	key = (DEV_MAJOR(*dev) << 20) | GB_IOCTL_MINOR_ANY;
	return bpf_map_lookup_elem(&watch, &key);
}

static __always_inline void begin(__u32 tid, struct pending *p)
{
	p->ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&inflight, &tid, p, BPF_ANY);
}

static __always_inline void begin_file(struct file *f, __u32 cmd, __u64 arg, __u16 kind,
				       __u16 source)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending p = { .arg = arg, .cmd = cmd, .fd = -1, .kind = kind,
			     .id = 0xffff, .source = source };
	struct gb_iowatch *w;

	if (!traced(id >> 32))
		return;
	/* the entry point knows its driver; the watch map only names the device */
	w = watched(f, &p.dev);
	if (w) {
		p.kind = w->dev_kind;
		p.id = w->id;
	}
	begin((__u32)id, &p);
}

static __always_inline int read_field(__u64 *dst, __u8 len, __u64 at)
{
	switch (len) {
	case 1: return bpf_probe_read_user(dst, 1, (void *)at);
	case 2: return bpf_probe_read_user(dst, 2, (void *)at);
	case 4: return bpf_probe_read_user(dst, 4, (void *)at);
	case 8: return bpf_probe_read_user(dst, 8, (void *)at);
	default: return 0;
	}
}

/* fields of the argument struct as its layout says; GB_RF_XFAULT if none */
static __always_inline void decode(struct gb_ioctl_rec *r)
{
	struct gb_iolayout_key k = { .dev_kind = r->dev_kind, .cmd = r->cmd };
	struct gb_iolayout *l = bpf_map_lookup_elem(&layouts, &k);
	int i;

	if (!l || !r->arg)
		goto undecoded;
	/* UVM numbers carry no size bits; the others must be large enough */
	if (r->dev_kind != GB_IODEV_UVM && IOC_SIZE(r->cmd) < l->size)
		goto undecoded;
#pragma unroll
	for (i = 0; i < GB_IOCTL_NF; i++) {
		if (read_field(&r->w[i], l->len[i], r->arg + l->off[i]))
			goto undecoded;
	}
	r->decoder = l->decoder;
	return;
undecoded:
	__builtin_memset(r->w, 0, sizeof(r->w));
	r->r.flags |= GB_RF_XFAULT;
}

static __always_inline void finish(long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tid = t->pid;
	struct gb_ioctl_rec *r;
	struct pending *p;

	p = bpf_map_lookup_elem(&inflight, &tid);
	if (!p)
		return;
	r = gb_reserve(sizeof(*r), GB_DROP_CALL);
	if (!r) {
		bpf_map_delete_elem(&inflight, &tid);
		return;
	}
	/* the header as of the return, everything after it zeroed, then the
	 * call's own start (the memset makes the header's zero stores dead) */
	gb_fill_hdr(&r->r, t, GB_REC_IOCTL, GB_T_ioctl);
	__builtin_memset(&r->r.a, 0, sizeof(*r) - offsetof(struct gb_ioctl_rec, r.a));
	r->r.dur_ns = r->r.ts_ns - p->ts;
	r->r.ts_ns = p->ts;
	r->r.ret = (__s32)ret;
	r->r.flags = GB_RF_RET;
	r->arg = p->arg;
	r->cmd = p->cmd;
	r->fd = p->fd;
	r->dev = p->dev;
	r->dev_kind = p->kind;
	r->dev_id = p->id;
	r->source = p->source;
	bpf_map_delete_elem(&inflight, &tid);
	decode(r);
	bpf_ringbuf_submit(r, rb_wake());
}

/* --- tracepoint source: every ioctl, filtered here by device --- */

SEC("tp/syscalls/sys_enter_ioctl")
int gb_ioctl_tp_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct pending p = { .source = GB_IOSRC_TRACEPOINT };
	unsigned int fd = (unsigned int)ctx->args[0];
	struct gb_iowatch *w;
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;

	if (!traced(id >> 32))
		return 0;
	fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	w = watched(f, &p.dev);
	if (!w)
		return 0;
	p.kind = w->dev_kind;
	p.id = w->id;
	p.fd = (__s32)fd;
	p.cmd = (__u32)ctx->args[1];
	p.arg = ctx->args[2];
	begin((__u32)id, &p);
	return 0;
}

SEC("tp/syscalls/sys_exit_ioctl")
int gb_ioctl_tp_exit(struct trace_event_raw_sys_exit *ctx)
{
	finish(ctx->ret);
	return 0;
}

/* --- kprobe source: the attach cookie is the device kind --- */

SEC("kprobe")
int BPF_KPROBE(gb_ioctl_kp, struct file *f, unsigned int cmd, unsigned long arg)
{
	begin_file(f, cmd, arg, (__u16)bpf_get_attach_cookie(ctx), GB_IOSRC_KPROBE);
	return 0;
}

/* nvidia_ioctl(struct inode *, struct file *, cmd, arg) of older drivers */
SEC("kprobe")
int BPF_KPROBE(gb_ioctl_kp4, struct inode *ino, struct file *f, unsigned int cmd, unsigned long arg)
{
	begin_file(f, cmd, arg, GB_IODEV_NVIDIA, GB_IOSRC_KPROBE);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(gb_ioctl_krp, long ret)
{
	finish(ret);
	return 0;
}

/* --- fentry source: one pair per driver entry point, target set before load --- */

#define FENTRY_PAIR(name, kind)							\
SEC("fentry")									\
int BPF_PROG(gb_ioctl_fe_##name, struct file *f, unsigned int cmd, unsigned long arg) \
{										\
	begin_file(f, cmd, arg, kind, GB_IOSRC_FENTRY);				\
	return 0;								\
}										\
SEC("fexit")									\
int BPF_PROG(gb_ioctl_fx_##name, struct file *f, unsigned int cmd, unsigned long arg, long ret) \
{										\
	finish(ret);								\
	return 0;								\
}

FENTRY_PAIR(nvidia, GB_IODEV_NVIDIA)
FENTRY_PAIR(uvm, GB_IODEV_UVM)
FENTRY_PAIR(kfd, GB_IODEV_KFD)
FENTRY_PAIR(drm, GB_IODEV_DRM)
