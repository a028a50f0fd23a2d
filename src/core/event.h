/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * event.h - the one event model: what the collector makes of a BPF record,
 * what the .sbt reader returns and what the XRay importer produces.
 * Exporters and tools read only this.
 */
#ifndef GB_EVENT_H
#define GB_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpubpf.h"

/* gb_event.flags */
#define GB_EF_DUR	0x01	/* dur_ns is measured (a return probe or an end record) */
#define GB_EF_RET	0x02	/* ret is valid */
#define GB_EF_GRID	0x04	/* grid, block and shmem are valid */
#define GB_EF_STREAM	0x08	/* stream is valid */
#define GB_EF_BYTES	0x10	/* bytes is valid */
#define GB_EF_PTR	0x20	/* ptr is valid */
#define GB_EF_XFAULT	0x40	/* an argument could not be read */
#define GB_EF_INSTANT	0x80	/* a point in time, not a call */
#define GB_EF_ARG	0x100	/* arg is valid (XRay logged argument ...) */
#define GB_EF_NESTED	0x200	/* made inside another traced call of its thread (the driver
				 * call of a runtime call): summaries count the outermost */
#define GB_EF_INFLIGHT	0x400	/* the call had not returned when the trace was written, its
				 * process died or the trace was dumped: dur_ns is how long it
				 * had been running then ("state": "in_flight", in_flight_ns) */
#define GB_EF_ATTACHED	0x800	/* found blocked in this call when the tracer attached
				 * ("state": "blocked_at_attach"): ts_ns is the attach time,
				 * its start is unknown; aux[0] = ns it had been off CPU then
				 * (0: unknown) */
#define GB_EF_REGS	0x2000	/* --lean: arguments from registers only ("lean": true):
				 * no stream; a driver launch's block z and shared memory,
				 * a runtime launch's shared memory read as 0 */
#define GB_EF_STEP	0x8000	/* exporters only, never in a trace: a step of its process
				 * (steps/steps.h) for the "Steps" track; name "step N" */
