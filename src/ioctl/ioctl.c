// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl.c - GPU driver ioctls: source selection by probing, device
 * discovery, the decoder that turns GB_REC_IOCTL records into events, and
 * loading bpf/ioctl.bpf.c beside the main program (sharing its ring buffer,
 * pid filter and drop counter, as cupti_attach.c does).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "core/hmap.h"
#include "ioctl.h"
#include "core/util.h"

#define NV_MAJOR	195
#define DRM_MAJOR	226
#define KDEV(ma, mi)	(((uint32_t)(ma) << 20) | (uint32_t)(mi))
#define KMAJOR(d)	((d) >> 20)
#define KMINOR(d)	((d) & 0xfffff)
/* the first open-gpu-kernel-modules release: the layouts in ioctl_names.c */
#define NV_MIN_MAJOR	515

static const char *const fn_names[IOCTL_FN__COUNT] = {
	[IOCTL_FN_NV_UNLOCKED] = "nvidia_unlocked_ioctl", [IOCTL_FN_NV_IOCTL] = "nvidia_ioctl",
	[IOCTL_FN_UVM] = "uvm_unlocked_ioctl_entry", [IOCTL_FN_KFD] = "kfd_ioctl",
	[IOCTL_FN_AMDGPU] = "amdgpu_drm_ioctl",
};

const char *ioctl_fn_name(unsigned fn)
{
	return fn < IOCTL_FN__COUNT ? fn_names[fn] : "?";
}

const char *ioctl_source_name(unsigned src)
{
	static const char *const s[] = { "none", "kprobe", "fentry", "tracepoint" };

	return src < sizeof(s) / sizeof(s[0]) ? s[src] : "?";
}

const char *ioctl_kind_name(unsigned kind)
{
	static const char *const k[GB_IODEV__COUNT] = { "none", "nvidia", "uvm", "kfd", "drm" };

	return kind < GB_IODEV__COUNT ? k[kind] : "?";
}

static void fn_list(unsigned bits, char *buf, size_t n)
{
	unsigned i;
	size_t len = 0;

	buf[0] = 0;
	for (i = 0; i < IOCTL_FN__COUNT && len < n; i++)
		if (bits & (1u << i))
			len += snprintf(buf + len, n - len, "%s%s", len ? "," : "", fn_names[i]);
}

int ioctl_choose_source(const struct ioctl_caps *c, char *why, size_t n)
{
	char fns[160];

	if (c->user_devs) {
		snprintf(why, n, "--ioctl-dev devices are only seen by the syscall tracepoints");
		return GB_IOSRC_TRACEPOINT;
	}
	if (!c->funcs) {
		snprintf(why, n, "no GPU driver entry point in /proc/kallsyms (driver not loaded): "
			 "device-filtered syscall tracepoints");
		return GB_IOSRC_TRACEPOINT;
	}
	fn_list(c->funcs, fns, sizeof(fns));
	if (c->kprobe) {
		snprintf(why, n, "kprobes available; driver entry points %s", fns);
		return GB_IOSRC_KPROBE;
	}
	fn_list(c->btf_funcs, fns, sizeof(fns));
	if (c->btf_funcs && c->fentry_err == 0) {
		snprintf(why, n, "no kprobes in this kernel; fentry loads on %s", fns);
		return GB_IOSRC_FENTRY;
	}
	if (!c->btf_funcs)
		snprintf(why, n, "no kprobes in this kernel and no module BTF for the driver entry points: "
			 "device-filtered syscall tracepoints");
	else
		snprintf(why, n, "no kprobes in this kernel and fentry refused (%s): "
			 "device-filtered syscall tracepoints",
			 c->fentry_err < 0 ? strerror(-c->fentry_err) : "not tried");
	return GB_IOSRC_TRACEPOINT;
}

/* --- devices --- */

/* the major /proc/devices gives a character driver, or -1 */
static int proc_major(const char *name)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128], drv[64];
	bool chr = false;
	int major, found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character", 9))
			chr = true;
		else if (!strncmp(line, "Block", 5))
			chr = false;
		else if (chr && sscanf(line, "%d %63s", &major, drv) == 2 && !strcmp(drv, name))
			found = major;
	}
	fclose(f);
	return found;
}

