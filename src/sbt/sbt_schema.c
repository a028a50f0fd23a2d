// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_schema.c - the names behind a trace's numbers (sbt_schema.h).
 *
 * Each note is the names of one enum in number order, separated by spaces
 * ("-" for a number without a name). A reader maps every number of the file
 * to its own by name once, at open, and the decoder rewrites the static
 * fields of each block's templates (a few hundred per block): nothing per
 * event.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/util.h"
#include "sbt_schema.h"

#define SMALL_MAX	64	/* apis, kinds, provenances: numbers that can have a name */

typedef const char *(*name_fn)(unsigned);

static const char *type_name(unsigned i) { return i < GB_T__COUNT ? gb_type_name(i) : NULL; }
static const char *api_name(unsigned i) { return i < GB_API__COUNT ? gb_api_name(i) : NULL; }

static char *names_note(name_fn fn, unsigned n)
{
	struct gb_buf b = { 0 };
	unsigned i;

	for (i = 0; i < n; i++) {
		const char *s = fn(i);

		gb_buf_printf(&b, "%s%s", i ? " " : "", s ? s : "-");
	}
	gb_buf_putc(&b, 0);
	return (char *)b.p;
}

/* the highest number + 1 that fn names */
static unsigned named(name_fn fn)
{
	unsigned i, n = 0;

	for (i = 0; i < SMALL_MAX; i++)
		if (fn(i))
			n = i + 1;
	return n;
}

char *sbt_schema_note(unsigned i, const char **key)
{
	static const struct { const char *key; name_fn fn; unsigned n; } notes[] = {
		{ NOTE_TYPES, type_name, GB_T__COUNT },
		{ NOTE_APIS, api_name, GB_API__COUNT },
		{ NOTE_KINDS, gb_kind_name, 0 },
		{ NOTE_PROV, gb_prov_name, 0 },
	};

	if (i >= sizeof(notes) / sizeof(notes[0]))
		return NULL;
	*key = notes[i].key;
	return names_note(notes[i].fn, notes[i].n ? notes[i].n : named(notes[i].fn));
}

/* ---------------- reading ---------------- */

/* Map a small enum's names note onto ours: map[file number] = our number (0 if unknown) */
static void small_map(uint8_t *map, const char *note, name_fn fn)
{
	unsigned i, j, n = named(fn);
	const char *p = note;

	for (i = 0; i < 256; i++)
		map[i] = (uint8_t)i;
	if (!note)
		return;
	for (i = 0; i < 256 && *p; i++) {
		size_t len = strcspn(p, " ");

		map[i] = 0;
		for (j = 0; j < n; j++)
			if (fn(j) && strlen(fn(j)) == len && !memcmp(fn(j), p, len))
				map[i] = (uint8_t)j;
		p += len;
		p += *p == ' ';
	}
}