#define GB_EF_CAPTURED	0x1000	/* a launch made on a stream capturing a CUDA/HIP graph: it
				 * did not run then (the graph's launches do); aux[1] = the
				 * graph. Not counted as an executed launch anywhere */

/*
 * Timing provenance of a kernel: how its device time is known.
 * GB_PROV_NONE means "not a kernel".
 */
enum gb_prov {
	GB_PROV_NONE = 0,
	GB_PROV_LAUNCH_ONLY,	/* only the host launch was seen */
	GB_PROV_BOUNDED,	/* bounded by launch and the next covering sync */
	GB_PROV_DEVICE,		/* measured on the device (CUPTI) */
};

/*
 * One event. Strings are borrowed: from the collector's intern table, the
 * .sbt reader's string table or the importer's symbol table; they stay
 * valid until that owner is closed. Fields a type does not use are zero.
 */
struct gb_event {
	uint64_t ts_ns;		/* CLOCK_MONOTONIC, start */
	uint64_t dur_ns;
	uint32_t pid, tid;	/* host ids */
	uint32_t ns_pid, ns_tid;/* ids in the task's own pid namespace */
	uint16_t type;		/* enum gb_type */
	uint8_t api;		/* enum gb_api (derived from type, kept for imports) */
	uint8_t kind;		/* copy kind GB_K_* */
	uint32_t flags;		/* GB_EF_* */
	int64_t ret;
	uint32_t grid[3], block[3];
	uint32_t shmem;
	uint32_t device;	/* GPU ordinal where known */
	uint64_t stream;
	uint64_t bytes;
	uint64_t ptr;		/* device pointer / destination */
	uint64_t src;		/* copy source */
	uint64_t handle;	/* CUfunction, stub address, graph, event, ioctl cmd ... */
	uint64_t corr_id;	/* correlation id (CUPTI), flow id */
	uint64_t arg;		/* XRay argument, ioctl decoded word ... */
	uint64_t aux[2];	/* type specific, documented in event.c */
	uint32_t stack_id;	/* 0 = none; see the stack table of the trace */
	uint8_t prov;		/* enum gb_prov, kernels only */
	uint8_t cpu;
	uint16_t _pad;
	const char *comm;	/* may be NULL */
	const char *name;	/* kernel, function or range name; may be NULL */
	const char *detail;	/* device file, payload text ...; may be NULL */
};

/* One stack frame, as stored: symbolised at view/export time. */
struct gb_frame {
	uint64_t ip;		/* address in the process */
	uint64_t offset;	/* file offset within module */
	const char *module;	/* path of the mapped file, may be NULL */
	const char *build_id;	/* hex, may be NULL */
	const char *sym;	/* symbol, filled when known (Python frames, imports) */
	uint32_t line;		/* source line where known, else 0 */
	const char *file;	/* source file of line (native frames, from DWARF); NULL: the
				 * module is the source (Python) or no line is known */
};

/* Static facts about a type, from the GB_TYPES table */
struct gb_type_info {
	const char *name;
	uint8_t api;
	uint8_t cat;
	uint8_t shape;
	uint8_t tflags;
	uint8_t detail;
};

/* the one type table, by enum gb_type (read it through gb_type_info) */
extern const struct gb_type_info gb_types_[GB_T__COUNT];
static inline const struct gb_type_info *gb_type_info(unsigned type)
{
	return type < GB_T__COUNT ? &gb_types_[type] : NULL;
}
/* what a type's name says, GB_TT_* bits (0 for an unknown type) */
#define GB_TT_ASYNC		0x01	/* ...Async, ...WithStream: takes a stream */
#define GB_TT_STREAM_WAIT	0x02	/* ...StreamWaitEvent */
#define GB_TT_STREAM		0x04	/* another stream call (a stream sync) */
#define GB_TT_EVENT		0x08	/* an event call (not a stream one) */
#define GB_TT_ALL_SYNC		0x10	/* Ctx/DeviceSynchronize: waits for all the device's work */
#define GB_TT_GRAPH		0x20	/* a graph or capture call */
#define GB_TT_STREAM_SYNC	0x40	/* ...StreamSynchronize */
unsigned gb_type_traits(unsigned type);
/* work the GPU did (CUPTI activity): a kernel, copy or memset with its device time */
static inline bool gb_is_device_work(unsigned type)
{
	return type == GB_T_gpu_kernel || type == GB_T_gpu_memcpy || type == GB_T_gpu_memset;
}
const char *gb_type_name(unsigned type);
/* syncs, copies, memsets, allocations, frees, module loads: announced at entry (GB_RF_OPEN) */
bool gb_type_can_block(unsigned type);		/* "?" when out of range */
int gb_type_by_name(const char *name);			/* -1 if unknown */
const char *gb_api_name(unsigned api);			/* "cuda-driver" ... */
/* a user-space library we put uprobes on (a call with a caller), not ioctls, imports or ourselves */
bool gb_api_is_library(unsigned api);
/*
 * Whether a call of this type records its stack in a stack mode (enum
 * gb_stack_mode): with frame pointers every library call; with DWARF copies
 * the work-issuing ones. record sets the BPF program from it, and readers
 * count the calls that should have one and do not.
 */
bool gb_type_wants_stack(int mode, unsigned type);
const char *gb_cat_name(unsigned cat);			/* "launch" ... */
const char *gb_kind_name(unsigned kind);		/* "HtoD" ... or NULL */
const char *gb_prov_name(unsigned prov);		/* "device" ... or NULL */
/* NCCL: ncclDataType_t name/size ("float32", 4; NULL/0 unknown), ncclRedOp_t name ("sum") */
const char *gb_nccl_dtype_name(unsigned dt);
unsigned gb_nccl_dtype_size(unsigned dt);
const char *gb_nccl_redop_name(unsigned op);

/*
 * A total of durations over calls of which only some were timed (launches
 * are timed 1 in 64 by default): the measured sum when every call was
 * timed, else the timed calls' mean times all calls (an estimate, and every
 * output says so); 0 when none was.
 */
static inline uint64_t gb_timed_estimate(uint64_t calls, uint64_t timed, uint64_t sum_ns)
{
	if (!timed || timed >= calls)
		return timed ? sum_ns : 0;
	return (uint64_t)((double)sum_ns / (double)timed * (double)calls + 0.5);
}

/* the fields of a collective event (GB_CAT_COLL, see event.c) */
static inline unsigned gb_coll_dtype(const struct gb_event *e) { return e->aux[0] & 0xff; }
static inline unsigned gb_coll_redop(const struct gb_event *e) { return (e->aux[0] >> 8) & 0xff; }
static inline int32_t gb_coll_peer(const struct gb_event *e) { return (int32_t)(e->aux[0] >> 32); }
static inline uint64_t gb_coll_comm_id(const struct gb_event *e) { return e->aux[1]; }
static inline uint32_t gb_coll_rank(const struct gb_event *e) { return (uint32_t)e->ptr; }
static inline uint32_t gb_coll_nranks(const struct gb_event *e) { return (uint32_t)(e->ptr >> 32); }
static inline uint64_t gb_coll_seq(const struct gb_event *e) { return e->src; }
/*
 * Library operations (GB_CAT_OP, src/core/libop.c): data type names
 * (cudaDataType_t "f32" ..., cublasComputeType_t "32F" ..., cudnnDataType_t
 * "float" ...; NULL unknown), cublasOperation_t ("N", "T", "C").
 */
const char *gb_cuda_dtype_name(unsigned dt);
const char *gb_blas_compute_name(unsigned ct);
const char *gb_dnn_dtype_name(unsigned dt);
const char *gb_blas_op_name(unsigned op);
bool gb_op_is_gemm(const struct gb_event *e);
/* JIT work: NVRTC compilations, nvJitLink links, module loads from images (jit-stall) */
bool gb_type_is_jit(unsigned type);	/* cuBLAS GEMMs, cuBLASLt matmuls */
bool gb_op_is_conv(const struct gb_event *e);	/* cuDNN convolutions */
/* "cublasSgemm_v2 128x64x32 NT f32,f32->f32 32F" ...: what info groups ops by */
int gb_op_label(const struct gb_event *e, char *buf, size_t n);
/*
 * Launches attributed to the library op that made them: feed events in
 * time order; for an op (outermost, with a span) returns its label, for a
 * launch the label of the op of its thread it falls in (NULL: none). The
 * labels are interned here, valid until gb_opctx_free.
 */
#include "hmap.h"
struct gb_opctx {
	struct hmap by_tid;	/* tid -> the thread's outermost op seen last */
	struct intern *names;
};
void gb_opctx_init(struct gb_opctx *c);
const char *gb_opctx_feed(struct gb_opctx *c, const struct gb_event *e);
void gb_opctx_free(struct gb_opctx *c);
/* kernels by op and shape: per op label, its calls, host time and the launches made inside */
#define GB_OPSTAT_KERNELS 8
struct gb_opstat {
	const char *label;	/* gb_op_label */
	unsigned type;		/* the op's type */
	uint64_t calls, ns, launches;
	const char *kern[GB_OPSTAT_KERNELS];	/* kernel names launched inside, first seen first */
	uint64_t kern_n[GB_OPSTAT_KERNELS];
	unsigned nkern;
};
struct gb_opstats {
	struct gb_opctx ctx;
	struct hmap by_label;	/* label pointer -> struct gb_opstat */
	uint64_t launches_in_ops, launches_outside;
};
void gb_opstats_init(struct gb_opstats *s);
int gb_opstats_add(struct gb_opstats *s, const struct gb_event *e);	/* time order; <0: no memory */
/* NULL-terminated, by host time then launches (free() it); NULL: no memory */
struct gb_opstat **gb_opstats_sorted(struct gb_opstats *s);
void gb_opstats_free(struct gb_opstats *s);
/* GEMM fields: m = aux[0], n = aux[1], k = arg, types packed in ptr, batch = src */
#define GB_GEMM_PACK(ta, tb, at, bt, ct, comp) \
	(((uint64_t)(ta) & 0xff) | ((uint64_t)(tb) & 0xff) << 8 | ((uint64_t)(at) & 0xff) << 16 | \
	 ((uint64_t)(bt) & 0xff) << 24 | ((uint64_t)(ct) & 0xff) << 32 | ((uint64_t)(comp) & 0xff) << 40)
static inline unsigned gb_gemm_transa(const struct gb_event *e) { return e->ptr & 0xff; }
static inline unsigned gb_gemm_transb(const struct gb_event *e) { return e->ptr >> 8 & 0xff; }
static inline unsigned gb_gemm_atype(const struct gb_event *e) { return e->ptr >> 16 & 0xff; }
static inline unsigned gb_gemm_btype(const struct gb_event *e) { return e->ptr >> 24 & 0xff; }
static inline unsigned gb_gemm_ctype(const struct gb_event *e) { return e->ptr >> 32 & 0xff; }
static inline unsigned gb_gemm_compute(const struct gb_event *e) { return e->ptr >> 40 & 0xff; }
/* convolution dims: four 16-bit fields, first in the low bits (0: unknown) */
static inline uint64_t gb_dims4_pack(const int64_t *d)
{
	uint64_t v = 0;
	int i;

	for (i = 3; i >= 0; i--)
		v = v << 16 | (uint64_t)(d[i] < 0 ? 0 : d[i] > 0xffff ? 0xffff : d[i]);
	return v;
}
static inline void gb_dims4(uint64_t v, uint16_t *d)
{
	int i;

	for (i = 0; i < 4; i++)
		d[i] = (uint16_t)(v >> (16 * i));
}

/* CUDA/HIP graphs (see event.c): a launch captured into a graph, not run then */
static inline bool gb_event_captured(const struct gb_event *e) { return e->flags & GB_EF_CAPTURED; }
static inline uint64_t gb_graph_of(const struct gb_event *e) { return e->aux[1]; }
/* capture, instantiate, update, destroy and launch of graphs: graph fields (aux[1], arg, detail) */
bool gb_type_graph(unsigned type);
/*
 * The kernel names a graph event lists in detail ("a; b; c"): the next one
 * after *pos (start with *pos = NULL) into buf; false at the end.
 */
bool gb_graph_nodes_next(const struct gb_event *e, const char **pos, char *buf, size_t n);
/* device work is counted once: at the outermost call that asked for it */
static inline bool gb_event_outermost(const struct gb_event *e)
{
	return !(e->flags & GB_EF_NESTED);
}

/* a span on a timeline: a measured duration, or a call still running when last seen */
static inline bool gb_event_span(const struct gb_event *e)
{
	return e->flags & (GB_EF_DUR | GB_EF_INFLIGHT);
}

/* "in_flight", "blocked_at_attach" or NULL (a call that returned, an instant) */
static inline const char *gb_event_state(const struct gb_event *e)
{
	if (e->flags & GB_EF_ATTACHED)
		return "blocked_at_attach";
	return e->flags & GB_EF_INFLIGHT ? "in_flight" : NULL;
}

static inline unsigned gb_event_cat(const struct gb_event *e)
{
	const struct gb_type_info *ti = gb_type_info(e->type);
	return ti ? ti->cat : GB_CAT_OTHER;
}

/*
 * The fields every record header gives (time, ids, cpu; duration and
 * return when it has them), the rest zeroed: every decoder starts here.
 */
void gb_event_from_hdr(struct gb_event *ev, const struct gb_rec *r);
/*
 * Decode one raw BPF call record into an event (strings left NULL; the
 * collector fills comm and name). Returns 0, or -EINVAL for a bad type.
 */
int gb_event_from_rec(struct gb_event *ev, const struct gb_rec *r);

#endif /* GB_EVENT_H */
