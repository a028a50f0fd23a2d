// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl_attach.c - probe what this kernel offers, choose the ioctl source
 * (kprobe > fentry > syscall tracepoints), load bpf/ioctl.bpf.c with only
 * that source's programs (bpf_program__set_autoload), sharing the main
 * program's ring buffer, pid filter and drop counter, fill its watch and
 * layout maps, and attach.
 */
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "ioctl.h"
#include "ioctl.skel.h"
#include "host/bpfmaps.h"
#include "core/util.h"

#define MAX_LINKS	(2 * IOCTL_FN__COUNT + 2)

struct ioctl_attach {
	struct ioctl_bpf *skel;
	struct ioctl_decoder *dec;
	struct bpf_link *links[MAX_LINKS];
	unsigned nlinks;
	unsigned source;
	char why[320];
};

static const uint16_t fn_kind[IOCTL_FN__COUNT] = {
	[IOCTL_FN_NV_UNLOCKED] = GB_IODEV_NVIDIA, [IOCTL_FN_NV_IOCTL] = GB_IODEV_NVIDIA,
	[IOCTL_FN_UVM] = GB_IODEV_UVM, [IOCTL_FN_KFD] = GB_IODEV_KFD,
	[IOCTL_FN_AMDGPU] = GB_IODEV_DRM,
};

/* the modules whose BTF may describe the entry points (or vmlinux: built in) */
static const char *const fn_module[IOCTL_FN__COUNT] = {
	[IOCTL_FN_NV_UNLOCKED] = "nvidia", [IOCTL_FN_NV_IOCTL] = "nvidia",
	[IOCTL_FN_UVM] = "nvidia_uvm", [IOCTL_FN_KFD] = "amdgpu", [IOCTL_FN_AMDGPU] = "amdgpu",
};

static bool have_kprobes(void)
{
	return !faccessat(AT_FDCWD, "/sys/bus/event_source/devices/kprobe/type", F_OK, AT_EACCESS) ||
	       !faccessat(AT_FDCWD, "/sys/kernel/tracing/kprobe_events", F_OK, AT_EACCESS) ||
	       !faccessat(AT_FDCWD, "/sys/kernel/debug/tracing/kprobe_events", F_OK, AT_EACCESS);
}

/* which entry points /proc/kallsyms has ("addr t name\t[module]") */
static unsigned kallsyms_funcs(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256];
	unsigned bits = 0, i;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %255s", sym) != 1)
			continue;
		for (i = 0; i < IOCTL_FN__COUNT; i++)
			if (!strcmp(sym, ioctl_fn_name(i)))
				bits |= 1u << i;
	}
	fclose(f);
	/* nvidia_unlocked_ioctl calls nvidia_ioctl: one of them, never both */
	if (bits & (1u << IOCTL_FN_NV_UNLOCKED))
		bits &= ~(1u << IOCTL_FN_NV_IOCTL);
	return bits;
}

static unsigned btf_funcs(unsigned present)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	unsigned bits = 0, i;
	char path[128];

	if (!vmlinux)
		return 0;
	for (i = 0; i < IOCTL_FN__COUNT; i++) {
		struct btf *mod;

		if (!(present & (1u << i)) || i == IOCTL_FN_NV_IOCTL)	/* fentry pairs are 3-arg */
			continue;
		if (btf__find_by_name_kind(vmlinux, ioctl_fn_name(i), BTF_KIND_FUNC) > 0) {
			bits |= 1u << i;
			continue;
		}
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", fn_module[i]);
		mod = btf__parse_split(path, vmlinux);
		if (!libbpf_get_error(mod) && btf__find_by_name_kind(mod, ioctl_fn_name(i), BTF_KIND_FUNC) > 0)
			bits |= 1u << i;
		if (!libbpf_get_error(mod))
			btf__free(mod);
	}
	btf__free(vmlinux);
	return bits;
}

static struct bpf_program *fe_prog(struct ioctl_bpf *s, unsigned fn, bool exit)
{
	switch (fn_kind[fn]) {
	case GB_IODEV_NVIDIA: return exit ? s->progs.gb_ioctl_fx_nvidia : s->progs.gb_ioctl_fe_nvidia;
	case GB_IODEV_UVM: return exit ? s->progs.gb_ioctl_fx_uvm : s->progs.gb_ioctl_fe_uvm;
	case GB_IODEV_KFD: return exit ? s->progs.gb_ioctl_fx_kfd : s->progs.gb_ioctl_fe_kfd;
	default: return exit ? s->progs.gb_ioctl_fx_drm : s->progs.gb_ioctl_fe_drm;
	}
}