static int set_type(struct sbt_schema *s, uint32_t i, const char *name, size_t len)
{
	char buf[128];
	int t;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 100 ? len : 100), name);
	t = gb_type_by_name(buf);
	if (t >= 0) {
		s->type[i] = (uint16_t)t;
		return 0;
	}
	s->type[i] = GB_T_none;
	if (asprintf(&s->unknown[i], "unknown type '%s' (from a newer gpubpf)", buf) < 0) {
		s->unknown[i] = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int alloc_types(struct sbt_schema *s, uint32_t n)
{
	s->ntype = n;
	s->type = calloc(n ? n : 1, sizeof(*s->type));
	s->unknown = calloc(n ? n : 1, sizeof(*s->unknown));
	return s->type && s->unknown ? 0 : -ENOMEM;
}

static int from_note(struct sbt_schema *s, const char *note)
{
	const char *p;
	uint32_t n = 1, i;
	int err;

	for (p = note; *p; p++)
		n += *p == ' ';
	if ((err = alloc_types(s, n)))
		return err;
	for (i = 0, p = note; i < n; i++) {
		size_t len = strcspn(p, " ");

		if ((err = set_type(s, i, p, len)))
			return err;
		p += len;
		p += *p == ' ';
	}
	snprintf(s->source, sizeof(s->source), "%s", NOTE_TYPES);
	return 0;
}

const char *sbt_schema_v0_name(const struct sbt_schema_v0 *t, unsigned i)
{
	if (i < t->nbase)
		return t->base[i];
	i -= t->nbase;
	return i < t->ntail ? t->tail[i] : NULL;
}

static int from_v0(struct sbt_schema *s, const struct sbt_schema_v0 *t)
{
	uint32_t i, n = t->nbase + t->ntail;
	int err;

	if ((err = alloc_types(s, n)))
		return err;
	for (i = 0; i < n; i++) {
		const char *nm = sbt_schema_v0_name(t, i);

		if ((err = set_type(s, i, nm, strlen(nm))))
			return err;
	}
	snprintf(s->source, sizeof(s->source), "v0 %s", t->label);
	return 0;
}

/*
 * What a row's records look like once decoded: the field flags every record
 * of it has (must) and those some may have (may), and whether it names a
 * copy kind. Found by decoding two made-up records of the row, one with
 * every argument 0 and one with every argument set, with this build's
 * decoder, which decodes a row as the builds of the frozen tables did.
 */
#define SHAPE_FLAGS	(GB_EF_GRID | GB_EF_STREAM | GB_EF_BYTES | GB_EF_PTR | GB_EF_ARG)

struct row_shape {
	uint32_t must, may;
	uint8_t kind_must, kind_may;
};

static void decode_made_up(struct gb_event *ev, unsigned type, bool set)
{
	struct gb_rec r;
	unsigned i;

	memset(&r, 0, sizeof(r));
	r.kind = GB_REC_CALL;
	r.type = (__u16)type;
	r.flags = GB_RF_RET;
	for (i = 0; set && i < GB_NARGS; i++)
		r.a[i] = 0x10 + i;
	for (i = 0; set && i < GB_NX; i++)
		r.x[i] = 0x20 + i;
	if (set) {	/* an ELF header for module loads (their size comes from it) */
		r.x[1] = 0x464c457fULL | 2ULL << 32;
		r.x[4] = 64ULL << 16 | 8ULL << 32;
	}
	if (gb_event_from_rec(ev, &r))
		memset(ev, 0, sizeof(*ev));
}

static struct row_shape rows[GB_T__COUNT];

static void fill_rows(void)
{
	struct gb_event a, b;
	unsigned t;

	for (t = 0; t < GB_T__COUNT; t++) {
		struct row_shape *rs = &rows[t];

		decode_made_up(&a, t, false);
		decode_made_up(&b, t, true);
		rs->must = a.flags & b.flags & SHAPE_FLAGS;
		rs->may = (a.flags | b.flags) & SHAPE_FLAGS;
		rs->kind_must = a.kind && b.kind;
		rs->kind_may = a.kind || b.kind || gb_type_info(t)->cat == GB_CAT_COPY;
	}
}

static const struct row_shape *row_shape(unsigned type)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fill_rows);
	return &rows[type];
}

/* does a decoded call (ev) contradict row t: another API, or fields its records never have */
static bool contradicts(const struct gb_event *ev, int t)
{
	const struct row_shape *rs;
	uint32_t f = ev->flags & SHAPE_FLAGS;

	if (t < 0 || gb_type_info((unsigned)t)->api != ev->api)
		return true;
	/* --lean records, unread arguments and points in time say less than their row */
	if (ev->flags & (GB_EF_REGS | GB_EF_XFAULT | GB_EF_INSTANT))
		return false;
	rs = row_shape((unsigned)t);
	return (f & ~rs->may) || (rs->must & ~f) || (ev->kind && !rs->kind_may) ||
	       (!ev->kind && rs->kind_must);
}

/*
 * A trace from before the notes: its records still say which API each call
 * belongs to, and their fields what shape of call made them. Count, for each
 * old table, the records its type would contradict (another API, or fields
 * such a call never has: the tables diverge where one branch put NCCL or
 * cuBLAS rows and another CUDA rows, or CUDA rows of other families); the
 * table with the fewest wrote the trace.
 */
