// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_ioctl.c - libFuzzer target: arbitrary bytes as a GB_REC_IOCTL ring
 * buffer record (user/ioctl.c ioctl_decoder_event), then the event's
 * decoded fields rendered as text and JSON as view and export do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "gpubpf.h"
#include "core/event.h"
#include "core/hmap.h"
#include "core/json.h"
#include "ioctl/ioctl.h"
#include "core/util.h"
#include "exporters/export.h"

static struct ioctl_decoder *dec;

static void setup(void)
{
	static const char *devs[] = { "195:255=nvidia@550.54", "510:0=uvm", "511:0=kfd", "226:128=drm" };
	struct ioctl_dev d;
	char err[128];
	unsigned i;

	dec = ioctl_decoder_new();
	if (!dec)
		abort();
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (!ioctl_parse_dev(devs[i], &d, err, sizeof(err)))
			ioctl_decoder_add(dec, &d);
	ioctl_decoder_settle(dec, "550.54");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct intern *s = intern_new();
	struct gb_buf b = { 0 };
	struct gb_event ev;
	void *rec;
	char dm[512];

	setup();	/* per input: per-process counters must not carry over */
	if (!s)
		goto out;
	/* the ring hands out 8-aligned records: copy, then force the kind */
	rec = calloc(1, size + sizeof(struct gb_ioctl_rec));
	if (!rec)
		goto out;
	memcpy(rec, data, size);
	if (size >= sizeof(struct gb_ioctl_rec))
		((struct gb_ioctl_rec *)rec)->r.kind = GB_REC_IOCTL;
	if (!ioctl_decoder_event(dec, rec, size, s, &ev)) {
		struct gb_json j;

		ioctl_event_text(&b, &ev);
		b.len = 0;
		gb_json_init(&j, &b);
		gb_json_start_object(&j);
		ioctl_event_json(&j, &ev);
		gb_json_end_object(&j);
		b.len = 0;
		gb_event_json(&b, &ev, NULL);
	}
	ioctl_decoder_devmem(dec, dm, sizeof(dm));
	free(rec);
out:
	gb_buf_free(&b);
	intern_free(s);
	ioctl_decoder_free(dec);
	return 0;
}