static int kind_of_major(unsigned major)
{
	if (major == NV_MAJOR)
		return GB_IODEV_NVIDIA;
	if (major == DRM_MAJOR)
		return GB_IODEV_DRM;
	if ((int)major == proc_major("nvidia-uvm"))
		return GB_IODEV_UVM;
	if ((int)major == proc_major("kfd"))
		return GB_IODEV_KFD;
	return GB_IODEV_NONE;
}

static int kind_by_name(const char *s, size_t n)
{
	unsigned k;

	for (k = 1; k < GB_IODEV__COUNT; k++)
		if (strlen(ioctl_kind_name(k)) == n && !strncmp(s, ioctl_kind_name(k), n))
			return (int)k;
	return -1;
}

int ioctl_parse_dev(const char *spec, struct ioctl_dev *d, char *err, size_t n)
{
	char path[4096];
	const char *eq = strchr(spec, '='), *at = strchr(spec, '@');
	size_t plen = eq ? (size_t)(eq - spec) : at ? (size_t)(at - spec) : strlen(spec);
	unsigned ma, mi;
	struct stat st;
	int kind = -1;
	char c;

	memset(d, 0, sizeof(*d));
	if (!plen || plen >= sizeof(path) || (at && eq && at < eq))
		goto bad;
	memcpy(path, spec, plen);
	path[plen] = 0;
	if (eq) {
		size_t klen = at ? (size_t)(at - eq - 1) : strlen(eq + 1);

		kind = kind_by_name(eq + 1, klen);
		if (kind < 0) {
			snprintf(err, n, "--ioctl-dev %s: unknown device type: give =nvidia, =uvm, =kfd or =drm", spec);
			return -1;
		}
	}
	if (at && (strlen(at + 1) == 0 || strlen(at + 1) >= sizeof(d->version)))
		goto bad;
	if (at)
		snprintf(d->version, sizeof(d->version), "%s", at + 1);
	if (path[0] != '/' && sscanf(path, "%u:%u%c", &ma, &mi, &c) == 2) {
		if (ma > 0xfff || mi > 0xfffff)
			goto bad;
	} else if (stat(path, &st)) {
		snprintf(err, n, "--ioctl-dev %s: %s: give an existing device file or MAJOR:MINOR", path,
			 strerror(errno));
		return -1;
	} else if (!S_ISCHR(st.st_mode)) {
		snprintf(err, n, "--ioctl-dev %s: not a character device: give a device file such as /dev/nvidia0 or MAJOR:MINOR",
			 path);
		return -1;
	} else {
		ma = major(st.st_rdev);
		mi = minor(st.st_rdev);
	}
	if (kind < 0)
		kind = kind_of_major(ma);
	if (kind <= 0) {
		snprintf(err, n, "--ioctl-dev %s: major %u is no GPU driver's: say how to decode it with %s=nvidia (or =uvm, =kfd, =drm)",
			 spec, ma, path);
		return -1;
	}
	d->dev = KDEV(ma, mi);
	d->kind = (uint16_t)kind;
	d->user = true;
	snprintf(d->name, sizeof(d->name), "%.127s", path);
	return 0;
bad:
	snprintf(err, n, "bad --ioctl-dev '%s': give PATH or MAJOR:MINOR, optionally =nvidia|uvm|kfd|drm and @DRIVER_VERSION",
		 spec);
	return -1;
}

/* --- decoder --- */

struct ioctl_proc {
	uint64_t kfd_bytes;	/* live KFD allocations */
	uint64_t nv_vidmem;	/* live NV01_MEMORY_LOCAL_USER objects */
	struct hmap kfd;	/* handle -> size + 1 */
	struct hmap nv;		/* hObjectNew -> 1 */
	char comm[16];
};

struct ioctl_decoder {
	struct ioctl_dev devs[IOCTL_MAX_DEVS];
	unsigned ndevs;
	bool decodes[GB_IODEV__COUNT];
	char note[256];
	struct hmap procs;	/* pid -> struct ioctl_proc */
	struct hmap drm_amd;	/* kernel dev_t -> 1 amdgpu, 2 other */
};