void sbt_schema_v0_count(struct sbt_schema_vote *v, const struct gb_event *ev, uint32_t n)
{
	uint32_t j, k;

	for (j = 0; j < n; j++) {
		if (ev[j].type < SBT_SCHEMA_SEEN)
			v->seen[ev[j].type / 8] |= (uint8_t)(1u << (ev[j].type % 8));
		for (k = 0; k < sbt_schema_v0_n && k < SBT_SCHEMA_V0_MAX; k++) {
			const char *nm = sbt_schema_v0_name(&sbt_schema_v0[k], ev[j].type);

			v->bad[k] += contradicts(&ev[j], nm ? gb_type_by_name(nm) : -1);
		}
	}
}

/* the types the trace holds that tables a and b name otherwise */
static unsigned differ(const struct sbt_schema_vote *v, unsigned a, unsigned b)
{
	unsigned t, n = 0;

	for (t = 0; t < SBT_SCHEMA_SEEN; t++) {
		const char *x, *y;

		if (!(v->seen[t / 8] & (1u << (t % 8))))
			continue;
		x = sbt_schema_v0_name(&sbt_schema_v0[a], t);
		y = sbt_schema_v0_name(&sbt_schema_v0[b], t);
		n += !x || !y || strcmp(x, y);
	}
	return n;
}

/*
 * The table with the fewest contradictions; ties go to main's (the first).
 * GPUBPF_V0_TABLE names one to use instead. A table that ties with it and
 * names some of the trace's types otherwise is said in *doubt.
 */
const struct sbt_schema_v0 *sbt_schema_v0_best(const struct sbt_schema_vote *v, char *doubt, size_t len)
{
	const char *want = getenv("GPUBPF_V0_TABLE");
	unsigned k, best = 0, n;

	for (k = 1; k < sbt_schema_v0_n && k < SBT_SCHEMA_V0_MAX; k++)
		if (v->bad[k] < v->bad[best])
			best = k;
	if (doubt && len)
		doubt[0] = 0;
	for (k = 0; want && *want && k < sbt_schema_v0_n && k < SBT_SCHEMA_V0_MAX; k++)
		if (!strcmp(want, sbt_schema_v0[k].label)) {
			if (doubt && len)
				snprintf(doubt, len, "chosen by GPUBPF_V0_TABLE=%s", want);
			return &sbt_schema_v0[k];
		}
	for (k = 0; doubt && k < sbt_schema_v0_n && k < SBT_SCHEMA_V0_MAX; k++) {
		if (k == best || v->bad[k] != v->bad[best] || !(n = differ(v, best, k)))
			continue;
		snprintf(doubt, len, "the '%s' table fits its records as well and names %u of its "
			 "types otherwise; if that build wrote it, read it with GPUBPF_V0_TABLE=%s",
			 sbt_schema_v0[k].label, n, sbt_schema_v0[k].label);
		break;
	}
	return &sbt_schema_v0[best];
}

int sbt_schema_init(struct sbt_schema *s, const char *types, const struct sbt_schema_v0 *v0,
		    const char *apis, const char *kinds, const char *prov)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = types ? from_note(s, types) : from_v0(s, v0 ? v0 : &sbt_schema_v0[0]);
	if (err)
		return err;
	small_map(s->api, apis, api_name);
	small_map(s->kind, kinds, gb_kind_name);
	small_map(s->prov, prov, gb_prov_name);
	s->remap = true;
	return 0;
}

void sbt_schema_apply(const struct sbt_schema *s, struct gb_event *ev, uint32_t n)
{
	uint32_t i;

	if (!s || !s->remap)
		return;
	for (i = 0; i < n; i++) {
		uint32_t t = ev[i].type;

		if (t < s->ntype) {
			ev[i].type = s->type[t];
			if (s->unknown[t])
				ev[i].detail = s->unknown[t];
		} else {	/* a number no table names: damage, or a file gone wrong */
			ev[i].type = GB_T_none;
			ev[i].detail = "unknown type number (not in the trace's type table)";
		}
		ev[i].api = s->api[ev[i].api];
		ev[i].kind = s->kind[ev[i].kind];
		ev[i].prov = s->prov[ev[i].prov];
	}
}

