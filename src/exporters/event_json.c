// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * event_json.c - one event as one JSON object (view --json, import --json):
 * the fields of core/event.h, plus the decoded fields of ioctl events.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/event.h"
#include "core/json.h"
#include "core/util.h"
#include "ioctl/ioctl.h"
#include "export.h"

static void dim3(struct gb_json *j, const char *name, const uint32_t v[3])
{
	gb_json_name(j, name);
	gb_json_start_array(j);
	gb_json_uint(j, v[0]);
	gb_json_uint(j, v[1]);
	gb_json_uint(j, v[2]);
	gb_json_end_array(j);
}

/* a collective (and a communicator's init): see event.c for where each field lives */
static void coll_json(struct gb_json *j, const struct gb_event *ev, unsigned cat)
{
	const char *s;

	/* "comm" is the process name in every output; the ncclComm_t is its handle */
	gb_json_uint_field(j, "comm_handle", ev->handle);
	if (gb_type_info(ev->type)->shape == GB_SH_NCCL_SPLIT) {
		gb_json_int_field(j, "color", (int64_t)ev->arg);
		gb_json_uint_field(j, "new_comm_handle", ev->src);
	}
	if (cat == GB_CAT_COLL) {
		gb_json_string_field(j, "op", gb_type_name(ev->type) + 4);	/* "AllReduce" */
		gb_json_uint_field(j, "count", ev->arg);
		s = gb_nccl_dtype_name(gb_coll_dtype(ev));
		if (s)
			gb_json_string_field(j, "datatype", s);
		else
			gb_json_uint_field(j, "datatype", gb_coll_dtype(ev));
		if (gb_coll_redop(ev) != 0xff) {
			s = gb_nccl_redop_name(gb_coll_redop(ev));
			if (s)
				gb_json_string_field(j, "redop", s);
			else
				gb_json_uint_field(j, "redop", gb_coll_redop(ev));
		}
		if (gb_coll_peer(ev) >= 0)
			gb_json_int_field(j, ev->type == GB_T_ncclSend || ev->type == GB_T_ncclRecv ?
					  "peer" : "root", gb_coll_peer(ev));
		if (gb_coll_seq(ev))
			gb_json_uint_field(j, "seq", gb_coll_seq(ev));
	}
	if (gb_coll_comm_id(ev)) {
		char id[24];

		snprintf(id, sizeof(id), "%016" PRIx64, gb_coll_comm_id(ev));
		gb_json_string_field(j, "comm_id", id);
	}
	if (gb_coll_nranks(ev)) {
		gb_json_uint_field(j, "rank", gb_coll_rank(ev));
		gb_json_uint_field(j, "nranks", gb_coll_nranks(ev));
	}
}

static void uints(struct gb_json *j, const char *name, const uint64_t *v, unsigned n)
{
	unsigned i;

	gb_json_name(j, name);
	gb_json_start_array(j);
	for (i = 0; i < n; i++)
		gb_json_uint(j, v[i]);
	gb_json_end_array(j);
}

static void name_or_num(struct gb_json *j, const char *s, unsigned v)
{
	if (s)
		gb_json_string(j, s);
	else
		gb_json_uint(j, v);
}