struct ioctl_decoder *ioctl_decoder_new(void)
{
	return calloc(1, sizeof(struct ioctl_decoder));
}

int ioctl_decoder_add(struct ioctl_decoder *d, const struct ioctl_dev *dev)
{
	unsigned i;

	for (i = 0; i < d->ndevs; i++)
		if (d->devs[i].dev == dev->dev)
			return dev->user ? (d->devs[i] = *dev, 0) : 0;
	if (d->ndevs >= IOCTL_MAX_DEVS)
		return -ENOSPC;
	d->devs[d->ndevs++] = *dev;
	return 0;
}

static int add_major(struct ioctl_decoder *d, int major, unsigned kind, const char *name)
{
	struct ioctl_dev dev = { .dev = KDEV(major, GB_IOCTL_MINOR_ANY), .kind = (uint16_t)kind };

	if (major <= 0)
		return 0;
	snprintf(dev.name, sizeof(dev.name), "%s", name);
	return ioctl_decoder_add(d, &dev) ? 0 : 1;
}

int ioctl_decoder_discover(struct ioctl_decoder *d)
{
	int n = 0, m;

	/* 195 is NVIDIA's reserved major even before the driver loads */
	n += add_major(d, NV_MAJOR, GB_IODEV_NVIDIA, "nvidia");
	m = proc_major("nvidia-uvm");
	n += add_major(d, m, GB_IODEV_UVM, "nvidia-uvm");
	m = proc_major("kfd");
	n += add_major(d, m, GB_IODEV_KFD, "kfd");
	n += add_major(d, DRM_MAJOR, GB_IODEV_DRM, "dri");
	return n;
}

unsigned ioctl_decoder_count(const struct ioctl_decoder *d)
{
	return d->ndevs;
}

const struct ioctl_dev *ioctl_decoder_dev(const struct ioctl_decoder *d, unsigned i)
{
	return i < d->ndevs ? &d->devs[i] : NULL;
}

static bool nv_version_known(const char *v)
{
	unsigned major;

	return v && sscanf(v, "%u.", &major) == 1 && major >= NV_MIN_MAJOR && major < 1000;
}