void sbt_schema_free(struct sbt_schema *s)
{
	uint32_t i;

	for (i = 0; s->unknown && i < s->ntype; i++)
		free(s->unknown[i]);
	free(s->unknown);
	free(s->type);
	memset(s, 0, sizeof(*s));
}

/* ---------------- the tables of the builds before "sbt.types" ----------------
 * Frozen: what those files' bare type numbers meant, whatever GB_TYPES says
 * now. Made once from the history of bpf/gpubpf.h: the table of main as it
 * stood, and the two branches whose rows were later merged in another order
 * (their traces exist: tests/fixtures/sbt/golden).
 */
/* main up to 1c8bef0 (321 rows; the table only grew at its end on main) */
static const char *const v0_main[] = {
	"none", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
	"cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
	"cuGraphLaunch", "cuGraphLaunch_ptsz", "cuMemcpy", "cuMemcpyAsync", "cuMemcpyHtoD_v2",
	"cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	"cuMemcpyDtoDAsync_v2", "cuMemcpy2D_v2", "cuMemcpy2DAsync_v2", "cuMemcpy3D_v2",
	"cuMemcpy3DAsync_v2", "cuMemsetD8_v2", "cuMemsetD16_v2", "cuMemsetD32_v2",
	"cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32Async", "cuMemAlloc_v2",
	"cuMemAllocAsync", "cuMemAllocManaged", "cuMemAllocHost_v2", "cuMemFree_v2",
	"cuMemFreeAsync", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
	"cuStreamWaitEvent", "cuModuleGetFunction", "cuLibraryGetKernel",
	"cuKernelGetFunction", "cudaLaunchKernel", "cudaLaunchKernel_ptsz",
	"cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
	"cudaGraphLaunch", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync",
	"cudaMalloc", "cudaMallocAsync", "cudaMallocManaged", "cudaMallocHost", "cudaFree",
	"cudaFreeAsync", "cudaDeviceSynchronize", "cudaStreamSynchronize",
	"cudaEventSynchronize", "hipLaunchKernel", "hipModuleLaunchKernel",
	"hipExtLaunchKernel", "hipExtModuleLaunchKernel", "hipLaunchCooperativeKernel",
	"hipGraphLaunch", "hipMemcpy", "hipMemcpyAsync", "hipMemcpyHtoD", "hipMemcpyDtoH",
	"hipMemcpyDtoD", "hipMemcpyHtoDAsync", "hipMemcpyDtoHAsync", "hipMemcpyDtoDAsync",
	"hipMemcpy2D", "hipMemset", "hipMemsetAsync", "hipMemsetD8", "hipMemsetD16",
	"hipMemsetD32", "hipMalloc", "hipMallocManaged", "hipMallocAsync", "hipHostMalloc",
	"hipFree", "hipFreeAsync", "hipDeviceSynchronize", "hipStreamSynchronize",
	"hipEventSynchronize", "hipModuleGetFunction", "hsa_queue_create", "ioctl", "xray",
	"xray_event", "gpu_kernel", "gpu_memcpy", "gpu_memset", "gpu_sync", "nvtx_range",
	"nvtx_mark", "drops", "__cudaRegisterFunction", "cuModuleLoad", "cuModuleLoadData",
	"cuModuleLoadDataEx", "cuLibraryLoadData", "hipModuleLoad", "hipModuleLoadData",
	"process_exit", "ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather",
	"ncclReduceScatter", "ncclAlltoAll", "ncclSend", "ncclRecv", "ncclGroupStart",
	"ncclGroupEnd", "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll",
	"ncclCommSplit", "ncclCommDestroy", "ncclCommAbort", "ncclCommFinalize",
	"cuMemcpy_ptds", "cuMemcpyAsync_ptsz", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2_ptds",
	"cuMemcpyDtoD_v2_ptds", "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync_v2_ptsz",
	"cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpy2D_v2_ptds", "cuMemcpy2DAsync_v2_ptsz",
	"cuMemcpy3D_v2_ptds", "cuMemcpy3DAsync_v2_ptsz", "cuMemsetD8_v2_ptds",
	"cuMemsetD16_v2_ptds", "cuMemsetD32_v2_ptds", "cuMemsetD8Async_ptsz",
	"cuMemsetD16Async_ptsz", "cuMemsetD32Async_ptsz", "cuMemAllocAsync_ptsz",
	"cuMemFreeAsync_ptsz", "cuStreamSynchronize_ptsz", "cuStreamWaitEvent_ptsz",
	"cuCtxSynchronize_v2", "cuEventRecord", "cuEventRecord_ptsz", "cuEventRecordWithFlags",
	"cuEventRecordWithFlags_ptsz", "cuMemCreate", "cuMemRelease", "cuMemAddressReserve",
	"cuMemAddressFree", "cuMemMap", "cuMemUnmap", "cuMemSetAccess",
	"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemHostAlloc",
	"cuMemFreeHost", "cuMemHostRegister", "cuMemHostRegister_v2", "cuMemHostUnregister",
	"cuMemPrefetchAsync", "cuMemPrefetchAsync_ptsz", "cuMemPrefetchAsync_v2",
	"cuMemPrefetchAsync_v2_ptsz", "cuMemAdvise", "cuMemAdvise_v2", "cuLaunchHostFunc",
	"cuLaunchHostFunc_ptsz", "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync",
	"cuLaunchCooperativeKernelMultiDevice", "cuModuleLoadFatBinary",
	"cuLibraryLoadFromFile", "cuKernelGetName", "cuFuncGetName", "cudaMemcpy_ptds",
	"cudaMemcpyAsync_ptsz", "cudaMemset_ptds", "cudaMemsetAsync_ptsz",
	"cudaMallocAsync_ptsz", "cudaFreeAsync_ptsz", "cudaMallocFromPoolAsync",
	"cudaMallocFromPoolAsync_ptsz", "cudaHostAlloc", "cudaFreeHost", "cudaHostRegister",
	"cudaHostUnregister", "cudaMemPrefetchAsync", "cudaMemPrefetchAsync_ptsz",
	"cudaMemAdvise", "cudaStreamSynchronize_ptsz", "cudaStreamWaitEvent",
	"cudaStreamWaitEvent_ptsz", "cudaEventRecord", "cudaEventRecord_ptsz",
	"cudaEventRecordWithFlags", "cudaEventRecordWithFlags_ptsz", "cudaLaunchHostFunc",
	"cudaLaunchHostFunc_ptsz", "cudaLaunchCooperativeKernel_ptsz",
	"cudaLaunchCooperativeKernelMultiDevice", "cudaLibraryLoadData",
	"cudaLibraryLoadFromFile", "hipMemcpy_spt", "hipMemcpyAsync_spt", "hipMemcpy2D_spt",
	"hipMemset_spt", "hipStreamSynchronize_spt", "hipStreamWaitEvent",
	"hipStreamWaitEvent_spt", "hipLaunchKernel_spt", "hipLaunchCooperativeKernel_spt",
	"hipLaunchCooperativeKernelMultiDevice", "hipExtLaunchMultiKernelMultiDevice",
	"hipEventRecord", "hipMemCreate", "hipMemRelease", "hipMemAddressReserve",
	"hipMemAddressFree", "hipMemMap", "hipMemUnmap", "hipMemSetAccess",
	"hipMallocFromPoolAsync", "hipHostAlloc", "hipExtMallocWithFlags", "hipMallocHost",
	"hipMemAllocHost", "hipHostFree", "hipFreeHost", "hipHostRegister",
	"hipHostUnregister", "hipMemPrefetchAsync", "hipMemAdvise", "hipModuleLoadDataEx",
	"hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async", "hipMemcpyWithStream",
	"hipCtxSynchronize", "cublasSgemm_v2", "cublasSgemm_v2_64", "cublasDgemm_v2",
	"cublasDgemm_v2_64", "cublasCgemm_v2", "cublasCgemm_v2_64", "cublasZgemm_v2",
	"cublasZgemm_v2_64", "cublasHgemm", "cublasHgemm_64", "cublasGemmEx",
	"cublasGemmEx_64", "cublasGemmBatchedEx", "cublasGemmBatchedEx_64",
	"cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64", "cublasSetStream_v2",
	"cublasLtMatmul", "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutSetAttribute",
	"cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute",
	"cudnnConvolutionForward", "cudnnConvolutionBackwardData",
	"cudnnConvolutionBackwardFilter", "cudnnBackendExecute", "cudnnSetTensor4dDescriptor",
	"cudnnSetTensor4dDescriptorEx", "cudnnSetTensorNdDescriptor",
	"cudnnSetFilter4dDescriptor", "cudnnSetFilterNdDescriptor",
	"cudnnSetConvolution2dDescriptor", "cudnnSetConvolutionNdDescriptor",
	"nvrtcCreateProgram", "nvrtcCompileProgram", "nvJitLinkComplete",
	"__nvJitLinkComplete_13_0", "__nvJitLinkComplete_12_0", "cuStreamBeginCapture",
	"cuStreamBeginCapture_v2", "cuStreamBeginCapture_ptsz", "cuStreamBeginCapture_v2_ptsz",
	"cuStreamEndCapture", "cuStreamEndCapture_ptsz", "cuGraphInstantiate",
	"cuGraphInstantiate_v2", "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams",
	"cuGraphInstantiateWithParams_ptsz", "cuGraphExecUpdate", "cuGraphExecUpdate_v2",
	"cuGraphDestroy", "cuGraphExecDestroy", "cudaStreamBeginCapture",
	"cudaStreamBeginCapture_ptsz", "cudaStreamEndCapture", "cudaStreamEndCapture_ptsz",
	"cudaGraphInstantiate", "cudaGraphInstantiateWithFlags",
	"cudaGraphInstantiateWithParams", "cudaGraphInstantiateWithParams_ptsz",
	"cudaGraphLaunch_ptsz", "cudaGraphExecUpdate", "cudaGraphDestroy",
	"cudaGraphExecDestroy", "hipStreamBeginCapture", "hipStreamBeginCapture_spt",
	"hipStreamEndCapture", "hipStreamEndCapture_spt", "hipGraphInstantiate",
	"hipGraphInstantiateWithFlags", "hipGraphLaunch_spt", "hipGraphExecUpdate",
	"hipGraphDestroy", "hipGraphExecDestroy",
};

