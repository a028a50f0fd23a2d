// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * event.c - the type table and the decoding of raw BPF records.
 *
 * Type-specific fields (gb_event.aux / arg / handle):
 *   launches      handle = CUfunction / hipFunction_t / host-stub address / graph exec
 *   memsets       arg = value written
 *   cuKernelGetFunction  handle = CUfunction returned, arg = CUkernel given
 *   GB_SH_ARGS    (VMM map/unmap/access, host register, prefetch/advise, event records,
 *                 host functions, legacy and multi-device launches, name queries): the
 *                 row's argument map (enum gb_argmap) says which register argument is
 *                 ptr, bytes, stream, handle and arg (GB_EF_ARG)
 *   cuMemCreate/hipMemCreate  ptr = the allocation handle returned (device memory is
 *                 counted by it until cuMemRelease/hipMemRelease names it), bytes = size
 *   pool allocations  arg = the memory pool, stream = a[3]; host allocations with flags:
 *                 arg = the flags
 *   xray          handle = function id, arg = logged argument
 *   ioctl         handle = cmd (the 32-bit request), name = its name (NV_ESC_RM_ALLOC,
 *                 UVM_FREE, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU ...; NULL if unknown),
 *                 detail = device (nvidiactl, nvidia0, nvidia-uvm, kfd, renderD128, or
 *                 the --ioctl-dev path), dur/ret from the return, GB_EF_XFAULT when
 *                 the argument was not decoded (unknown cmd, short struct, bad pointer);
 *                 grid[0] = device kind (GB_IODEV_*), grid[1] = source (GB_IOSRC_*),
 *                 grid[2] = fd + 1 (0: unknown), all without GB_EF_GRID;
 *                 src = decoder id (src/ioctl/ioctl.h IOCTL_DEC_*, 0 = not decoded); the
 *                 decoder's fields live in arg, aux[0], aux[1] (32-bit fields in
 *                 halves), bytes, ptr and device as the table in ioctl_names.c says;
 *                 KFD alloc/free: aux[1] = the process's live device memory after the
 *                 call, best-effort (only allocations seen while recording)
 *   collectives   (GB_CAT_COLL: ncclAllReduce ... ncclSend/ncclRecv) handle = communicator,
 *                 stream, arg = element count (GB_EF_ARG), bytes = count x datatype size
 *                 (GB_EF_BYTES, only for a known datatype); aux[0] packs the call:
 *                 bits 0-7 ncclDataType_t, 8-15 ncclRedOp_t (0xff: none, or a dynamic
 *                 op), 32-63 root or peer (int32, -1: none) - see gb_coll_*() in event.h;
 *                 stamped by the collector from the communicator's init:
 *                 aux[1] = communicator id (hash of its ncclUniqueId, equal in every rank;
 *                 0: init not seen), ptr = rank | nranks << 32 (no GB_EF_PTR), src = the
 *                 call's sequence number on its communicator (1, 2, ...; 0: none)
 *   ncclCommInitRank*  handle = the new communicator (0 if init failed), aux[1] = id,
 *                 ptr = rank | nranks << 32, arg = nranks
 *   ncclCommSplit handle = the parent communicator, arg = color (int64: -1 NCCL_SPLIT_NOCOLOR),
 *                 src = the new communicator (0: none); the collector names it aux[1] =
 *                 a hash of the parent's id and the color (the same in every rank that
 *                 chose that color); its rank and size are not known (ptr = 0)
 *   CUDA/HIP graphs  (src/graph/graphs.c stamps them per process) a launch made on a
 *                 capturing stream: GB_EF_CAPTURED (it did not run then), aux[1] = the graph
 *                 it went into (0: capture not ended); graph launches: handle = graph exec,
 *                 stream; cuStreamEndCapture: stream, handle = the graph made;
 *                 cuGraphInstantiate*: handle = the exec made; cuGraphExecUpdate: handle =
 *                 exec; cuGraph(Exec)Destroy: handle. On graph launches, instantiates, updates
 *                 and ends of capture: aux[1] = graph, arg = its kernel nodes (GB_EF_ARG,
 *                 only when the graph's capture was seen), detail = their kernel names
 *                 joined by "; " (gb_graph_nodes_next)
 *   ncclCommInitAll handle = the first communicator, arg = ndev (GB_EF_ARG); the collector
 *                 gives each communicator it made (the first four) rank i of ndev and one
 *                 id, a hash of the first handle and ndev (the job is this one process):
 *                 aux[1] = that id, ptr = 0 | ndev << 32 (the first's rank); other nccl calls:
 *                 handle = the communicator (a[0])
 *   library ops   (GB_CAT_OP, ranges; src/core/libop.c names them) handle = the library
 *                 handle (a[0]). GEMMs (cuBLAS, cuBLASLt): aux[0] = m, aux[1] = n,
 *                 arg = k (GB_EF_ARG), ptr = transa, transb, A/B/C types, compute type
 *                 packed (GB_GEMM_PACK, no GB_EF_PTR), src = batch count, stream (from
 *                 cublasSetStream or cublasLtMatmul's argument; GB_EF_STREAM). cuBLASLt's
 *                 shape comes from the layouts and descriptor (collector, src/libops/).
 *                 Convolutions: aux[0] = x [N,C,H,W], aux[1] = w [K,C,R,S], ptr = y,
 *                 four 16-bit dims each (gb_dims4; 0 unknown), src = pad h, pad w,
 *                 stride h, stride w (16 bits each), grid[0] = dilation h | w << 16,
 *                 grid[1] = cudnnDataType_t + 1 (0: unknown; no GB_EF_GRID), arg = algo.
 *                 cudnnBackendExecute: arg = the execution plan. nvrtcCompileProgram:
 *                 handle = the program, name = its name (nvrtcCreateProgram), arg =
 *                 number of options, detail = the first four, space separated. nvJitLinkComplete: handle = the linker
 *   descriptors   (GB_CAT_DESC) handle = the descriptor / handle set (a[0]);
 *                 cublasSetStream: stream
 *   module loads  from an image (cuModuleLoadData ...): handle = the module, arg = the
 *                 image address, bytes = its size from its ELF or fat binary header
 *                 (GB_EF_BYTES; unknown for PTX text)
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "event.h"
#include "util.h"

const struct gb_type_info gb_types_[GB_T__COUNT] = {
#define GB_X_INFO(n, a, c, s, f, d) [GB_T_##n] = { #n, a, c, s, f, d },
	GB_TYPES(GB_X_INFO)
#undef GB_X_INFO
};

static const char *const api_names[GB_API__COUNT] = {
	[GB_API_NONE] = "none", [GB_API_CUDA_DRV] = "cuda-driver",
	[GB_API_CUDA_RT] = "cuda-runtime", [GB_API_HIP] = "hip",
	[GB_API_HSA] = "hsa", [GB_API_IOCTL] = "ioctl", [GB_API_XRAY] = "xray",
	[GB_API_CUPTI] = "cupti", [GB_API_NVTX] = "nvtx", [GB_API_GPUBPF] = "gpubpf",
	[GB_API_NCCL] = "nccl", [GB_API_CUBLAS] = "cublas", [GB_API_CUBLASLT] = "cublaslt",
	[GB_API_CUDNN] = "cudnn", [GB_API_NVRTC] = "nvrtc", [GB_API_NVJITLINK] = "nvjitlink",
};

static const char *const cat_names[GB_CAT__COUNT] = {
	[GB_CAT_OTHER] = "other", [GB_CAT_LAUNCH] = "launch", [GB_CAT_COPY] = "copy",
	[GB_CAT_MEMSET] = "memset", [GB_CAT_ALLOC] = "alloc", [GB_CAT_FREE] = "free",
	[GB_CAT_SYNC] = "sync", [GB_CAT_NAME] = "name", [GB_CAT_IOCTL] = "ioctl",
	[GB_CAT_FUNC] = "func", [GB_CAT_MARK] = "mark", [GB_CAT_DEVICE] = "device",
	[GB_CAT_COLL] = "collective", [GB_CAT_OP] = "op", [GB_CAT_DESC] = "descriptor",
};

/* ncclDataType_t (nccl.h): name and size in bytes */
static const struct {
	const char *name;
	uint8_t size;
} nccl_dtypes[] = {
	{ "int8", 1 }, { "uint8", 1 }, { "int32", 4 }, { "uint32", 4 }, { "int64", 8 },
	{ "uint64", 8 }, { "float16", 2 }, { "float32", 4 }, { "float64", 8 },
	{ "bfloat16", 2 }, { "float8e4m3", 1 }, { "float8e5m2", 1 },
};

const char *gb_nccl_dtype_name(unsigned dt)
{
	return dt < sizeof(nccl_dtypes) / sizeof(nccl_dtypes[0]) ? nccl_dtypes[dt].name : NULL;
}

unsigned gb_nccl_dtype_size(unsigned dt)
{
	return dt < sizeof(nccl_dtypes) / sizeof(nccl_dtypes[0]) ? nccl_dtypes[dt].size : 0;
}

const char *gb_nccl_redop_name(unsigned op)
{
	static const char *const n[] = { "sum", "prod", "max", "min", "avg" };

	return op < sizeof(n) / sizeof(n[0]) ? n[op] : NULL;
}

const char *gb_type_name(unsigned type)
{
	return type < GB_T__COUNT ? gb_types_[type].name : "?";
}

bool gb_type_can_block(unsigned type)
{
	const struct gb_type_info *ti = gb_type_info(type);

	if (!ti || !(ti->tflags & GB_TF_RET))
		return false;
	switch (ti->cat) {
	case GB_CAT_SYNC: case GB_CAT_COPY: case GB_CAT_MEMSET: case GB_CAT_ALLOC: case GB_CAT_FREE:
		return true;
	}
	return ti->tflags & GB_TF_BLOCKS;
}

int gb_type_by_name(const char *name)
{
	unsigned i;

	for (i = 0; i < GB_T__COUNT; i++)
		if (!strcmp(gb_types_[i].name, name))
			return (int)i;
	return -1;
}

const char *gb_api_name(unsigned api)
{
	return api < GB_API__COUNT ? api_names[api] : "?";
}

bool gb_api_is_library(unsigned api)
{
	switch (api) {
	case GB_API_CUDA_DRV: case GB_API_CUDA_RT: case GB_API_HIP: case GB_API_HSA:
	case GB_API_NCCL: case GB_API_CUBLAS: case GB_API_CUBLASLT: case GB_API_CUDNN:
	case GB_API_NVRTC: case GB_API_NVJITLINK:
		return true;
	}
	return false;
}

bool gb_type_wants_stack(int mode, unsigned type)
{
	const struct gb_type_info *ti = type < GB_T__COUNT ? gb_type_info(type) : NULL;

	if (!ti || !gb_api_is_library(ti->api) || mode == GB_STACK_NONE)
		return false;
	if (mode == GB_STACK_FP)
		return true;
	switch (ti->cat) {
	case GB_CAT_LAUNCH:
	case GB_CAT_COPY:
	case GB_CAT_MEMSET:
	case GB_CAT_ALLOC:
	case GB_CAT_FREE:
	case GB_CAT_COLL:
	case GB_CAT_OP:
		return true;
	}
	return false;
}

const char *gb_cat_name(unsigned cat)
{
	return cat < GB_CAT__COUNT ? cat_names[cat] : "?";
}

const char *gb_kind_name(unsigned kind)
{
	static const char *const k[] = { NULL, "HtoD", "DtoH", "DtoD", "HtoH", "Default" };

	return kind < sizeof(k) / sizeof(k[0]) ? k[kind] : NULL;
}

const char *gb_prov_name(unsigned prov)
{
	static const char *const p[] = { NULL, "launch-only", "bounded", "device" };

	return prov < sizeof(p) / sizeof(p[0]) ? p[prov] : NULL;
}

/* cudaMemcpyKind / hipMemcpyKind: 0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 Default */
static uint8_t kind_from_rt(uint64_t k)
{
	static const uint8_t map[] = { GB_K_HTOH, GB_K_HTOD, GB_K_DTOH, GB_K_DTOD, GB_K_DEFAULT };

	return k < sizeof(map) ? map[k] : GB_K_NONE;
}

/* CUmemorytype: 1 host, 2 device, 3 array, 4 unified */
static uint8_t kind_from_memtypes(uint64_t src, uint64_t dst)
{
	bool sh = src == 1, dh = dst == 1;

	if (src == 4 || dst == 4 || !src || !dst)
		return GB_K_DEFAULT;
	if (sh && dh)
		return GB_K_HTOH;
	if (sh)
		return GB_K_HTOD;
	if (dh)
		return GB_K_DTOH;
	return GB_K_DTOD;
}

/*
 * What a type's name says (an async call, which kind of sync, a graph
 * call), read once at start-up: the decoder asks per record, and strstr
 * there cost 5% of the collector's time (bench/collector_bench.sh).
 */
static uint8_t traits[GB_T__COUNT];

__attribute__((constructor)) static void read_traits(void)
{
	unsigned t;

	for (t = 0; t < GB_T__COUNT; t++) {
		const char *n = gb_types_[t].name;

		if (!n)
			continue;
		if (strstr(n, "Async") || strstr(n, "WithStream"))	/* hipMemcpyWithStream */
			traits[t] |= GB_TT_ASYNC;
		if (strstr(n, "StreamWaitEvent"))
			traits[t] |= GB_TT_STREAM_WAIT;
		else if (strstr(n, "Stream"))
			traits[t] |= GB_TT_STREAM;
		else if (strstr(n, "Event"))
			traits[t] |= GB_TT_EVENT;
		if (strstr(n, "CtxSynchronize") || strstr(n, "DeviceSynchronize"))
			traits[t] |= GB_TT_ALL_SYNC;
		if (strstr(n, "StreamSynchronize"))
			traits[t] |= GB_TT_STREAM_SYNC;
		if (strstr(n, "Graph") || strstr(n, "Capture"))
			traits[t] |= GB_TT_GRAPH;
	}
}

unsigned gb_type_traits(unsigned type)
{
	return type < GB_T__COUNT ? traits[type] : 0;
}

static bool is_async(const struct gb_type_info *ti)
{
	return traits[ti - gb_types_] & GB_TT_ASYNC;
}

/*
 * GB_SH_ARGS: register index + 1 of each field, 0 = not there. One table
 * instead of per-name code: a new entry point with a known layout is a
 * table line in gpubpf.h.
 */
struct argmap {
	uint8_t ptr, bytes, stream, handle, arg;
};

static const struct argmap argmaps[GB_AM__COUNT] = {
	[GB_AM_PTR]		= { .ptr = 1 },
	[GB_AM_RANGE]		= { .ptr = 1, .bytes = 2 },
	[GB_AM_RANGE_ARG]	= { .ptr = 1, .bytes = 2, .arg = 3 },
	[GB_AM_MAP]		= { .ptr = 1, .bytes = 2, .arg = 3, .handle = 4 },
	[GB_AM_SETACCESS]	= { .ptr = 1, .bytes = 2, .handle = 3, .arg = 4 },
	[GB_AM_PREFETCH]	= { .ptr = 1, .bytes = 2, .arg = 3, .stream = 4 },
	[GB_AM_PREFETCH_LOC]	= { .ptr = 1, .bytes = 2, .arg = 3, .stream = 5 },
	[GB_AM_ADVISE]		= { .ptr = 1, .bytes = 2, .arg = 3, .handle = 4 },
	[GB_AM_EVREC]		= { .handle = 1, .stream = 2 },
	[GB_AM_EVREC_FLAGS]	= { .handle = 1, .stream = 2, .arg = 3 },
	[GB_AM_HOSTFN]		= { .stream = 1, .handle = 2, .arg = 3 },
	[GB_AM_HANDLE0]		= { .handle = 1 },
	[GB_AM_HANDLE1]		= { .handle = 2 },
	[GB_AM_GRID]		= { .handle = 1, .arg = 2 },
	[GB_AM_GRID_ASYNC]	= { .handle = 1, .arg = 2, .stream = 4 },
	[GB_AM_MULTIDEV]	= { .handle = 1, .arg = 2 },
	[GB_AM_STREAM0]		= { .stream = 1 },
};

static void decode_args(struct gb_event *ev, const struct gb_type_info *ti, const __u64 *a)
{
	const struct argmap *m = ti->detail < GB_AM__COUNT ? &argmaps[ti->detail] : &argmaps[0];

	if (m->ptr) {
		ev->ptr = a[m->ptr - 1];
		ev->flags |= GB_EF_PTR;
	}
	if (m->bytes) {
		ev->bytes = a[m->bytes - 1];
		ev->flags |= GB_EF_BYTES;
	}
	if (m->stream) {
		ev->stream = a[m->stream - 1];
		ev->flags |= GB_EF_STREAM;
	}
	if (m->handle)
		ev->handle = a[m->handle - 1];
	if (m->arg) {
		ev->arg = a[m->arg - 1];
		ev->flags |= GB_EF_ARG;
	}
}

/* GB_SH_OUT0 allocations: *a[0] at return, size a[1], the rest by detail */
static void decode_out0_alloc(struct gb_event *ev, const struct gb_type_info *ti, const __u64 *a,
			      const __u64 *x)
{
	ev->ptr = x[0];
	ev->bytes = a[1];
	ev->flags |= GB_EF_PTR | GB_EF_BYTES;
	switch (ti->detail) {
	case GB_D_OUT0_POOL:
		ev->arg = a[2];
		ev->stream = a[3];
		ev->flags |= GB_EF_STREAM | GB_EF_ARG;
		break;
	case GB_D_OUT0_ARG2:
		ev->arg = a[2];
		ev->flags |= GB_EF_ARG;
		break;
	default:
		if (is_async(ti)) {
			ev->stream = a[2];
			ev->flags |= GB_EF_STREAM;
		}
		break;
	}
}

static void set_grid(struct gb_event *ev, uint64_t gx, uint64_t gy, uint64_t gz,
		     uint64_t bx, uint64_t by, uint64_t bz, uint64_t shmem)
{
	ev->grid[0] = (uint32_t)gx;
	ev->grid[1] = (uint32_t)gy;
	ev->grid[2] = (uint32_t)gz;
	ev->block[0] = (uint32_t)bx;
	ev->block[1] = (uint32_t)by;
	ev->block[2] = (uint32_t)bz;
	ev->shmem = (uint32_t)shmem;
	ev->flags |= GB_EF_GRID;
}

static void decode_plain(struct gb_event *ev, const struct gb_type_info *ti, const struct gb_rec *r)
{
	const __u64 *a = r->a;
	bool async = is_async(ti);

	switch (ti->cat) {
	case GB_CAT_LAUNCH:	/* graph launches: exec handle, stream */
		ev->handle = a[0];
		ev->stream = a[1];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_CAT_COPY:
		ev->ptr = a[0];
		ev->src = a[1];
		ev->bytes = a[2];
		ev->flags |= GB_EF_PTR | GB_EF_BYTES;
		if (ti->detail == GB_K_ARG) {
			ev->kind = kind_from_rt(a[3]);
			if (async) {
				ev->stream = a[4];
				ev->flags |= GB_EF_STREAM;
			}
		} else {
			ev->kind = ti->detail;
			if (async) {
				ev->stream = a[3];
				ev->flags |= GB_EF_STREAM;
			}
		}
		break;
	case GB_CAT_MEMSET:
		ev->ptr = a[0];
		ev->arg = a[1];
		ev->bytes = a[2] * (ti->detail ? ti->detail : 1);
		ev->flags |= GB_EF_PTR | GB_EF_BYTES;
		if (async) {
			ev->stream = a[3];
			ev->flags |= GB_EF_STREAM;
		}
		break;
	case GB_CAT_FREE:
		ev->ptr = a[0];
		ev->flags |= GB_EF_PTR;
		if (async) {
			ev->stream = a[1];
			ev->flags |= GB_EF_STREAM;
		}
		break;
	case GB_CAT_SYNC:
		if (traits[ti - gb_types_] & GB_TT_STREAM_WAIT) {
			ev->stream = a[0];
			ev->handle = a[1];
			ev->flags |= GB_EF_STREAM;
		} else if (traits[ti - gb_types_] & GB_TT_STREAM) {
			ev->stream = a[0];
			ev->flags |= GB_EF_STREAM;
		} else if (traits[ti - gb_types_] & GB_TT_EVENT) {
			ev->handle = a[0];
		}
		break;
	default:
		ev->handle = a[0];
		break;
	}
}

static uint64_t image_size(const __u64 *x);

static void decode_shaped(struct gb_event *ev, const struct gb_type_info *ti, const struct gb_rec *r)
{
	const __u64 *a = r->a, *x = r->x;

	switch (ti->shape) {
	case GB_SH_LAUNCH_DRV:
		ev->handle = a[0];
		if (ti->detail == 1) {	/* hipExtModuleLaunchKernel: global work sizes */
			set_grid(ev, a[4] ? a[1] / a[4] : a[1], a[5] ? a[2] / a[5] : a[2],
				 x[0] ? a[3] / x[0] : a[3], a[4], a[5], x[0], x[1]);
		} else {
			set_grid(ev, a[1], a[2], a[3], a[4], a[5], x[0], x[1]);
		}
		ev->stream = x[2];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_SH_LAUNCH_DRV_EX:
	case GB_SH_LAUNCH_RT_EX:
		ev->handle = a[1];
		set_grid(ev, x[0] & 0xffffffff, x[0] >> 32, x[1] & 0xffffffff,
			 x[1] >> 32, x[2] & 0xffffffff, x[2] >> 32,
			 ti->shape == GB_SH_LAUNCH_DRV_EX ? (x[3] & 0xffffffff) : x[3]);
		ev->stream = x[4];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_SH_LAUNCH_RT:
		ev->handle = a[0];
		set_grid(ev, a[1] & 0xffffffff, a[1] >> 32, a[2] & 0xffffffff,
			 a[3] & 0xffffffff, a[3] >> 32, a[4] & 0xffffffff, x[0]);
		ev->stream = x[1];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_SH_MEMCPY2D:
	case GB_SH_MEMCPY3D:
		ev->kind = kind_from_memtypes(x[0], x[1]);
		ev->bytes = x[2] * x[3] * (ti->shape == GB_SH_MEMCPY3D ? x[4] : 1);
		ev->flags |= GB_EF_BYTES;
		if (is_async(ti)) {
			ev->stream = a[1];
			ev->flags |= GB_EF_STREAM;
		}
		break;
	case GB_SH_HIP_MEMCPY2D:
		ev->ptr = a[0];
		ev->src = a[2];
		ev->bytes = a[4] * a[5];
		ev->kind = kind_from_rt(x[0]);
		ev->flags |= GB_EF_PTR | GB_EF_BYTES;
		break;
	case GB_SH_OUT0:
		if (ti->cat == GB_CAT_ALLOC) {
			decode_out0_alloc(ev, ti, a, x);
		} else if (ti->detail == GB_D_OUT0_RANGE) {	/* reserved address range */
			ev->ptr = x[0];
			ev->bytes = a[1];
			ev->flags |= GB_EF_PTR | GB_EF_BYTES;
		} else {
			ev->handle = x[0];
			ev->arg = a[1];
		}
		break;
	case GB_SH_OUT1:	/* cuStreamEndCapture: the stream, the graph made */
		ev->stream = a[0];
		ev->handle = x[0];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_SH_NCCL_INITALL:	/* the first communicator; the collector reads the rest */
		ev->handle = x[0];
		ev->arg = a[1];
		ev->flags |= GB_EF_ARG;
		break;
	case GB_SH_NAME:
		ev->handle = x[0];
		ev->arg = a[1];
		break;
	case GB_SH_MODLOAD:
		ev->handle = x[0];
		ev->arg = a[1];
		ev->bytes = image_size(x);
		if (ev->bytes)
			ev->flags |= GB_EF_BYTES;
		break;
	case GB_SH_NCCL_INIT:
		ev->handle = x[1];
		ev->aux[1] = x[0];
		ev->ptr = (uint32_t)x[3] | (x[2] << 32);
		ev->arg = x[2];
		ev->flags |= GB_EF_ARG;
		break;
	case GB_SH_NCCL_SPLIT:
		ev->handle = a[0];
		ev->arg = (uint64_t)(int64_t)(int32_t)a[1];
		ev->src = x[1];
		ev->flags |= GB_EF_ARG;
		break;
	case GB_SH_ARGS:
		decode_args(ev, ti, a);
		break;
	case GB_SH_REGFUNC:
		ev->handle = a[1];	/* the host stub a launch passes */
		ev->arg = a[0];		/* the fat binary handle */
		ev->ret = 0;		/* returns void: rax is noise */
		break;
	default:
		decode_plain(ev, ti, r);
		break;
	}
}

/* ELF64 or fat binary header words x[1..4] (GB_SH_MODLOAD): the image size, 0 unknown */
static uint64_t image_size(const __u64 *x)
{
	uint64_t shoff = x[3], shent = x[4] >> 16 & 0xffff, shnum = x[4] >> 32 & 0xffff;

	if ((uint32_t)x[1] == 0x464c457f && (x[1] >> 32 & 0xff) == 2)	/* \x7fELF, 64-bit */
		return shoff + shent * shnum;
	if ((uint32_t)x[1] == 0xba55ed50)	/* fat binary: header size + payload size */
		return (x[1] >> 48) + x[2];
	return 0;
}

static uint64_t int_arg(uint64_t v, bool wide)
{
	return wide ? v : (uint64_t)(int64_t)(int32_t)v;
}

/* library operations and descriptors (GB_CAT_OP, GB_CAT_DESC): by detail */
static void decode_op(struct gb_event *ev, const struct gb_type_info *ti, const struct gb_rec *r)
{
	static const uint8_t typed[][2] = {	/* data type, compute type of S/D/H/C/Z gemm */
		[GB_OP_SGEMM] = { 0, 68 }, [GB_OP_DGEMM] = { 1, 70 }, [GB_OP_HGEMM] = { 2, 64 },
		[GB_OP_CGEMM] = { 4, 68 }, [GB_OP_ZGEMM] = { 5, 70 },
	};
	const __u64 *a = r->a, *x = r->x;
	unsigned d = ti->detail & ~GB_OP_64;
	bool wide = ti->detail & GB_OP_64;

	ev->handle = a[0];
	switch (d) {
	case GB_OP_SGEMM: case GB_OP_DGEMM: case GB_OP_HGEMM: case GB_OP_CGEMM: case GB_OP_ZGEMM:
	case GB_OP_GEMM_EX:
		ev->aux[0] = int_arg(a[3], wide);
		ev->aux[1] = int_arg(a[4], wide);
		ev->arg = int_arg(a[5], wide);
		ev->flags |= GB_EF_ARG;
		ev->src = 1;
		if (d != GB_OP_GEMM_EX) {
			ev->ptr = GB_GEMM_PACK(a[1], a[2], typed[d][0], typed[d][0], typed[d][0], typed[d][1]);
			break;
		}
		ev->ptr = GB_GEMM_PACK(a[1], a[2], x[0], x[1], x[2], x[3]);
		if (ti->shape != GB_SH_GEMM_EX)
			ev->src = int_arg(x[4], wide);
		break;
	case GB_OP_LT_MATMUL:
		ev->stream = x[3];
		ev->flags |= GB_EF_STREAM;
		break;
	case GB_OP_CONV_FWD: case GB_OP_CONV_BWD_DATA: case GB_OP_CONV_BWD_FILTER:
		ev->arg = (uint32_t)x[1];
		ev->flags |= GB_EF_ARG;
		break;
	case GB_OP_DNN_EXEC:
	case GB_OP_JIT_COMPILE:
		ev->arg = d == GB_OP_JIT_COMPILE ? (uint64_t)(int64_t)(int32_t)a[1] : a[1];
		ev->flags |= GB_EF_ARG;
		break;
	case GB_OP_LT_LAYOUT:
	case GB_OP_LT_DESC:
		ev->handle = x[0];	/* the object made (read at return) */
		break;
	case GB_OP_SETSTREAM:
		ev->stream = a[1];
		ev->flags |= GB_EF_STREAM;
		break;
	}
}

static uint64_t coll_aux(uint64_t dt, uint64_t op, int64_t root)
{
	return (dt & 0xff) | ((op > 0xfe ? 0xff : op) << 8) | ((uint64_t)(uint32_t)(int32_t)root << 32);
}

/* collectives and point-to-point calls, by argument layout (ti->detail) */
static void decode_coll(struct gb_event *ev, const struct gb_type_info *ti, const struct gb_rec *r)
{
	const __u64 *a = r->a, *x = r->x;
	uint64_t count = a[2], dt = a[3], op = 0xff, comm = 0, stream = 0;
	int64_t root = -1;

	switch (ti->detail) {
	case GB_NC_ALLREDUCE:
		op = (uint32_t)a[4], comm = a[5], stream = x[0];
		break;
	case GB_NC_REDUCE:
		op = (uint32_t)a[4], root = (int32_t)a[5], comm = x[0], stream = x[1];
		break;
	case GB_NC_BCAST:
		root = (int32_t)a[4], comm = a[5], stream = x[0];
		break;
	case GB_NC_GATHER:
		comm = a[4], stream = a[5];
		break;
	case GB_NC_P2P:
		count = a[1], dt = a[2], root = (int32_t)a[3], comm = a[4], stream = a[5];
		break;
	}
	dt = (uint32_t)dt;
	ev->handle = comm;
	ev->stream = stream;
	ev->arg = count;
	ev->aux[0] = coll_aux(dt, op, root);
	ev->flags |= GB_EF_STREAM | GB_EF_ARG;
	if (gb_nccl_dtype_size(dt)) {
		ev->bytes = count * gb_nccl_dtype_size(dt);
		ev->flags |= GB_EF_BYTES;
	}
}

void gb_event_from_hdr(struct gb_event *ev, const struct gb_rec *r)
{
	/* copied from a zero one: GCC moves it with vector stores, where memset is a rep stos slow to start */
	static const struct gb_event zero;

	*ev = zero;
	ev->ts_ns = r->ts_ns;
	ev->pid = r->pid;
	ev->tid = r->tid;
	ev->ns_pid = r->ns_pid;
	ev->ns_tid = r->ns_tid;
	ev->cpu = (uint8_t)r->cpu;
	if (r->flags & GB_RF_RET) {
		ev->dur_ns = r->dur_ns;
		ev->ret = r->ret;
		ev->flags |= GB_EF_DUR | GB_EF_RET;
	}
}

int gb_event_from_rec(struct gb_event *ev, const struct gb_rec *r)
{
	const struct gb_type_info *ti = gb_type_info(r->type);

	gb_event_from_hdr(ev, r);
	if (!ti || r->type == GB_T_none) {
		memset(ev, 0, sizeof(*ev));
		return -EINVAL;
	}
	ev->type = r->type;
	ev->api = ti->api;
	if (r->flags & GB_RF_XFAULT)
		ev->flags |= GB_EF_XFAULT;
	if (r->flags & GB_RF_NESTED)
		ev->flags |= GB_EF_NESTED;
	if (ti->cat == GB_CAT_COLL)
		decode_coll(ev, ti, r);
	else if (ti->cat == GB_CAT_OP || ti->cat == GB_CAT_DESC)
		decode_op(ev, ti, r);
	else if (ti->shape == GB_SH_PLAIN)
		decode_plain(ev, ti, r);
	else
		decode_shaped(ev, ti, r);
	if (ti->cat == GB_CAT_LAUNCH)
		ev->prov = GB_PROV_LAUNCH_ONLY;
	if ((r->flags & GB_RF_REGS) && ti->shape != GB_SH_PLAIN) {
		/* --lean: what a launch passes on the stack (or in its config) was not read */
		ev->flags |= GB_EF_REGS;
		ev->flags &= ~GB_EF_STREAM;
		ev->stream = 0;
		if (ti->shape == GB_SH_LAUNCH_DRV_EX || ti->shape == GB_SH_LAUNCH_RT_EX)
			ev->flags &= ~GB_EF_GRID;
	}
	return 0;
}

bool gb_graph_nodes_next(const struct gb_event *e, const char **pos, char *buf, size_t n)
{
	const char *s = *pos ? *pos : e->detail, *end;
	size_t len;

	if (!s || !*s || !n)
		return false;
	end = strstr(s, "; ");
	len = end ? (size_t)(end - s) : strlen(s);
	if (len >= n)
		len = n - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	*pos = end ? end + 2 : s + strlen(s);
	return true;
}

bool gb_type_graph(unsigned type)
{
	return gb_type_traits(type) & GB_TT_GRAPH;
}
