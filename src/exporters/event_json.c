// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * event_json.c - one event as one JSON object (view --json, import --json):
 * the fields of core/event.h, plus the decoded fields of ioctl events.
 */
#include <inttypes.h>
#include "core/event.h"
#include "core/util.h"
#include "ioctl/ioctl.h"
#include "export.h"

static void json_u64(struct gb_buf *b, const char *k, uint64_t v)
{
	gb_buf_printf(b, ",\"%s\":%" PRIu64, k, v);
}

static void json_s(struct gb_buf *b, const char *k, const char *v)
{
	gb_buf_printf(b, ",\"%s\":", k);
	gb_buf_json_str(b, v);
}

void gb_event_json(struct gb_buf *b, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);

	gb_buf_puts(b, "{\"type\":");
	gb_buf_json_str(b, gb_type_name(ev->type));
	json_s(b, "api", gb_api_name(ev->api));
	json_u64(b, "ts_ns", ev->ts_ns);
	if (ev->flags & GB_EF_DUR)
		json_u64(b, "dur_ns", ev->dur_ns);
	json_u64(b, "pid", ev->pid);
	json_u64(b, "tid", ev->tid);
	if (ev->ns_pid && (ev->ns_pid != ev->pid || ev->ns_tid != ev->tid)) {
		json_u64(b, "ns_pid", ev->ns_pid);
		json_u64(b, "ns_tid", ev->ns_tid);
	}
	if (ev->comm)
		json_s(b, "comm", ev->comm);
	if (ev->name) {
		if (cat == GB_CAT_LAUNCH || ev->type == GB_T_gpu_kernel || cat == GB_CAT_NAME)
			json_s(b, "kernel", ev->name);
		else if (cat == GB_CAT_FUNC)
			json_s(b, "func", ev->name);
		else
			json_s(b, "name", ev->name);
	}
	if (cat == GB_CAT_FUNC) {
		json_u64(b, "func_id", ev->handle);
		if (ev->flags & GB_EF_ARG)
			json_u64(b, "arg", ev->arg);
	}
	if (ev->flags & GB_EF_GRID) {
		gb_buf_printf(b, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]",
			      ev->grid[0], ev->grid[1], ev->grid[2],
			      ev->block[0], ev->block[1], ev->block[2]);
		json_u64(b, "shmem", ev->shmem);
	}
	if (ev->flags & GB_EF_STREAM)
		json_u64(b, "stream", ev->stream);
	if (ev->flags & GB_EF_BYTES)
		json_u64(b, "bytes", ev->bytes);
	if (gb_kind_name(ev->kind))
		json_s(b, "kind", gb_kind_name(ev->kind));
	if ((ev->flags & GB_EF_PTR) && cat != GB_CAT_FUNC)
		json_u64(b, "ptr", ev->ptr);
	if (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_SYNC ||
	    cat == GB_CAT_IOCTL)
		if (ev->handle)
			json_u64(b, "handle", ev->handle);
	if (ev->corr_id)
		json_u64(b, "corr_id", ev->corr_id);
	if (gb_prov_name(ev->prov))
		json_s(b, "timing", gb_prov_name(ev->prov));
	if (ev->detail)
		json_s(b, "detail", ev->detail);
	if (ev->stack_id)
		json_u64(b, "stack_id", ev->stack_id);
	if (ev->flags & GB_EF_XFAULT)
		gb_buf_puts(b, ",\"arg_fault\":true");
	if (ev->flags & GB_EF_NESTED)
		gb_buf_puts(b, ",\"nested\":true");
	if (ev->flags & GB_EF_RET)
		gb_buf_printf(b, ",\"ret\":%" PRId64, ev->ret);
	if (cat == GB_CAT_IOCTL)
		ioctl_event_fields(b, ev, true);
	gb_buf_putc(b, '}');
}