/* branch 'graphs' (f4b6d67): the first 246 rows of main, then these */
static const char *const v0_graphs[] = {
	"cuStreamBeginCapture", "cuStreamBeginCapture_v2", "cuStreamBeginCapture_ptsz",
	"cuStreamBeginCapture_v2_ptsz", "cuStreamEndCapture", "cuStreamEndCapture_ptsz",
	"cuGraphInstantiate", "cuGraphInstantiate_v2", "cuGraphInstantiateWithFlags",
	"cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams_ptsz",
	"cuGraphExecUpdate", "cuGraphExecUpdate_v2", "cuGraphDestroy", "cuGraphExecDestroy",
	"cudaStreamBeginCapture", "cudaStreamBeginCapture_ptsz", "cudaStreamEndCapture",
	"cudaStreamEndCapture_ptsz", "cudaGraphInstantiate", "cudaGraphInstantiateWithFlags",
	"cudaGraphInstantiateWithParams", "cudaGraphInstantiateWithParams_ptsz",
	"cudaGraphLaunch_ptsz", "cudaGraphExecUpdate", "cudaGraphDestroy",
	"cudaGraphExecDestroy", "hipStreamBeginCapture", "hipStreamBeginCapture_spt",
	"hipStreamEndCapture", "hipStreamEndCapture_spt", "hipGraphInstantiate",
	"hipGraphInstantiateWithFlags", "hipGraphLaunch_spt", "hipGraphExecUpdate",
	"hipGraphDestroy", "hipGraphExecDestroy",
};