/* a library op or descriptor call: see event.c for where each field lives */
static void op_json(struct gb_json *j, const struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	uint64_t v[4];
	uint16_t d[4];
	unsigned i, k;

	gb_json_uint_field(j, "handle", ev->handle);
	if (gb_op_is_gemm(ev)) {
		gb_json_uint_field(j, "m", ev->aux[0]);
		gb_json_uint_field(j, "n", ev->aux[1]);
		gb_json_uint_field(j, "k", ev->arg);
		gb_json_string_field(j, "transa", gb_blas_op_name(gb_gemm_transa(ev)));
		gb_json_string_field(j, "transb", gb_blas_op_name(gb_gemm_transb(ev)));
		gb_json_name(j, "dtype");
		gb_json_start_array(j);
		name_or_num(j, gb_cuda_dtype_name(gb_gemm_atype(ev)), gb_gemm_atype(ev));
		name_or_num(j, gb_cuda_dtype_name(gb_gemm_btype(ev)), gb_gemm_btype(ev));
		name_or_num(j, gb_cuda_dtype_name(gb_gemm_ctype(ev)), gb_gemm_ctype(ev));
		gb_json_end_array(j);
		gb_json_name(j, "compute");
		name_or_num(j, gb_blas_compute_name(gb_gemm_compute(ev)), gb_gemm_compute(ev));
		gb_json_uint_field(j, "batch", ev->src);
	} else if (gb_op_is_conv(ev)) {
		static const char *const dims[] = { "x", "w", "y" };
		const uint64_t packed[3] = { ev->aux[0], ev->aux[1], ev->ptr };

		for (k = 0; k < 3; k++) {
			gb_dims4(packed[k], d);
			for (i = 0; i < 4; i++)
				v[i] = d[i];
			uints(j, dims[k], v, 4);
		}
		for (k = 0; k < 2; k++) {
			v[0] = ev->src >> (32 * k) & 0xffff;
			v[1] = ev->src >> (32 * k + 16) & 0xffff;
			uints(j, k ? "stride" : "pad", v, 2);
		}
		v[0] = ev->grid[0] & 0xffff;
		v[1] = ev->grid[0] >> 16;
		uints(j, "dilation", v, 2);
		gb_json_uint_field(j, "algo", ev->arg);
		if (ev->grid[1]) {
			gb_json_name(j, "dtype");
			name_or_num(j, gb_dnn_dtype_name(ev->grid[1] - 1), ev->grid[1] - 1);
		}
	} else if (ti && ti->detail == GB_OP_DNN_EXEC) {
		gb_json_uint_field(j, "plan", ev->arg);
	} else if (ti && ti->detail == GB_OP_JIT_COMPILE) {
		gb_json_uint_field(j, "options", ev->arg);
	}
	if (ti && ti->cat == GB_CAT_OP) {
		char label[256];

		gb_op_label(ev, label, sizeof(label));
		gb_json_string_field(j, "label", label);
	}
}

/* a kernel's name as every output shows it, and the recorded one where they differ */
static void kernel_json(struct gb_json *j, const char *key, const char *raw, struct gb_names *names)
{
	char *own = NULL, rkey[32];
	const char *disp;

	if (names) {
		disp = gb_names_disp(names, raw);
	} else {
		own = gb_demangle(raw);
		disp = own ? own : raw;
	}
	if (key)
		gb_json_string_field(j, key, disp);
	else
		gb_json_string(j, disp);
	if (key && disp != raw) {
		snprintf(rkey, sizeof(rkey), "%s_raw", key);
		gb_json_string_field(j, rkey, raw);
	}
	free(own);
}

/* a graph event (see event.c): its graph, kernel nodes and their names */
static void graph_json(struct gb_json *j, const struct gb_event *ev, struct gb_names *names)
{
	const char *pos = NULL;
	char name[GB_NAME_MAX];

	if (gb_graph_of(ev))
		gb_json_uint_field(j, "graph", gb_graph_of(ev));
	if (!(ev->flags & GB_EF_ARG))
		return;
	gb_json_uint_field(j, "nodes", ev->arg);
	gb_json_name(j, "node_kernels");
	gb_json_start_array(j);
	while (gb_graph_nodes_next(ev, &pos, name, sizeof(name)))
		kernel_json(j, NULL, name, names);
	gb_json_end_array(j);
}

