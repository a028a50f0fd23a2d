// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ioctl.c - ioctl source selection, --ioctl-dev parsing and record decoding */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/ioctl.h>
#include "core/hmap.h"
#include "ioctl/ioctl.h"
#include "core/util.h"
#include "exporters/export.h"

#define FN(x) (1u << IOCTL_FN_##x)

static void choose_kprobe(void **state)
{
	struct ioctl_caps c = { .kprobe = true, .funcs = FN(NV_UNLOCKED) | FN(UVM),
				.btf_funcs = FN(NV_UNLOCKED), .fentry_err = 0 };
	char why[256];

	assert_int_equal(ioctl_choose_source(&c, why, sizeof(why)), GB_IOSRC_KPROBE);
	assert_non_null(strstr(why, "nvidia_unlocked_ioctl"));
	assert_non_null(strstr(why, "uvm_unlocked_ioctl_entry"));
}

static void choose_fentry(void **state)
{
	struct ioctl_caps c = { .kprobe = false, .funcs = FN(KFD) | FN(AMDGPU),
				.btf_funcs = FN(KFD), .fentry_err = 0 };
	char why[256];

	assert_int_equal(ioctl_choose_source(&c, why, sizeof(why)), GB_IOSRC_FENTRY);
	assert_non_null(strstr(why, "kfd_ioctl"));
}

static void choose_tracepoint(void **state)
{
	struct ioctl_caps none = { .fentry_err = 1 };
	struct ioctl_caps refused = { .funcs = FN(NV_UNLOCKED), .btf_funcs = FN(NV_UNLOCKED),
				      .fentry_err = -EPERM };
	struct ioctl_caps nobtf = { .funcs = FN(NV_UNLOCKED), .fentry_err = 1 };
	struct ioctl_caps user = { .kprobe = true, .funcs = FN(NV_UNLOCKED), .user_devs = true };
	char why[256];

	assert_int_equal(ioctl_choose_source(&none, why, sizeof(why)), GB_IOSRC_TRACEPOINT);
	assert_non_null(strstr(why, "kallsyms"));
	assert_int_equal(ioctl_choose_source(&refused, why, sizeof(why)), GB_IOSRC_TRACEPOINT);
	assert_non_null(strstr(why, strerror(EPERM)));
	assert_int_equal(ioctl_choose_source(&nobtf, why, sizeof(why)), GB_IOSRC_TRACEPOINT);
	assert_non_null(strstr(why, "BTF"));
	/* a stand-in device is invisible to the driver entry points */
	assert_int_equal(ioctl_choose_source(&user, why, sizeof(why)), GB_IOSRC_TRACEPOINT);
	assert_string_equal(ioctl_source_name(GB_IOSRC_TRACEPOINT), "tracepoint");
}