/* only the chosen source's programs are loaded */
static int select_progs(struct ioctl_bpf *s, unsigned source, unsigned fe_funcs)
{
	struct bpf_program *p;
	unsigned i;
	int err;

	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, false);
	if (source == GB_IOSRC_TRACEPOINT) {
		bpf_program__set_autoload(s->progs.gb_ioctl_tp_enter, true);
		bpf_program__set_autoload(s->progs.gb_ioctl_tp_exit, true);
	} else if (source == GB_IOSRC_KPROBE) {
		bpf_program__set_autoload(s->progs.gb_ioctl_kp, true);
		bpf_program__set_autoload(s->progs.gb_ioctl_kp4, true);
		bpf_program__set_autoload(s->progs.gb_ioctl_krp, true);
	} else {
		for (i = 0; i < IOCTL_FN__COUNT; i++) {
			if (!(fe_funcs & (1u << i)))
				continue;
			if ((err = bpf_program__set_attach_target(fe_prog(s, i, false), 0, ioctl_fn_name(i))) ||
			    (err = bpf_program__set_attach_target(fe_prog(s, i, true), 0, ioctl_fn_name(i))))
				return err;
			bpf_program__set_autoload(fe_prog(s, i, false), true);
			bpf_program__set_autoload(fe_prog(s, i, true), true);
		}
	}
	return 0;
}