/* branch 'apicov' (d79b232): the first 108 rows of main, then these */
static const char *const v0_apicov[] = {
	"cuMemcpy_ptds", "cuMemcpyAsync_ptsz", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2_ptds",
	"cuMemcpyDtoD_v2_ptds", "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync_v2_ptsz",
	"cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpy2D_v2_ptds", "cuMemcpy2DAsync_v2_ptsz",
	"cuMemcpy3D_v2_ptds", "cuMemcpy3DAsync_v2_ptsz", "cuMemsetD8_v2_ptds",
	"cuMemsetD16_v2_ptds", "cuMemsetD32_v2_ptds", "cuMemsetD8Async_ptsz",
	"cuMemsetD16Async_ptsz", "cuMemsetD32Async_ptsz", "cuMemAllocAsync_ptsz",
	"cuMemFreeAsync_ptsz", "cuStreamSynchronize_ptsz", "cuStreamWaitEvent_ptsz",
	"cuCtxSynchronize_v2", "cuEventRecord", "cuEventRecord_ptsz", "cuEventRecordWithFlags",
	"cuEventRecordWithFlags_ptsz", "cuMemCreate", "cuMemRelease", "cuMemAddressReserve",
	"cuMemAddressFree", "cuMemMap", "cuMemUnmap", "cuMemSetAccess",
	"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemHostAlloc",
	"cuMemFreeHost", "cuMemHostRegister", "cuMemHostRegister_v2", "cuMemHostUnregister",
	"cuMemPrefetchAsync", "cuMemPrefetchAsync_ptsz", "cuMemPrefetchAsync_v2",
	"cuMemPrefetchAsync_v2_ptsz", "cuMemAdvise", "cuMemAdvise_v2", "cuLaunchHostFunc",
	"cuLaunchHostFunc_ptsz", "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync",
	"cuLaunchCooperativeKernelMultiDevice", "cuModuleLoadFatBinary",
	"cuLibraryLoadFromFile", "cuKernelGetName", "cuFuncGetName", "cudaMemcpy_ptds",
	"cudaMemcpyAsync_ptsz", "cudaMemset_ptds", "cudaMemsetAsync_ptsz",
	"cudaMallocAsync_ptsz", "cudaFreeAsync_ptsz", "cudaMallocFromPoolAsync",
	"cudaMallocFromPoolAsync_ptsz", "cudaHostAlloc", "cudaFreeHost", "cudaHostRegister",
	"cudaHostUnregister", "cudaMemPrefetchAsync", "cudaMemPrefetchAsync_ptsz",
	"cudaMemAdvise", "cudaStreamSynchronize_ptsz", "cudaStreamWaitEvent",
	"cudaStreamWaitEvent_ptsz", "cudaEventRecord", "cudaEventRecord_ptsz",
	"cudaEventRecordWithFlags", "cudaEventRecordWithFlags_ptsz", "cudaLaunchHostFunc",
	"cudaLaunchHostFunc_ptsz", "cudaLaunchCooperativeKernel_ptsz",
	"cudaLaunchCooperativeKernelMultiDevice", "cudaLibraryLoadData",
	"cudaLibraryLoadFromFile", "hipMemcpy_spt", "hipMemcpyAsync_spt", "hipMemcpy2D_spt",
	"hipMemset_spt", "hipStreamSynchronize_spt", "hipStreamWaitEvent",
	"hipStreamWaitEvent_spt", "hipLaunchKernel_spt", "hipLaunchCooperativeKernel_spt",
	"hipLaunchCooperativeKernelMultiDevice", "hipExtLaunchMultiKernelMultiDevice",
	"hipEventRecord", "hipMemCreate", "hipMemRelease", "hipMemAddressReserve",
	"hipMemAddressFree", "hipMemMap", "hipMemUnmap", "hipMemSetAccess",
	"hipMallocFromPoolAsync", "hipHostAlloc", "hipExtMallocWithFlags", "hipMallocHost",
	"hipMemAllocHost", "hipHostFree", "hipFreeHost", "hipHostRegister",
	"hipHostUnregister", "hipMemPrefetchAsync", "hipMemAdvise", "hipModuleLoadDataEx",
	"hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async", "hipMemcpyWithStream",
	"hipCtxSynchronize",
};

#define N(a) (sizeof(a) / sizeof(a[0]))
const struct sbt_schema_v0 sbt_schema_v0[] = {
	{ "main", v0_main, N(v0_main), NULL, 0 },
	{ "graphs", v0_main, 246, v0_graphs, N(v0_graphs) },
	{ "apicov", v0_main, 108, v0_apicov, N(v0_apicov) },
};
const unsigned sbt_schema_v0_n = N(sbt_schema_v0);