static void read_nv_version(char *buf, size_t n)
{
	FILE *f = fopen("/sys/module/nvidia/version", "r");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

void ioctl_decoder_settle(struct ioctl_decoder *d, const char *sys_nv_version)
{
	char sysv[64] = "", what[96];
	const char *v = NULL, *src = "/sys/module/nvidia/version";
	unsigned i;

	if (sys_nv_version)
		snprintf(sysv, sizeof(sysv), "%s", sys_nv_version);
	else
		read_nv_version(sysv, sizeof(sysv));
	v = sysv[0] ? sysv : NULL;
	/* a stand-in's @VERSION speaks for the NVIDIA kinds */
	for (i = 0; i < d->ndevs; i++) {
		if (d->devs[i].user && d->devs[i].version[0] &&
		    (d->devs[i].kind == GB_IODEV_NVIDIA || d->devs[i].kind == GB_IODEV_UVM)) {
			v = d->devs[i].version;
			src = "--ioctl-dev @VERSION";
		}
	}
	if (!v) {
		snprintf(what, sizeof(what), "no NVIDIA driver loaded: open-gpu-kernel-modules %u+ layouts assumed",
			 NV_MIN_MAJOR);
		d->decodes[GB_IODEV_NVIDIA] = d->decodes[GB_IODEV_UVM] = true;
	} else if (nv_version_known(v)) {
		snprintf(what, sizeof(what), "NVIDIA %s (%s): layouts of %u+", v, src, NV_MIN_MAJOR);
		d->decodes[GB_IODEV_NVIDIA] = d->decodes[GB_IODEV_UVM] = true;
	} else {
		snprintf(what, sizeof(what), "NVIDIA %s (%s): unknown layout version, cmd only", v, src);
		d->decodes[GB_IODEV_NVIDIA] = d->decodes[GB_IODEV_UVM] = false;
	}
	d->decodes[GB_IODEV_KFD] = true;	/* uapi: stable */
	d->decodes[GB_IODEV_DRM] = false;	/* names only */
	snprintf(d->note, sizeof(d->note), "%s; kfd uapi 1.x layouts; drm names only", what);
}

bool ioctl_decoder_decodes(const struct ioctl_decoder *d, unsigned kind)
{
	return kind < GB_IODEV__COUNT && d->decodes[kind];
}

const char *ioctl_decoder_layout_note(const struct ioctl_decoder *d)
{
	return d->note;
}

int ioctl_decoder_layouts(const struct ioctl_decoder *d,
			  int (*fn)(void *ctx, uint32_t kind, uint32_t cmd, const struct gb_iolayout *l),
			  void *ctx)
{
	const struct ioctl_layout_desc *t;
	unsigned n, i, j;
	int count = 0, err;

	t = ioctl_layout_descs(&n);
	for (i = 0; i < n; i++) {
		struct gb_iolayout l = { .size = t[i].size, .decoder = t[i].decoder };

		if (!ioctl_decoder_decodes(d, t[i].kind))
			continue;
		for (j = 0; j < GB_IOCTL_NF; j++) {
			l.off[j] = t[i].f[j].name ? t[i].f[j].off : 0;
			l.len[j] = t[i].f[j].name ? t[i].f[j].len : 0;
		}
		if ((err = fn(ctx, t[i].kind, t[i].cmd, &l)))
			return err;
		count++;
	}
	return count;
}

/* the DRM node's driver is amdgpu: its driver-private numbers get amdgpu names */
static bool drm_is_amdgpu(struct ioctl_decoder *d, uint32_t dev)
{
	uintptr_t v = (uintptr_t)hmap_get(&d->drm_amd, dev);
	char path[128], link[256];
	ssize_t n;

	if (!v) {
		snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/driver", KMAJOR(dev), KMINOR(dev));
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		v = strstr(link, "/amdgpu") ? 1 : 2;
		hmap_put(&d->drm_amd, dev, (void *)v);
	}
	return v == 1;
}

static const char *dev_name(struct ioctl_decoder *d, const struct gb_ioctl_rec *r, char *buf, size_t n)
{
	unsigned mi = KMINOR(r->dev);

	if (r->dev_id < d->ndevs && d->devs[r->dev_id].user)
		return d->devs[r->dev_id].name;
	switch (r->dev_kind) {
	case GB_IODEV_NVIDIA:
		if (mi == 255)
			return "nvidiactl";
		if (mi == 254)
			return "nvidia-modeset";
		snprintf(buf, n, "nvidia%u", mi);
		return buf;
	case GB_IODEV_UVM:
		return mi == 1 ? "nvidia-uvm-tools" : "nvidia-uvm";
	case GB_IODEV_KFD:
		return "kfd";
	case GB_IODEV_DRM:
		snprintf(buf, n, mi >= 128 ? "renderD%u" : "card%u", mi);
		return buf;
	default:
		snprintf(buf, n, "%u:%u", KMAJOR(r->dev), mi);
		return buf;
	}
}

static struct ioctl_proc *get_proc(struct ioctl_decoder *d, const struct gb_ioctl_rec *r)
{
	struct ioctl_proc *p = hmap_get(&d->procs, r->r.pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || hmap_put(&d->procs, r->r.pid, p)) {
		free(p);
		return NULL;
	}
	memcpy(p->comm, r->r.comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
	return p;
}

/* live device memory from successful alloc/free calls: best-effort by design */
static void devmem(struct ioctl_decoder *d, const struct gb_ioctl_rec *r, struct gb_event *ev)
{
	struct ioctl_proc *p;
	uintptr_t v;

	if (r->r.ret != 0)
		goto out;
	switch (r->decoder) {
	case IOCTL_DEC_KFD_ALLOC:
		if (!(p = get_proc(d, r)))
			return;
		if (!hmap_get(&p->kfd, r->w[2]) && !hmap_put(&p->kfd, r->w[2], (void *)(uintptr_t)(r->w[1] + 1)))
			p->kfd_bytes += r->w[1];
		ev->aux[1] = p->kfd_bytes;
		return;
	case IOCTL_DEC_KFD_FREE:
		if (!(p = get_proc(d, r)))
			return;
		v = (uintptr_t)hmap_del(&p->kfd, r->w[0]);
		if (v) {
			ev->bytes = v - 1;
			ev->flags |= GB_EF_BYTES;
			p->kfd_bytes -= v - 1;
		}
		ev->aux[1] = p->kfd_bytes;
		return;
	case IOCTL_DEC_NV_ALLOC21:
	case IOCTL_DEC_NV_ALLOC64:
		/* status at w[5]: RM's own result */
		if (r->w[3] != 0x40 || r->w[5] != 0 || !(p = get_proc(d, r)))
			return;
		if (!hmap_get(&p->nv, r->w[2]) && !hmap_put(&p->nv, r->w[2], (void *)1))
			p->nv_vidmem++;
		return;
	case IOCTL_DEC_NV_FREE:
		if (r->w[3] != 0 || !(p = hmap_get(&d->procs, r->r.pid)))
			return;
		if (hmap_del(&p->nv, r->w[2]))
			p->nv_vidmem--;
		return;
	}
out:
	if (r->decoder == IOCTL_DEC_KFD_ALLOC || r->decoder == IOCTL_DEC_KFD_FREE) {
		p = hmap_get(&d->procs, r->r.pid);
		ev->aux[1] = p ? p->kfd_bytes : 0;
	}
}

int ioctl_decoder_event(struct ioctl_decoder *d, const void *data, size_t size,
			struct intern *strs, struct gb_event *ev)
{
	const struct gb_ioctl_rec *r = data;
	const struct ioctl_layout_desc *l;
	char buf[32];

	memset(ev, 0, sizeof(*ev));
	if (size < sizeof(*r) || r->r.kind != GB_REC_IOCTL || r->dev_kind >= GB_IODEV__COUNT)
		return -EINVAL;
	gb_event_from_hdr(ev, &r->r);
	ev->type = GB_T_ioctl;
	ev->api = GB_API_IOCTL;
	ev->handle = r->cmd;
	ev->grid[0] = r->dev_kind;
	ev->grid[1] = r->source;
	ev->grid[2] = r->fd >= 0 ? (uint32_t)r->fd + 1 : 0;
	ev->comm = intern_strn(strs, r->r.comm, strnlen(r->r.comm, sizeof(r->r.comm)));
	ev->name = intern_str(strs, ioctl_cmd_name(r->dev_kind, r->cmd,
						   r->dev_kind == GB_IODEV_DRM && drm_is_amdgpu(d, r->dev)));
	ev->detail = intern_str(strs, dev_name(d, r, buf, sizeof(buf)));
	l = r->decoder ? ioctl_layout_by_decoder(r->decoder) : NULL;
	if (!l || (r->r.flags & GB_RF_XFAULT)) {
		ev->flags |= GB_EF_XFAULT;
		return 0;
	}
	ev->src = r->decoder;
	ioctl_pack_fields(l, r->w, ev);
	devmem(d, r, ev);
	return 0;
}

void ioctl_decoder_devmem(const struct ioctl_decoder *d, char *buf, size_t n)
{
	size_t i = 0, len = 0;
	uint64_t k;
	void *v;

	buf[0] = 0;
	while (hmap_next(&d->procs, &i, &k, &v) && len + 1 < n) {
		const struct ioctl_proc *p = v;

		len += snprintf(buf + len, n - len, "%spid %" PRIu64 " (%s): kfd %" PRIu64
				" B live, nvidia %" PRIu64 " vidmem objects live",
				len ? "; " : "", k, p->comm, p->kfd_bytes, p->nv_vidmem);
	}
	if (len && len + 1 < n)
		snprintf(buf + len, n - len, " (best-effort: from alloc/free ioctls seen while recording)");
}

void ioctl_decoder_free(struct ioctl_decoder *d)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	if (!d)
		return;
	while (hmap_next(&d->procs, &i, &k, &v)) {
		struct ioctl_proc *p = v;

		hmap_free(&p->kfd);
		hmap_free(&p->nv);
		free(p);
	}
	hmap_free(&d->procs);
	hmap_free(&d->drm_amd);
	free(d);
}