static void parse_dev(void **state)
{
	struct ioctl_dev d;
	char err[256];

	assert_int_equal(ioctl_parse_dev("/dev/null=nvidia", &d, err, sizeof(err)), 0);
	assert_int_equal(d.kind, GB_IODEV_NVIDIA);
	assert_int_equal(d.dev, (1u << 20) | 3);
	assert_string_equal(d.name, "/dev/null");
	assert_string_equal(d.version, "");
	assert_int_equal(ioctl_parse_dev("/dev/full=kfd@1.2", &d, err, sizeof(err)), 0);
	assert_int_equal(d.kind, GB_IODEV_KFD);
	assert_string_equal(d.version, "1.2");
	assert_int_equal(ioctl_parse_dev("226:128", &d, err, sizeof(err)), 0);
	assert_int_equal(d.kind, GB_IODEV_DRM);
	assert_int_equal(d.dev, (226u << 20) | 128);
	assert_int_equal(ioctl_parse_dev("195:255", &d, err, sizeof(err)), 0);
	assert_int_equal(d.kind, GB_IODEV_NVIDIA);
	/* bad input: one line naming the fix */
	assert_int_equal(ioctl_parse_dev("/dev/null", &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "=nvidia"));
	assert_int_equal(ioctl_parse_dev("/dev/null=radeon", &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown device type"));
	assert_int_equal(ioctl_parse_dev("/nonexistent/x=nvidia", &d, err, sizeof(err)), -1);
	assert_int_equal(ioctl_parse_dev("/tmp=nvidia", &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a character device"));
	assert_int_equal(ioctl_parse_dev("", &d, err, sizeof(err)), -1);
	assert_int_equal(ioctl_parse_dev("1:3=nvidia@", &d, err, sizeof(err)), -1);
	assert_int_equal(ioctl_parse_dev("99999:1=nvidia", &d, err, sizeof(err)), -1);
}

static void fake_rec(struct gb_ioctl_rec *r, uint16_t kind, uint32_t cmd, uint16_t decoder, int ret)
{
	memset(r, 0, sizeof(*r));
	r->r.kind = GB_REC_IOCTL;
	r->r.type = GB_T_ioctl;
	r->r.pid = 42;
	r->r.tid = 43;
	r->r.ret = ret;
	r->r.dur_ns = 1000;
	r->r.flags = GB_RF_RET | (decoder ? 0 : GB_RF_XFAULT);
	memcpy(r->r.comm, "work", 5);
	r->cmd = cmd;
	r->fd = 7;
	r->dev = (195u << 20) | 255;
	r->dev_kind = kind;
	r->dev_id = 0xffff;
	r->decoder = decoder;
	r->source = GB_IOSRC_TRACEPOINT;
}

static uint64_t field(const struct gb_event *ev, const char *name)
{
	const struct ioctl_layout_desc *l = ioctl_layout_by_decoder((unsigned)ev->src);
	unsigned i;

	assert_non_null(l);
	for (i = 0; i < GB_IOCTL_NF; i++)
		if (l->f[i].name && !strcmp(l->f[i].name, name))
			return ioctl_field_value(&l->f[i], ev);
	fail_msg("no field %s", name);
	return 0;
}

static void decode_rm_alloc(void **state)
{
	struct ioctl_decoder *d = ioctl_decoder_new();
	struct intern *s = intern_new();
	struct gb_ioctl_rec r;
	struct gb_event ev;
	struct gb_buf b = { 0 };

	fake_rec(&r, GB_IODEV_NVIDIA, _IOWR('F', 0x2b, char[32]), IOCTL_DEC_NV_ALLOC21, -25);
	r.w[0] = 0xc1d00001; r.w[1] = 0xc1d00002; r.w[2] = 0xcafe0001; r.w[3] = 0x40;
	r.w[4] = 16; r.w[5] = 0;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_int_equal(ev.type, GB_T_ioctl);
	assert_int_equal(ev.api, GB_API_IOCTL);
	assert_string_equal(ev.name, "NV_ESC_RM_ALLOC");
	assert_string_equal(ev.detail, "nvidiactl");
	assert_int_equal(ev.ret, -25);
	assert_int_equal(ev.grid[2], 8);
	assert_false(ev.flags & GB_EF_XFAULT);
	assert_int_equal(field(&ev, "hRoot"), 0xc1d00001);
	assert_int_equal(field(&ev, "hObjectParent"), 0xc1d00002);
	assert_int_equal(field(&ev, "hObjectNew"), 0xcafe0001);
	assert_int_equal(field(&ev, "hClass"), 0x40);
	assert_int_equal(field(&ev, "paramsSize"), 16);
	gb_event_json(&b, &ev, NULL);
	gb_buf_putc(&b, 0);
	assert_non_null(strstr(b.p, "\"hObjectNew\":3405643777"));
	assert_non_null(strstr(b.p, "\"hClass_name\":\"NV01_MEMORY_LOCAL_USER\""));
	assert_non_null(strstr(b.p, "\"ioc\":{\"dir\":\"rw\",\"type\":70,\"nr\":43,\"size\":32}"));
	gb_buf_free(&b);
	intern_free(s);
	ioctl_decoder_free(d);
}

static void decode_undecoded(void **state)
{
	struct ioctl_decoder *d = ioctl_decoder_new();
	struct intern *s = intern_new();
	struct gb_ioctl_rec r;
	struct gb_event ev;

	/* an unknown cmd: no name, kept, flagged */
	fake_rec(&r, GB_IODEV_NVIDIA, _IOWR('F', 0x7e, char[8]), 0, -25);
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_null(ev.name);
	assert_true(ev.flags & GB_EF_XFAULT);
	assert_int_equal(ev.src, 0);
	assert_int_equal(ev.handle, _IOWR('F', 0x7e, char[8]));
	/* a known cmd whose argument could not be read: named, flagged */
	fake_rec(&r, GB_IODEV_NVIDIA, _IOWR('F', 0x2a, char[32]), 0, -14);
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_string_equal(ev.name, "NV_ESC_RM_CONTROL");
	assert_true(ev.flags & GB_EF_XFAULT);
	/* malformed records are refused, not read past their end */
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r) - 1, s, &ev), -EINVAL);
	r.dev_kind = 99;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), -EINVAL);
	intern_free(s);
	ioctl_decoder_free(d);
}