static int open_skel(struct ioctl_bpf **out, const struct ioctl_opts *o, unsigned source,
		     unsigned fe_funcs, char *err, size_t errlen)
{
	struct ioctl_bpf *s = ioctl_bpf__open();
	const char *which = "";
	int ret;

	*out = NULL;
	if (!s) {
		ret = errno ? -errno : -EINVAL;
		snprintf(err, errlen, "ioctl: cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	s->rodata->filter_pids = o->filter;
	ret = gb_share_maps(s->maps.rb, s->maps.targets, s->maps.drops,
			    &(struct gb_shared_fds){ o->ringbuf_fd, o->targets_fd, o->drops_fd }, &which);
	if (ret) {
		snprintf(err, errlen, "ioctl: cannot share the main program's %s map: %s", which, strerror(-ret));
		goto fail;
	}
	if ((ret = select_progs(s, source, fe_funcs))) {
		snprintf(err, errlen, "ioctl: cannot target the driver entry points: %s", strerror(-ret));
		goto fail;
	}
	ret = ioctl_bpf__load(s);
	if (ret) {
		snprintf(err, errlen, "ioctl: the kernel refused the %s programs (%s): run as root on a kernel with BTF; -v shows the verifier log",
			 ioctl_source_name(source), strerror(-ret));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	ioctl_bpf__destroy(s);
	return ret;
}

/* would fentry load here? (lockdown can refuse it with EPERM) */
static int trial_fentry(const struct ioctl_opts *o, unsigned fe_funcs)
{
	struct ioctl_opts solo = *o;
	struct ioctl_bpf *s;
	char msg[256];
	unsigned first = fe_funcs & -fe_funcs;
	int ret;

	solo.ringbuf_fd = solo.targets_fd = solo.drops_fd = -1;
	ret = open_skel(&s, &solo, GB_IOSRC_FENTRY, first, msg, sizeof(msg));
	ioctl_bpf__destroy(s);
	return ret;
}

static int put_layout(void *ctx, uint32_t kind, uint32_t cmd, const struct gb_iolayout *l)
{
	struct gb_iolayout_key k = { .dev_kind = kind, .cmd = cmd };

	return bpf_map_update_elem(*(int *)ctx, &k, l, BPF_ANY) ? -errno : 0;
}

static int fill_maps(struct ioctl_attach *a)
{
	int wfd = bpf_map__fd(a->skel->maps.watch), lfd = bpf_map__fd(a->skel->maps.layouts);
	unsigned i;
	int ret;

	for (i = 0; i < ioctl_decoder_count(a->dec); i++) {
		const struct ioctl_dev *d = ioctl_decoder_dev(a->dec, i);
		struct gb_iowatch w = { .dev_kind = d->kind, .id = (uint16_t)i };

		if (bpf_map_update_elem(wfd, &d->dev, &w, BPF_ANY))
			return -errno;
	}
	ret = ioctl_decoder_layouts(a->dec, put_layout, &lfd);
	return ret < 0 ? ret : 0;
}

static int link_add(struct ioctl_attach *a, struct bpf_link *l)
{
	int ret = libbpf_get_error(l);

	if (ret)
		return ret;
	if (a->nlinks >= MAX_LINKS) {
		bpf_link__destroy(l);
		return -ENOSPC;
	}
	a->links[a->nlinks++] = l;
	return 0;
}

static int attach_progs(struct ioctl_attach *a, unsigned funcs)
{
	struct ioctl_bpf *s = a->skel;
	unsigned i;
	int ret = 0;

	if (a->source == GB_IOSRC_TRACEPOINT) {
		ret = link_add(a, bpf_program__attach(s->progs.gb_ioctl_tp_enter));
		return ret ? ret : link_add(a, bpf_program__attach(s->progs.gb_ioctl_tp_exit));
	}
	for (i = 0; i < IOCTL_FN__COUNT && !ret; i++) {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = fn_kind[i]);
		LIBBPF_OPTS(bpf_kprobe_opts, kr, .retprobe = true);

		if (!(funcs & (1u << i)))
			continue;
		if (a->source == GB_IOSRC_FENTRY) {
			ret = link_add(a, bpf_program__attach(fe_prog(s, i, false)));
			if (!ret)
				ret = link_add(a, bpf_program__attach(fe_prog(s, i, true)));
			continue;
		}
		ret = link_add(a, bpf_program__attach_kprobe_opts(i == IOCTL_FN_NV_IOCTL ?
			s->progs.gb_ioctl_kp4 : s->progs.gb_ioctl_kp, ioctl_fn_name(i), &ko));
		if (!ret)
			ret = link_add(a, bpf_program__attach_kprobe_opts(s->progs.gb_ioctl_krp,
									  ioctl_fn_name(i), &kr));
	}
	return ret;
}

static int add_user_devs(struct ioctl_attach *a, const struct ioctl_opts *o, char *err, size_t errlen)
{
	struct ioctl_dev d;
	unsigned i;

	for (i = 0; i < o->ndevs; i++) {
		if (ioctl_parse_dev(o->devs[i], &d, err, errlen))
			return -EINVAL;
		if (ioctl_decoder_add(a->dec, &d)) {
			snprintf(err, errlen, "ioctl: too many devices (at most %d)", IOCTL_MAX_DEVS);
			return -ENOSPC;
		}
	}
	return 0;
}

int ioctl_attach(const struct ioctl_opts *o, struct ioctl_attach **out, char *err, size_t errlen)
{
	struct ioctl_caps caps = { .fentry_err = 1, .user_devs = o->ndevs > 0 };
	struct ioctl_attach *a;
	unsigned use;
	int ret;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->dec = ioctl_decoder_new())) {
		free(a);
		snprintf(err, errlen, "ioctl: out of memory");
		return -ENOMEM;
	}
	if ((ret = add_user_devs(a, o, err, errlen)))
		goto cleanup;
	ioctl_decoder_discover(a->dec);
	ioctl_decoder_settle(a->dec, NULL);
	if (!caps.user_devs) {
		caps.kprobe = have_kprobes();
		caps.funcs = kallsyms_funcs();
		if (caps.funcs && !caps.kprobe) {
			caps.btf_funcs = btf_funcs(caps.funcs);
			if (caps.btf_funcs)
				caps.fentry_err = trial_fentry(o, caps.btf_funcs);
		}
	}
	a->source = (unsigned)ioctl_choose_source(&caps, a->why, sizeof(a->why));
	use = a->source == GB_IOSRC_FENTRY ? caps.btf_funcs : caps.funcs;
	if ((ret = open_skel(&a->skel, o, a->source, use, err, errlen)))
		goto cleanup;
	if ((ret = fill_maps(a))) {
		snprintf(err, errlen, "ioctl: cannot fill the device maps: %s", strerror(-ret));
		goto cleanup;
	}
	if ((ret = attach_progs(a, use))) {
		snprintf(err, errlen, "ioctl: cannot attach the %s programs (%s): is tracefs mounted at /sys/kernel/tracing?",
			 ioctl_source_name(a->source), strerror(-ret));
		goto cleanup;
	}
	gb_dbg("ioctl: source %s (%s); %u devices watched; %s", ioctl_source_name(a->source), a->why,
	       ioctl_decoder_count(a->dec), ioctl_decoder_layout_note(a->dec));
	*out = a;
	return 0;
cleanup:
	ioctl_detach(a);
	return ret;
}

unsigned ioctl_attach_source(const struct ioctl_attach *a)
{
	return a->source;
}

const char *ioctl_attach_reason(const struct ioctl_attach *a)
{
	return a->why;
}

struct ioctl_decoder *ioctl_attach_decoder(struct ioctl_attach *a)
{
	return a->dec;
}

void ioctl_detach(struct ioctl_attach *a)
{
	unsigned i;

	if (!a)
		return;
	for (i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	ioctl_bpf__destroy(a->skel);
	ioctl_decoder_free(a->dec);
	free(a);
}