void gb_event_json_fields(struct gb_json *j, const struct gb_event *ev, struct gb_names *names)
{
	unsigned cat = gb_event_cat(ev);

	gb_json_string_field(j, "type", gb_type_name(ev->type));
	gb_json_string_field(j, "api", gb_api_name(ev->api));
	gb_json_uint_field(j, "ts_ns", ev->ts_ns);
	if (ev->flags & GB_EF_DUR)
		gb_json_uint_field(j, "dur_ns", ev->dur_ns);
	if (gb_event_state(ev)) {
		gb_json_string_field(j, "state", gb_event_state(ev));
		if (ev->flags & GB_EF_INFLIGHT)
			gb_json_uint_field(j, "in_flight_ns", ev->dur_ns);
		if ((ev->flags & GB_EF_ATTACHED) && ev->aux[0])
			gb_json_uint_field(j, "off_cpu_ns", ev->aux[0]);
	}
	gb_json_uint_field(j, "pid", ev->pid);
	gb_json_uint_field(j, "tid", ev->tid);
	if (ev->ns_pid && (ev->ns_pid != ev->pid || ev->ns_tid != ev->tid)) {
		gb_json_uint_field(j, "ns_pid", ev->ns_pid);
		gb_json_uint_field(j, "ns_tid", ev->ns_tid);
	}
	if (ev->comm)
		gb_json_string_field(j, "comm", ev->comm);
	if (ev->name) {
		if (cat == GB_CAT_LAUNCH || ev->type == GB_T_gpu_kernel || cat == GB_CAT_NAME)
			kernel_json(j, "kernel", ev->name, names);
		else if (cat == GB_CAT_FUNC)
			gb_json_string_field(j, "func", ev->name);
		else
			gb_json_string_field(j, "name", ev->name);
	}
	if (cat == GB_CAT_FUNC) {
		gb_json_uint_field(j, "func_id", ev->handle);
		if (ev->flags & GB_EF_ARG)
			gb_json_uint_field(j, "arg", ev->arg);
	} else if (gb_type_graph(ev->type)) {
		graph_json(j, ev, names);
	} else if ((ev->flags & GB_EF_ARG) && cat != GB_CAT_IOCTL && cat != GB_CAT_MARK &&
		   cat != GB_CAT_OP) {
		gb_json_uint_field(j, "arg", ev->arg);	/* flags, device, advice, offset ... */
	}
	if (ev->flags & GB_EF_GRID) {
		dim3(j, "grid", ev->grid);
		dim3(j, "block", ev->block);
		gb_json_uint_field(j, "shmem", ev->shmem);
	}
	if (ev->flags & GB_EF_STREAM)
		gb_json_uint_field(j, "stream", ev->stream);
	if (ev->flags & GB_EF_BYTES)
		gb_json_uint_field(j, "bytes", ev->bytes);
	if (gb_kind_name(ev->kind))
		gb_json_string_field(j, "kind", gb_kind_name(ev->kind));
	if ((ev->flags & GB_EF_PTR) && cat != GB_CAT_FUNC)
		gb_json_uint_field(j, "ptr", ev->ptr);
	if (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_SYNC ||
	    cat == GB_CAT_IOCTL || cat == GB_CAT_OTHER)
		if (ev->handle)
			gb_json_uint_field(j, "handle", ev->handle);
	if (ev->corr_id)
		gb_json_uint_field(j, "corr_id", ev->corr_id);
	if (gb_prov_name(ev->prov))
		gb_json_string_field(j, "timing", gb_prov_name(ev->prov));
	if (ev->detail)
		gb_json_string_field(j, "detail", ev->detail);
	if (ev->stack_id)
		gb_json_uint_field(j, "stack_id", ev->stack_id);
	if (ev->flags & GB_EF_CAPTURED) {
		gb_json_bool_field(j, "captured", true);
		gb_json_uint_field(j, "graph", gb_graph_of(ev));
	}
	if (ev->flags & GB_EF_XFAULT)
		gb_json_bool_field(j, "arg_fault", true);
	if (ev->flags & GB_EF_REGS)
		gb_json_bool_field(j, "lean", true);
	if (ev->flags & GB_EF_NESTED)
		gb_json_bool_field(j, "nested", true);
	if (ev->flags & GB_EF_RET)
		gb_json_int_field(j, "ret", ev->ret);
	if (cat == GB_CAT_IOCTL)
		ioctl_event_json(j, ev);
	if (cat == GB_CAT_COLL || (gb_type_info(ev->type) &&
				   (gb_type_info(ev->type)->shape == GB_SH_NCCL_INIT ||
				    gb_type_info(ev->type)->shape == GB_SH_NCCL_INITALL ||
				    gb_type_info(ev->type)->shape == GB_SH_NCCL_SPLIT)))
		coll_json(j, ev, cat);
	if (cat == GB_CAT_OP || cat == GB_CAT_DESC)
		op_json(j, ev);
}

void gb_event_json(struct gb_buf *b, const struct gb_event *ev, struct gb_names *names)
{
	struct gb_json j;

	gb_json_init(&j, b);
	gb_json_start_object(&j);
	gb_event_json_fields(&j, ev, names);
	gb_json_end_object(&j);
}