static void devmem_kfd(void **state)
{
	struct ioctl_decoder *d = ioctl_decoder_new();
	struct intern *s = intern_new();
	struct gb_ioctl_rec r;
	struct gb_event ev;
	char note[512];
	uint32_t alloc = _IOWR('K', 0x16, char[40]), fr = _IOW('K', 0x17, char[8]);

	fake_rec(&r, GB_IODEV_KFD, alloc, IOCTL_DEC_KFD_ALLOC, 0);
	r.w[0] = 0x7f0000000000ull; r.w[1] = 4096; r.w[2] = 0x100000001ull; r.w[3] = 0x1234; r.w[4] = 2;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_string_equal(ev.name, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU");
	assert_int_equal(ev.bytes, 4096);
	assert_int_equal(ev.ptr, 0x7f0000000000ull);
	assert_int_equal(ev.device, 0x1234);
	assert_int_equal(ev.aux[1], 4096);
	r.w[1] = 8192; r.w[2] = 0x100000002ull;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_int_equal(ev.aux[1], 12288);
	/* a failed alloc changes nothing */
	r.r.ret = -12; r.w[2] = 0x100000003ull;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_int_equal(ev.aux[1], 12288);
	fake_rec(&r, GB_IODEV_KFD, fr, IOCTL_DEC_KFD_FREE, 0);
	r.w[0] = 0x100000001ull;
	assert_int_equal(ioctl_decoder_event(d, &r, sizeof(r), s, &ev), 0);
	assert_int_equal(ev.bytes, 4096);
	assert_int_equal(ev.aux[1], 8192);
	ioctl_decoder_devmem(d, note, sizeof(note));
	assert_non_null(strstr(note, "pid 42 (work): kfd 8192 B live"));
	assert_non_null(strstr(note, "best-effort"));
	intern_free(s);
	ioctl_decoder_free(d);
}

static int count_layout(void *ctx, uint32_t kind, uint32_t cmd, const struct gb_iolayout *l)
{
	unsigned *n = ctx;

	n[kind]++;
	assert_true(l->decoder > 0);
	return 0;
}

static void version_keyed(void **state)
{
	struct ioctl_decoder *d = ioctl_decoder_new();
	unsigned n[GB_IODEV__COUNT] = { 0 };
	struct ioctl_dev dev;
	char err[128];

	ioctl_decoder_settle(d, "550.54.14");
	assert_true(ioctl_decoder_decodes(d, GB_IODEV_NVIDIA));
	assert_true(ioctl_decoder_layouts(d, count_layout, n) > 0);
	assert_true(n[GB_IODEV_NVIDIA] >= 4);
	assert_true(n[GB_IODEV_KFD] >= 3);
	/* a driver older than the layouts we know: cmd only, and the note says so */
	ioctl_decoder_settle(d, "470.57.02");
	assert_false(ioctl_decoder_decodes(d, GB_IODEV_NVIDIA));
	assert_non_null(strstr(ioctl_decoder_layout_note(d), "cmd only"));
	memset(n, 0, sizeof(n));
	ioctl_decoder_layouts(d, count_layout, n);
	assert_int_equal(n[GB_IODEV_NVIDIA], 0);
	assert_true(n[GB_IODEV_KFD] >= 3);
	/* a stand-in's @VERSION speaks for it */
	assert_int_equal(ioctl_parse_dev("/dev/null=nvidia@300.1", &dev, err, sizeof(err)), 0);
	assert_int_equal(ioctl_decoder_add(d, &dev), 0);
	ioctl_decoder_settle(d, "550.54.14");
	assert_false(ioctl_decoder_decodes(d, GB_IODEV_NVIDIA));
	ioctl_decoder_free(d);
}

static void names(void **state)
{
	assert_string_equal(ioctl_cmd_name(GB_IODEV_UVM, 0x30000001, false), "UVM_INITIALIZE");
	assert_string_equal(ioctl_cmd_name(GB_IODEV_UVM, 34, false), "UVM_FREE");
	assert_string_equal(ioctl_cmd_name(GB_IODEV_NVIDIA, _IOWR('F', 211, char[16]), false),
			    "NV_ESC_IOCTL_XFER_CMD");
	assert_null(ioctl_cmd_name(GB_IODEV_NVIDIA, _IOWR('K', 0x2b, char[32]), false));
	assert_string_equal(ioctl_cmd_name(GB_IODEV_KFD, _IOWR('K', 0x02, char[88]), false),
			    "AMDKFD_IOC_CREATE_QUEUE");
	assert_string_equal(ioctl_cmd_name(GB_IODEV_DRM, _IOWR('d', 0x44, char[24]), true),
			    "DRM_IOCTL_AMDGPU_CS");
	assert_null(ioctl_cmd_name(GB_IODEV_DRM, _IOWR('d', 0x44, char[24]), false));
	assert_string_equal(ioctl_cmd_name(GB_IODEV_DRM, _IOWR('d', 0x00, char[64]), false),
			    "DRM_IOCTL_VERSION");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(choose_kprobe),
		cmocka_unit_test(choose_fentry),
		cmocka_unit_test(choose_tracepoint),
		cmocka_unit_test(parse_dev),
		cmocka_unit_test(decode_rm_alloc),
		cmocka_unit_test(decode_undecoded),
		cmocka_unit_test(devmem_kfd),
		cmocka_unit_test(version_keyed),
		cmocka_unit_test(names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
