/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpubpf.h - the whole contract between the BPF programs and user space.
 *
 * Included by every BPF program (bpf/) and by src/. Keep it free of libc and
 * kernel headers: the BPF side gets its types from vmlinux.h, user space
 * from <linux/types.h>.
 */
#ifndef GPUBPF_ABI_H
#define GPUBPF_ABI_H

#define GB_COMM_LEN	16
#define GB_NAME_MAX	256	/* longest kernel name kept from a name-giving call */
#define GB_NARGS	6	/* register arguments captured raw */
#define GB_NX		5	/* extra words: stack arguments, dereferenced fields */
#define GB_MAX_TARGETS	4096

/* APIs an event can come from */
enum gb_api {
	GB_API_NONE = 0,
	GB_API_CUDA_DRV,	/* libcuda: "cuda-driver" */
	GB_API_CUDA_RT,		/* libcudart: "cuda-runtime" */
	GB_API_HIP,		/* libamdhip64: "hip" */
	GB_API_HSA,		/* libhsa-runtime64: "hsa" */
	GB_API_IOCTL,		/* GPU driver ioctls: "ioctl" */
	GB_API_XRAY,		/* LLVM XRay import: "xray" */
	GB_API_CUPTI,		/* device activity: "cupti" */
	GB_API_NVTX,		/* NVTX ranges: "nvtx" */
	GB_API_GPUBPF,		/* the collector itself: "gpubpf" */
	GB_API_NCCL,		/* libnccl / librccl: "nccl" */
	GB_API_CUBLAS,		/* libcublas: "cublas" */
	GB_API_CUBLASLT,	/* libcublasLt: "cublaslt" */
	GB_API_CUDNN,		/* libcudnn and its sub-libraries: "cudnn" */
	GB_API_NVRTC,		/* libnvrtc: "nvrtc" */
	GB_API_NVJITLINK,	/* libnvJitLink: "nvjitlink" */
	GB_API__COUNT,
};

/* What an event is about; drives decoding, info and export. */
enum gb_cat {
	GB_CAT_OTHER = 0,
	GB_CAT_LAUNCH,
	GB_CAT_COPY,
	GB_CAT_MEMSET,
	GB_CAT_ALLOC,
	GB_CAT_FREE,
	GB_CAT_SYNC,
	GB_CAT_NAME,		/* handle -> name (cuModuleGetFunction ...) */
	GB_CAT_IOCTL,
	GB_CAT_FUNC,		/* an application function (XRay) */
	GB_CAT_MARK,		/* instants and ranges (NVTX, custom events) */
	GB_CAT_DEVICE,		/* device-side activity (CUPTI) */
	GB_CAT_COLL,		/* collective and point-to-point communication (NCCL/RCCL) */
	GB_CAT_OP,		/* a library operation (GEMM, convolution, JIT compilation): a
				 * range on its thread; the launches it makes nest under it */
	GB_CAT_DESC,		/* a library descriptor set (shapes kept by the collector) */
	GB_CAT__COUNT,
};

/*
 * Argument shapes: how the BPF program captures a call and how user space
 * turns the raw words into event fields. a[i] is register argument i;
 * x[i] the shape's extra words.
 */
enum gb_shape {
	GB_SH_PLAIN = 0,	/* a[0..5] only */
	GB_SH_LAUNCH_DRV,	/* f,gx,gy,gz,bx,by | x: bz, shmem, stream (stack) */
	GB_SH_LAUNCH_DRV_EX,	/* *config (CUlaunchConfig), f | x: config words */
	GB_SH_LAUNCH_RT,	/* func, grid{xy,z}, block{xy,z}, args | x: shmem, stream */
	GB_SH_LAUNCH_RT_EX,	/* *config (cudaLaunchConfig_t), func | x: config words */
	GB_SH_MEMCPY2D,		/* *CUDA_MEMCPY2D | x: srcMT, dstMT, width, height */
	GB_SH_MEMCPY3D,		/* *CUDA_MEMCPY3D | x: srcMT, dstMT, width, height, depth */
	GB_SH_HIP_MEMCPY2D,	/* dst,dpitch,src,spitch,width,height | x: kind (stack) */
	GB_SH_OUT0,		/* a[0] is an out pointer | x[0] = *a[0] at return */
	GB_SH_NAME,		/* out handle a[0], name string a[2] at return */
	GB_SH_REGFUNC,		/* __cudaRegisterFunction: host stub a[1] is device function a[2] (string) */
	GB_SH_NCCL_COLL,	/* a[0..5] | x: the 7th and 8th arguments (stack); detail: GB_NC_* layout */
	GB_SH_NCCL_INIT,	/* ncclCommInitRank*: comm* a[0] | x: 0 hash of the ncclUniqueId
				 * (by value: on the stack on x86-64), 1 *a[0] at return,
				 * 2 nranks, 3 rank */
	GB_SH_NCCL_SPLIT,	/* ncclCommSplit(comm, color, key, newcomm *, config) | x: 1 *a[3] at return */
	GB_SH_ARGS,		/* a[0..5] only; detail picks the argument map (enum gb_argmap) */
	/* library operations and descriptors (detail: GB_OP_*) */
	GB_SH_GEMM,		/* cublas?gemm: handle, transa, transb, m, n, k (registers) */
	GB_SH_GEMM_EX,		/* cublasGemmEx | x: Atype, Btype, Ctype, compute (args 8 11 15 17) */
	GB_SH_GEMM_BATCHED,	/* cublasGemmBatchedEx | x: types, compute, batch (8 11 15 18 17) */
	GB_SH_GEMM_STRIDED,	/* cublasGemmStridedBatchedEx | x: (8 12 17 21 20) */
	GB_SH_STACK3,		/* a[0..5] | x: arguments 7, 8, 9 (cudnnSet*4dDescriptor ...) */
	GB_SH_ATTR,		/* cublasLt*SetAttribute(obj, attr, buf, size) | x[0]: 8 bytes at buf */
	GB_SH_DNN_ND,		/* cudnnSet{Tensor,Filter}NdDescriptor | x[0..2]: 6 ints at the dims
				 * array (a[3] for tensors, a[4] for filters) */
	GB_SH_DNN_CONV_ND,	/* cudnnSetConvolutionNdDescriptor | x: 2 ints at pad, stride, dilation */
	GB_SH_DNN_CONV,		/* cudnnConvolution*: | x: convDesc, algo, the last descriptor (args 6 7 11) */
	GB_SH_LT_MATMUL,	/* cublasLtMatmul | x: Bdesc, Cdesc, Ddesc, stream (args 6 9 11 15) */
	GB_SH_MODLOAD,		/* module from an image a[1]: out a[0] | x[0] *a[0] at return,
				 * x[1..2] image bytes 0-15, x[3] bytes 40-47, x[4] bytes 56-63 */
	GB_SH_JIT_OPTS,		/* nvrtcCompileProgram(prog, n, options) | x[1..4]: options[0..3];
				 * at return a name record: each option's text in a 64-byte
				 * quarter of name[] (GB_JIT_OPT_LEN) */
	GB_SH_OUT1,		/* a[1] is an out pointer | x[0] = *a[1] at return (cuStreamEndCapture) */
	GB_SH_NCCL_INITALL,	/* ncclCommInitAll(comms *, ndev, devlist) | x[0..3]: comms[0..3]
				 * at return (as many as ndev) */
	GB_SH__COUNT,
};
#define GB_JIT_OPT_LEN	64

/* Per-type flags */
#define GB_TF_RET	0x1	/* attach a return probe: duration and return value */
#define GB_TF_OPTIONAL	0x2	/* absent in many library versions: no warning */
#define GB_TF_LEAN_RET	0x4	/* return probe dropped by --lean (launches) */
#define GB_TF_OP	0x10	/* a library operation: launches inside it are not nested
				 * calls (device work counted at the launch), another op
				 * inside it is (counted once, at the outermost op) */
#define GB_TF_BLOCKS	0x8	/* can block (module loads ...): announced at entry, like
				 * every sync, copy, memset, allocation and free */

/*
 * Every traced function, one line each:
 *   X(symbol, api, category, shape, flags, detail)
 * detail is shape specific: copy kind for copies, element size for memsets.
 * The order is the numeric type id stored in traces: append only.
 */
#define GB_K_NONE	0
#define GB_K_HTOD	1
#define GB_K_DTOH	2
#define GB_K_DTOD	3
#define GB_K_HTOH	4
#define GB_K_DEFAULT	5	/* unified addressing, direction decided by the driver */
#define GB_K_ARG	6	/* the call has a cudaMemcpyKind argument */

/* argument layouts of the NCCL calls (detail of GB_CAT_COLL types) */
#define GB_NC_ALLREDUCE	1	/* send, recv, count, dtype, op, comm | stream */
#define GB_NC_REDUCE	2	/* send, recv, count, dtype, op, root | comm, stream */
#define GB_NC_BCAST	3	/* send, recv, count, dtype, root, comm | stream */
#define GB_NC_GATHER	4	/* send, recv, count, dtype, comm, stream (AllGather, AlltoAll) */
#define GB_NC_P2P	5	/* buf, count, dtype, peer, comm, stream (Send, Recv) */
/*
 * GB_SH_ARGS: which register argument is which event field (decoded in
 * src/core/event.c, argmaps[]): ptr, bytes, stream, handle, arg.
 */
enum gb_argmap {
	GB_AM_NONE = 0,
	GB_AM_PTR,		/* ptr a0 (cuMemHostUnregister) */
	GB_AM_RANGE,		/* ptr a0, bytes a1 (cuMemUnmap, cuMemAddressFree) */
	GB_AM_RANGE_ARG,	/* ptr a0, bytes a1, arg a2 (cuMemHostRegister: flags) */
	GB_AM_MAP,		/* ptr a0, bytes a1, arg a2 (offset), handle a3 (cuMemMap) */
	GB_AM_SETACCESS,	/* ptr a0, bytes a1, handle a2 (descriptors), arg a3 (count) */
	GB_AM_PREFETCH,		/* ptr a0, bytes a1, arg a2 (device), stream a3 */
	GB_AM_PREFETCH_LOC,	/* ptr a0, bytes a1, arg a2 (location), stream a4 (flags a3) */
	GB_AM_ADVISE,		/* ptr a0, bytes a1, arg a2 (advice), handle a3 (device/location) */
	GB_AM_EVREC,		/* handle a0 (event), stream a1 */
	GB_AM_HOSTFN,		/* stream a0, handle a1 (host function), arg a2 (user data) */
	GB_AM_HANDLE0,		/* handle a0 (cuLaunch) */
	GB_AM_HANDLE1,		/* handle a1 (cuKernelGetName: CUkernel) */
	GB_AM_GRID,		/* handle a0, arg a1 (grid width) (cuLaunchGrid) */
	GB_AM_GRID_ASYNC,	/* handle a0, arg a1 (grid width), stream a3 */
	GB_AM_MULTIDEV,		/* handle a0 (launch parameter list), arg a1 (devices) */
	GB_AM_EVREC_FLAGS,	/* handle a0 (event), stream a1, arg a2 (flags) */
	GB_AM_STREAM0,		/* stream a0 (cuStreamBeginCapture) */
	GB_AM__COUNT,
};

/* library operations (detail of GB_CAT_OP / GB_CAT_DESC types; see src/core/event.c) */
enum gb_op_detail {
	GB_OP_NONE = 0,
	GB_OP_SGEMM, GB_OP_DGEMM, GB_OP_HGEMM, GB_OP_CGEMM, GB_OP_ZGEMM,	/* typed: dtype known */
	GB_OP_GEMM_EX,		/* types from the arguments */
	GB_OP_SETSTREAM,	/* cublasSetStream(handle, stream) */
	GB_OP_LT_MATMUL,
	GB_OP_LT_LAYOUT,	/* cublasLtMatrixLayoutCreate(out, type, rows, cols, ld) */
	GB_OP_LT_LAYOUT_ATTR,
	GB_OP_LT_DESC,		/* cublasLtMatmulDescCreate(out, compute, scale) */
	GB_OP_LT_DESC_ATTR,
	GB_OP_CONV_FWD, GB_OP_CONV_BWD_DATA, GB_OP_CONV_BWD_FILTER,
	GB_OP_DNN_TENSOR4D,	/* cudnnSetTensor4dDescriptor(d, format, dtype, n, c, h | w) */
	GB_OP_DNN_TENSOR4D_EX,	/* cudnnSetTensor4dDescriptorEx(d, dtype, n, c, h, w ...) */
	GB_OP_DNN_TENSOR_ND,	/* cudnnSetTensorNdDescriptor(d, dtype, nb, dims, strides) */
	GB_OP_DNN_FILTER4D,	/* cudnnSetFilter4dDescriptor(d, dtype, format, k, c, h | w) */
	GB_OP_DNN_FILTER_ND,	/* cudnnSetFilterNdDescriptor(d, dtype, format, nb, dims) */
	GB_OP_DNN_CONV2D,	/* cudnnSetConvolution2dDescriptor(d, ph, pw, u, v, dh | dw, mode, type) */
	GB_OP_DNN_CONV_ND,	/* cudnnSetConvolutionNdDescriptor(d, n, pad, stride, dil, mode, type) */
	GB_OP_DNN_EXEC,		/* cudnnBackendExecute(handle, plan, variant pack) */
	GB_OP_JIT_COMPILE,	/* nvrtcCompileProgram(prog, nopts, opts) */
	GB_OP_JIT_LINK,		/* nvJitLinkComplete(handle) */
	GB_OP_JIT_PROGRAM,	/* nvrtcCreateProgram(out, src, name ...) */
};
#define GB_OP_64	0x80	/* detail flag: the ILP64 (_64) form */

/* GB_SH_OUT0 allocations: where the other fields are (0: stream a2 if Async) */
#define GB_D_OUT0_POOL	1	/* arg a2 (memory pool), stream a3 (cuMemAllocFromPoolAsync) */
#define GB_D_OUT0_ARG2	2	/* arg a2 (flags; cuMemCreate: the properties) */
/* GB_SH_OUT0 others: ptr = the out word, bytes a1 (cuMemAddressReserve) */
#define GB_D_OUT0_RANGE	3

#define GB_TYPES(X)								\
	X(none,				GB_API_NONE,	GB_CAT_OTHER,  GB_SH_PLAIN, 0, 0) \
	/* CUDA driver API: launches */						\
	X(cuLaunchKernel,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET, 0) \
	X(cuLaunchKernel_ptsz,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuLaunchKernelEx,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV_EX, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuLaunchKernelEx_ptsz,	GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV_EX, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuLaunchCooperativeKernel,	GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuLaunchCooperativeKernel_ptsz, GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphLaunch,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphLaunch_ptsz,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	/* CUDA driver API: copies and memsets */				\
	X(cuMemcpy,			GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DEFAULT) \
	X(cuMemcpyAsync,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DEFAULT) \
	X(cuMemcpyHtoD_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_HTOD) \
	X(cuMemcpyDtoH_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_DTOH) \
	X(cuMemcpyDtoD_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_DTOD) \
	X(cuMemcpyHtoDAsync_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_HTOD) \
	X(cuMemcpyDtoHAsync_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_DTOH) \
	X(cuMemcpyDtoDAsync_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_DTOD) \
	X(cuMemcpy2D_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy2DAsync_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy3D_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY3D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy3DAsync_v2,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY3D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemsetD8_v2,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cuMemsetD16_v2,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(cuMemsetD32_v2,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	X(cuMemsetD8Async,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cuMemsetD16Async,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(cuMemsetD32Async,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	/* CUDA driver API: memory */						\
	X(cuMemAlloc_v2,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET, 0) \
	X(cuMemAllocAsync,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemAllocManaged,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemAllocHost_v2,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemFree_v2,			GB_API_CUDA_DRV, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cuMemFreeAsync,		GB_API_CUDA_DRV, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* CUDA driver API: synchronisation */					\
	X(cuCtxSynchronize,		GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cuStreamSynchronize,		GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cuEventSynchronize,		GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cuStreamWaitEvent,		GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	/* CUDA driver API: handle -> name */					\
	X(cuModuleGetFunction,		GB_API_CUDA_DRV, GB_CAT_NAME, GB_SH_NAME, GB_TF_RET, 0) \
	X(cuLibraryGetKernel,		GB_API_CUDA_DRV, GB_CAT_NAME, GB_SH_NAME, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuKernelGetFunction,		GB_API_CUDA_DRV, GB_CAT_NAME, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* CUDA runtime API */							\
	X(cudaLaunchKernel,		GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET, 0) \
	X(cudaLaunchKernel_ptsz,	GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaLaunchKernelExC,		GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT_EX, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaLaunchKernelExC_ptsz,	GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT_EX, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaLaunchCooperativeKernel,	GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphLaunch,		GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaMemcpy,			GB_API_CUDA_RT, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_ARG) \
	X(cudaMemcpyAsync,		GB_API_CUDA_RT, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_ARG) \
	X(cudaMemset,			GB_API_CUDA_RT, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cudaMemsetAsync,		GB_API_CUDA_RT, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cudaMalloc,			GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET, 0) \
	X(cudaMallocAsync,		GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaMallocManaged,		GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaMallocHost,		GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaFree,			GB_API_CUDA_RT, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cudaFreeAsync,		GB_API_CUDA_RT, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaDeviceSynchronize,	GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cudaStreamSynchronize,	GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(cudaEventSynchronize,		GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	/* HIP runtime (libamdhip64) */						\
	X(hipLaunchKernel,		GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET, 0) \
	X(hipModuleLaunchKernel,	GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET, 0) \
	X(hipExtLaunchKernel,		GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipExtModuleLaunchKernel,	GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_DRV, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 1) \
	X(hipLaunchCooperativeKernel,	GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipGraphLaunch,		GB_API_HIP, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipMemcpy,			GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_ARG) \
	X(hipMemcpyAsync,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET, GB_K_ARG) \
	X(hipMemcpyHtoD,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_HTOD) \
	X(hipMemcpyDtoH,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOH) \
	X(hipMemcpyDtoD,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOD) \
	X(hipMemcpyHtoDAsync,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_HTOD) \
	X(hipMemcpyDtoHAsync,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOH) \
	X(hipMemcpyDtoDAsync,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOD) \
	X(hipMemcpy2D,			GB_API_HIP, GB_CAT_COPY, GB_SH_HIP_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(hipMemset,			GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(hipMemsetAsync,		GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(hipMemsetD8,			GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(hipMemsetD16,			GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(hipMemsetD32,			GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	X(hipMalloc,			GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET, 0) \
	X(hipMallocManaged,		GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipMallocAsync,		GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipHostMalloc,		GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipFree,			GB_API_HIP, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(hipFreeAsync,			GB_API_HIP, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipDeviceSynchronize,		GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(hipStreamSynchronize,		GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(hipEventSynchronize,		GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipModuleGetFunction,		GB_API_HIP, GB_CAT_NAME, GB_SH_NAME, GB_TF_RET, 0) \
	X(hsa_queue_create,		GB_API_HSA, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* events that are not library calls */					\
	X(ioctl,			GB_API_IOCTL, GB_CAT_IOCTL, GB_SH_PLAIN, 0, 0) \
	X(xray,				GB_API_XRAY, GB_CAT_FUNC, GB_SH_PLAIN, 0, 0) \
	X(xray_event,			GB_API_XRAY, GB_CAT_MARK, GB_SH_PLAIN, 0, 0) \
	X(gpu_kernel,			GB_API_CUPTI, GB_CAT_DEVICE, GB_SH_PLAIN, 0, 0) \
	X(gpu_memcpy,			GB_API_CUPTI, GB_CAT_DEVICE, GB_SH_PLAIN, 0, 0) \
	X(gpu_memset,			GB_API_CUPTI, GB_CAT_DEVICE, GB_SH_PLAIN, 0, 0) \
	X(gpu_sync,			GB_API_CUPTI, GB_CAT_DEVICE, GB_SH_PLAIN, 0, 0) \
	X(nvtx_range,			GB_API_NVTX, GB_CAT_MARK, GB_SH_PLAIN, 0, 0) \
	X(nvtx_mark,			GB_API_NVTX, GB_CAT_MARK, GB_SH_PLAIN, 0, 0) \
	X(drops,			GB_API_GPUBPF, GB_CAT_MARK, GB_SH_PLAIN, 0, 0) \
	/* the runtime's registration of each kernel (static runtimes: before main) */	\
	X(__cudaRegisterFunction,	GB_API_CUDA_RT, GB_CAT_NAME, GB_SH_REGFUNC, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* module loads: JIT compilation and file reads can take seconds */	\
	X(cuModuleLoad,			GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cuModuleLoadData,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cuModuleLoadDataEx,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cuLibraryLoadData,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(hipModuleLoad,		GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(hipModuleLoadData,		GB_API_HIP, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	/* a traced process ended (ret: the signal of a crash; instant) */	\
	X(process_exit,			GB_API_GPUBPF, GB_CAT_MARK, GB_SH_PLAIN, 0, 0) \
	/* NCCL / RCCL (same API): collectives can wait for every rank */	\
	X(ncclAllReduce,		GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS, GB_NC_ALLREDUCE) \
	X(ncclBroadcast,		GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS, GB_NC_BCAST) \
	X(ncclReduce,			GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS, GB_NC_REDUCE) \
	X(ncclAllGather,		GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS, GB_NC_GATHER) \
	X(ncclReduceScatter,		GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS, GB_NC_ALLREDUCE) \
	X(ncclAlltoAll,			GB_API_NCCL, GB_CAT_COLL, GB_SH_NCCL_COLL, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, GB_NC_GATHER) \
	X(ncclSend,			GB_API_NCCL, GB_CAT_COLL, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS, GB_NC_P2P) \
	X(ncclRecv,			GB_API_NCCL, GB_CAT_COLL, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS, GB_NC_P2P) \
	X(ncclGroupStart,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET, 0) \
	X(ncclGroupEnd,			GB_API_NCCL, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS, 0) \
	X(ncclCommInitRank,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_NCCL_INIT, GB_TF_RET | GB_TF_BLOCKS, 0) \
	X(ncclCommInitRankConfig,	GB_API_NCCL, GB_CAT_OTHER, GB_SH_NCCL_INIT, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, 0) \
	X(ncclCommInitAll,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_NCCL_INITALL, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, 0) \
	X(ncclCommSplit,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_NCCL_SPLIT, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, 0) \
	X(ncclCommDestroy,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS, 0) \
	X(ncclCommAbort,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, 0) \
	X(ncclCommFinalize,		GB_API_NCCL, GB_CAT_OTHER, GB_SH_PLAIN, GB_TF_RET | GB_TF_BLOCKS | GB_TF_OPTIONAL, 0) \
	/* per-thread default stream forms (_ptds/_ptsz): the same calls */	\
	X(cuMemcpy_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DEFAULT) \
	X(cuMemcpyAsync_ptsz,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DEFAULT) \
	X(cuMemcpyHtoD_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_HTOD) \
	X(cuMemcpyDtoH_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOH) \
	X(cuMemcpyDtoD_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOD) \
	X(cuMemcpyHtoDAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_HTOD) \
	X(cuMemcpyDtoHAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOH) \
	X(cuMemcpyDtoDAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_DTOD) \
	X(cuMemcpy2D_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy2DAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy3D_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY3D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemcpy3DAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_COPY, GB_SH_MEMCPY3D, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemsetD8_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cuMemsetD16_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(cuMemsetD32_v2_ptds,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	X(cuMemsetD8Async_ptsz,		GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cuMemsetD16Async_ptsz,	GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(cuMemsetD32Async_ptsz,	GB_API_CUDA_DRV, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	X(cuMemAllocAsync_ptsz,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemFreeAsync_ptsz,		GB_API_CUDA_DRV, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuStreamSynchronize_ptsz,	GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuStreamWaitEvent_ptsz,	GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuCtxSynchronize_v2,		GB_API_CUDA_DRV, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* events recorded into streams */					\
	X(cuEventRecord,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC) \
	X(cuEventRecord_ptsz,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC) \
	X(cuEventRecordWithFlags,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC_FLAGS) \
	X(cuEventRecordWithFlags_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC_FLAGS) \
	/* virtual memory management: cuMemCreate/cuMemRelease are the physical	\
	 * memory (counted as allocation/free by handle); reserve/map/unmap/	\
	 * access only move address space */					\
	X(cuMemCreate,			GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(cuMemRelease,			GB_API_CUDA_DRV, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemAddressReserve,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_RANGE) \
	X(cuMemAddressFree,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_RANGE) \
	X(cuMemMap,			GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_MAP) \
	X(cuMemUnmap,			GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE) \
	X(cuMemSetAccess,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_SETACCESS) \
	/* stream-ordered pools, pinned host memory, managed memory hints */	\
	X(cuMemAllocFromPoolAsync,	GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_POOL) \
	X(cuMemAllocFromPoolAsync_ptsz,	GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_POOL) \
	X(cuMemHostAlloc,		GB_API_CUDA_DRV, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(cuMemFreeHost,		GB_API_CUDA_DRV, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuMemHostRegister,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE_ARG) \
	X(cuMemHostRegister_v2,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE_ARG) \
	X(cuMemHostUnregister,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_PTR) \
	X(cuMemPrefetchAsync,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH) \
	X(cuMemPrefetchAsync_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH) \
	X(cuMemPrefetchAsync_v2,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH_LOC) \
	X(cuMemPrefetchAsync_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH_LOC) \
	X(cuMemAdvise,			GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_ADVISE) \
	X(cuMemAdvise_v2,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_ADVISE) \
	/* launch forms: host functions, legacy grids, multi-device */		\
	X(cuLaunchHostFunc,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HOSTFN) \
	X(cuLaunchHostFunc_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HOSTFN) \
	X(cuLaunch,			GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(cuLaunchGrid,			GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_GRID) \
	X(cuLaunchGridAsync,		GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_GRID_ASYNC) \
	X(cuLaunchCooperativeKernelMultiDevice, GB_API_CUDA_DRV, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_MULTIDEV) \
	/* module loads and kernel names */					\
	X(cuModuleLoadFatBinary,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cuLibraryLoadFromFile,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cuKernelGetName,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE1) \
	X(cuFuncGetName,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE1) \
	/* CUDA runtime: the same families */					\
	X(cudaMemcpy_ptds,		GB_API_CUDA_RT, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(cudaMemcpyAsync_ptsz,		GB_API_CUDA_RT, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(cudaMemset_ptds,		GB_API_CUDA_RT, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cudaMemsetAsync_ptsz,		GB_API_CUDA_RT, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(cudaMallocAsync_ptsz,		GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaFreeAsync_ptsz,		GB_API_CUDA_RT, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaMallocFromPoolAsync,	GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_POOL) \
	X(cudaMallocFromPoolAsync_ptsz,	GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_POOL) \
	X(cudaHostAlloc,		GB_API_CUDA_RT, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(cudaFreeHost,			GB_API_CUDA_RT, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaHostRegister,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE_ARG) \
	X(cudaHostUnregister,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_PTR) \
	X(cudaMemPrefetchAsync,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH_LOC) \
	X(cudaMemPrefetchAsync_ptsz,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH_LOC) \
	X(cudaMemAdvise,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_ADVISE) \
	X(cudaStreamSynchronize_ptsz,	GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaStreamWaitEvent,		GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaStreamWaitEvent_ptsz,	GB_API_CUDA_RT, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaEventRecord,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC) \
	X(cudaEventRecord_ptsz,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC) \
	X(cudaEventRecordWithFlags,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC_FLAGS) \
	X(cudaEventRecordWithFlags_ptsz, GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC_FLAGS) \
	X(cudaLaunchHostFunc,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HOSTFN) \
	X(cudaLaunchHostFunc_ptsz,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HOSTFN) \
	X(cudaLaunchCooperativeKernel_ptsz, GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaLaunchCooperativeKernelMultiDevice, GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_MULTIDEV) \
	X(cudaLibraryLoadData,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(cudaLibraryLoadFromFile,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	/* HIP: per-thread (_spt) forms and the same families */		\
	X(hipMemcpy_spt,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(hipMemcpyAsync_spt,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(hipMemcpy2D_spt,		GB_API_HIP, GB_CAT_COPY, GB_SH_HIP_MEMCPY2D, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(hipMemset_spt,		GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(hipStreamSynchronize_spt,	GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipStreamWaitEvent,		GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipStreamWaitEvent_spt,	GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipLaunchKernel_spt,		GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipLaunchCooperativeKernel_spt, GB_API_HIP, GB_CAT_LAUNCH, GB_SH_LAUNCH_RT, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipLaunchCooperativeKernelMultiDevice, GB_API_HIP, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_MULTIDEV) \
	X(hipExtLaunchMultiKernelMultiDevice, GB_API_HIP, GB_CAT_LAUNCH, GB_SH_ARGS, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, GB_AM_MULTIDEV) \
	X(hipEventRecord,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_EVREC) \
	X(hipMemCreate,			GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(hipMemRelease,		GB_API_HIP, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipMemAddressReserve,		GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_RANGE) \
	X(hipMemAddressFree,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_RANGE) \
	X(hipMemMap,			GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_MAP) \
	X(hipMemUnmap,			GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE) \
	X(hipMemSetAccess,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_SETACCESS) \
	X(hipMallocFromPoolAsync,	GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_POOL) \
	X(hipHostAlloc,			GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(hipExtMallocWithFlags,	GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_D_OUT0_ARG2) \
	X(hipMallocHost,		GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipMemAllocHost,		GB_API_HIP, GB_CAT_ALLOC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipHostFree,			GB_API_HIP, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipFreeHost,			GB_API_HIP, GB_CAT_FREE, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipHostRegister,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_RANGE_ARG) \
	X(hipHostUnregister,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, GB_AM_PTR) \
	X(hipMemPrefetchAsync,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_PREFETCH) \
	X(hipMemAdvise,			GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_ADVISE) \
	X(hipModuleLoadDataEx,		GB_API_HIP, GB_CAT_OTHER, GB_SH_MODLOAD, GB_TF_RET | GB_TF_OPTIONAL | GB_TF_BLOCKS, 0) \
	X(hipMemsetD8Async,		GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 1) \
	X(hipMemsetD16Async,		GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 2) \
	X(hipMemsetD32Async,		GB_API_HIP, GB_CAT_MEMSET, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 4) \
	X(hipMemcpyWithStream,		GB_API_HIP, GB_CAT_COPY, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, GB_K_ARG) \
	X(hipCtxSynchronize,		GB_API_HIP, GB_CAT_SYNC, GB_SH_PLAIN, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	/* cuBLAS: GEMMs (ranges; their launches nest under them), the handle's stream */ \
	X(cublasSgemm_v2,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_SGEMM) \
	X(cublasSgemm_v2_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_SGEMM | GB_OP_64) \
	X(cublasDgemm_v2,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_DGEMM) \
	X(cublasDgemm_v2_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_DGEMM | GB_OP_64) \
	X(cublasCgemm_v2,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_CGEMM) \
	X(cublasCgemm_v2_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_CGEMM | GB_OP_64) \
	X(cublasZgemm_v2,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_ZGEMM) \
	X(cublasZgemm_v2_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_ZGEMM | GB_OP_64) \
	X(cublasHgemm,			GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_HGEMM) \
	X(cublasHgemm_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_HGEMM | GB_OP_64) \
	X(cublasGemmEx,			GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_EX, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX) \
	X(cublasGemmEx_64,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_EX, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX | GB_OP_64) \
	X(cublasGemmBatchedEx,		GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_BATCHED, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX) \
	X(cublasGemmBatchedEx_64,	GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_BATCHED, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX | GB_OP_64) \
	X(cublasGemmStridedBatchedEx,	GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_STRIDED, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX) \
	X(cublasGemmStridedBatchedEx_64,	GB_API_CUBLAS, GB_CAT_OP, GB_SH_GEMM_STRIDED, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_GEMM_EX | GB_OP_64) \
	X(cublasSetStream_v2,		GB_API_CUBLAS, GB_CAT_DESC, GB_SH_PLAIN, GB_TF_OPTIONAL, GB_OP_SETSTREAM) \
	/* cuBLASLt: matmuls; layouts and descriptors read at their calls */ \
	X(cublasLtMatmul,		GB_API_CUBLASLT, GB_CAT_OP, GB_SH_LT_MATMUL, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_LT_MATMUL) \
	X(cublasLtMatrixLayoutCreate,	GB_API_CUBLASLT, GB_CAT_DESC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_OP_LT_LAYOUT) \
	X(cublasLtMatrixLayoutSetAttribute, GB_API_CUBLASLT, GB_CAT_DESC, GB_SH_ATTR, GB_TF_OPTIONAL, GB_OP_LT_LAYOUT_ATTR) \
	X(cublasLtMatmulDescCreate,	GB_API_CUBLASLT, GB_CAT_DESC, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, GB_OP_LT_DESC) \
	X(cublasLtMatmulDescSetAttribute, GB_API_CUBLASLT, GB_CAT_DESC, GB_SH_ATTR, GB_TF_OPTIONAL, GB_OP_LT_DESC_ATTR) \
	/* cuDNN (the libcudnn.so.9 shim and the sub-libraries it dispatches to) */ \
	X(cudnnConvolutionForward,	GB_API_CUDNN, GB_CAT_OP, GB_SH_DNN_CONV, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_CONV_FWD) \
	X(cudnnConvolutionBackwardData,	GB_API_CUDNN, GB_CAT_OP, GB_SH_DNN_CONV, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_CONV_BWD_DATA) \
	X(cudnnConvolutionBackwardFilter, GB_API_CUDNN, GB_CAT_OP, GB_SH_DNN_CONV, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_CONV_BWD_FILTER) \
	X(cudnnBackendExecute,		GB_API_CUDNN, GB_CAT_OP, GB_SH_PLAIN, GB_TF_RET | GB_TF_OP | GB_TF_OPTIONAL, GB_OP_DNN_EXEC) \
	X(cudnnSetTensor4dDescriptor,	GB_API_CUDNN, GB_CAT_DESC, GB_SH_STACK3, GB_TF_OPTIONAL, GB_OP_DNN_TENSOR4D) \
	X(cudnnSetTensor4dDescriptorEx,	GB_API_CUDNN, GB_CAT_DESC, GB_SH_PLAIN, GB_TF_OPTIONAL, GB_OP_DNN_TENSOR4D_EX) \
	X(cudnnSetTensorNdDescriptor,	GB_API_CUDNN, GB_CAT_DESC, GB_SH_DNN_ND, GB_TF_OPTIONAL, GB_OP_DNN_TENSOR_ND) \
	X(cudnnSetFilter4dDescriptor,	GB_API_CUDNN, GB_CAT_DESC, GB_SH_STACK3, GB_TF_OPTIONAL, GB_OP_DNN_FILTER4D) \
	X(cudnnSetFilterNdDescriptor,	GB_API_CUDNN, GB_CAT_DESC, GB_SH_DNN_ND, GB_TF_OPTIONAL, GB_OP_DNN_FILTER_ND) \
	X(cudnnSetConvolution2dDescriptor, GB_API_CUDNN, GB_CAT_DESC, GB_SH_STACK3, GB_TF_OPTIONAL, GB_OP_DNN_CONV2D) \
	X(cudnnSetConvolutionNdDescriptor, GB_API_CUDNN, GB_CAT_DESC, GB_SH_DNN_CONV_ND, GB_TF_OPTIONAL, GB_OP_DNN_CONV_ND) \
	/* JIT: NVRTC compilations and nvJitLink links (can take seconds) */ \
	X(nvrtcCreateProgram,		GB_API_NVRTC, GB_CAT_NAME, GB_SH_NAME, GB_TF_RET | GB_TF_OPTIONAL, GB_OP_JIT_PROGRAM) \
	X(nvrtcCompileProgram,		GB_API_NVRTC, GB_CAT_OP, GB_SH_JIT_OPTS, GB_TF_RET | GB_TF_OP | GB_TF_BLOCKS | GB_TF_OPTIONAL, GB_OP_JIT_COMPILE) \
	X(nvJitLinkComplete,		GB_API_NVJITLINK, GB_CAT_OP, GB_SH_PLAIN, GB_TF_RET | GB_TF_OP | GB_TF_BLOCKS | GB_TF_OPTIONAL, GB_OP_JIT_LINK) \
	X(__nvJitLinkComplete_13_0,	GB_API_NVJITLINK, GB_CAT_OP, GB_SH_PLAIN, GB_TF_RET | GB_TF_OP | GB_TF_BLOCKS | GB_TF_OPTIONAL, GB_OP_JIT_LINK) \
	X(__nvJitLinkComplete_12_0,	GB_API_NVJITLINK, GB_CAT_OP, GB_SH_PLAIN, GB_TF_RET | GB_TF_OP | GB_TF_BLOCKS | GB_TF_OPTIONAL, GB_OP_JIT_LINK) \
	/* CUDA Graphs: capture, instantiate, update, destroy (src/graph/) */ \
	X(cuStreamBeginCapture,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cuStreamBeginCapture_v2,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cuStreamBeginCapture_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cuStreamBeginCapture_v2_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cuStreamEndCapture,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuStreamEndCapture_ptsz,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphInstantiate,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphInstantiate_v2,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphInstantiateWithFlags,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphInstantiateWithParams,	GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphInstantiateWithParams_ptsz, GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cuGraphExecUpdate,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_GRID) \
	X(cuGraphExecUpdate_v2,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_GRID) \
	X(cuGraphDestroy,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(cuGraphExecDestroy,		GB_API_CUDA_DRV, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(cudaStreamBeginCapture,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cudaStreamBeginCapture_ptsz,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(cudaStreamEndCapture,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaStreamEndCapture_ptsz,	GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphInstantiate,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphInstantiateWithFlags, GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphInstantiateWithParams, GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphInstantiateWithParams_ptsz, GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphLaunch_ptsz,		GB_API_CUDA_RT, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(cudaGraphExecUpdate,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_GRID) \
	X(cudaGraphDestroy,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(cudaGraphExecDestroy,		GB_API_CUDA_RT, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(hipStreamBeginCapture,	GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(hipStreamBeginCapture_spt,	GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_STREAM0) \
	X(hipStreamEndCapture,		GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipStreamEndCapture_spt,	GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT1, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipGraphInstantiate,		GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipGraphInstantiateWithFlags,	GB_API_HIP, GB_CAT_OTHER, GB_SH_OUT0, GB_TF_RET | GB_TF_OPTIONAL, 0) \
	X(hipGraphLaunch_spt,		GB_API_HIP, GB_CAT_LAUNCH, GB_SH_PLAIN, GB_TF_RET | GB_TF_LEAN_RET | GB_TF_OPTIONAL, 0) \
	X(hipGraphExecUpdate,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_GRID) \
	X(hipGraphDestroy,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0) \
	X(hipGraphExecDestroy,		GB_API_HIP, GB_CAT_OTHER, GB_SH_ARGS, GB_TF_RET | GB_TF_OPTIONAL, GB_AM_HANDLE0)

enum gb_type {
#define GB_X_ENUM(name, api, cat, shape, flags, detail) GB_T_##name,
	GB_TYPES(GB_X_ENUM)
#undef GB_X_ENUM
	GB_T__COUNT,
};

/* Record kinds in the ring buffer */
enum gb_rec_kind {
	GB_REC_CALL = 1,	/* a library call (struct gb_rec) */
	GB_REC_NAME,		/* a handle got a name (struct gb_name_rec) */
	GB_REC_EXEC,		/* a traced process exec'd: rescan its mappings */
	GB_REC_DLOPEN,		/* the dynamic loader changed a link map */
	GB_REC_EXIT,		/* a traced process exited; ret: the signal if it crashed
				 * (a core-dumping signal), else 0 */
	GB_REC_STACK,		/* registers + user stack copy for one call (struct gb_stack_rec) */
	GB_REC_PYSTACK,		/* CPython frames at one call (struct gb_py_rec) */
	GB_REC_LEAN,		/* --lean: a launch from registers alone (struct gb_lean_rec) */
};

/*
 * One call as the BPF side sees it. Arguments stay raw: user space decodes
 * them by shape, so the hot path does no per-type work it can avoid.
 */
struct gb_rec {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at entry */
	__u64 dur_ns;		/* 0 without a return probe */
	__u32 pid;		/* host tgid */
	__u32 tid;		/* host tid */
	__u32 ns_pid;		/* tgid in the task's own pid namespace */
	__u32 ns_tid;
	__u16 kind;		/* enum gb_rec_kind */
	__u16 type;		/* enum gb_type */
	__s32 ret;		/* return value (CUresult, cudaError_t, hipError_t) */
	__u32 flags;		/* GB_RF_* */
	__u32 cpu;
	char comm[GB_COMM_LEN];
	__u64 a[GB_NARGS];
	__u64 x[GB_NX];
	__u32 nips;		/* --stack fp: return addresses that follow this record */
	__u32 _spare;
	__u64 caller;		/* --stack fp: the return address at entry (the immediate
				 * caller, which a frame-pointer walk from a function's
				 * first instruction skips); 0 if unreadable */
};

/*
 * --lean launches: 64 bytes, everything from registers (no user-memory
 * read, no thread state): the function and the five words after it, as
 * the low halves plus the two high halves that a runtime launch's dim3
 * pairs use. Stack arguments (a driver launch's block z, shared memory
 * and stream; a runtime launch's shared memory and stream) are not read,
 * nor the CPU. kind sits where gb_rec has it: the collector tells records
 * apart before it knows their size.
 */
struct gb_lean_rec {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at entry */
	__u64 a0;		/* first argument */
	__u32 pid;		/* host tgid */
	__u32 tid;		/* host tid */
	__u32 a1_hi, a3_hi;	/* high halves of arguments 2 and 4 */
	__u16 kind;		/* GB_REC_LEAN (offset of gb_rec.kind) */
	__u16 type;		/* enum gb_type */
	__u32 lo[5];		/* arguments 2..6, low halves */
	__u32 ns_pid;		/* ids in the task's own pid namespace */
	__u32 ns_tid;
};

#define GB_RF_RET	0x1	/* ret and dur_ns are valid */
#define GB_RF_XFAULT	0x2	/* a user-memory read failed: x[] incomplete */
#define GB_RF_NESTED	0x4	/* another traced call of this thread was in flight at entry
				 * (a runtime call's driver call): device work counted once */
#define GB_RF_OPEN	0x8	/* sent at entry by a call that can block: its end follows
				 * (GB_RF_END) unless it never returns; user space holds it */
#define GB_RF_END	0x10	/* the end of a call announced at entry (same tid and ts_ns):
				 * duration, return value, out words; no return addresses */
#define GB_RF_REGS	0x20	/* --lean: registers only, no stack argument was read */
#define GB_RF_CALL	0x40	/* --stack dwarf: this GB_REC_STACK record's gb_rec is its call
				 * record too (entry-only calls, blocking calls' announcements):
				 * no GB_REC_CALL follows */
#define GB_RF_XSTACK	0x80	/* with GB_RF_CALL (x86-64): x[0..n-1] were not read, they are
				 * the stack copy's words 1..n (the arguments above the return
				 * address; n: gb_shape_stack_words); user space fills them in */

/*
 * The words of x[] a shape takes from the stack arguments above the return
 * address (x86-64: arguments 7..), in order: bpf/cuda.bpf.c (capture_entry)
 * reads that many, or with GB_RF_XSTACK the collector takes that many from
 * the stack copy. One count for both sides.
 */
static inline __attribute__((always_inline)) __u32 gb_shape_stack_words(__u32 shape)
{
	switch (shape) {
	case GB_SH_LAUNCH_DRV:	/* bz, shmem, stream */
	case GB_SH_STACK3:
		return 3;
	case GB_SH_LAUNCH_RT:	/* shmem, stream */
	case GB_SH_NCCL_COLL:	/* the 7th and 8th arguments */
		return 2;
	default:
		return 0;
	}
}

struct gb_name_rec {
	struct gb_rec r;
	char name[GB_NAME_MAX];
};

/* --- call stacks (see src/stacks/stack.c, src/stacks/unwind.c) --- */
enum gb_stack_mode {
	GB_STACK_NONE = 0,
	GB_STACK_FP,		/* bpf_get_stack: frame pointers, carried after the call
				 * record (nips), deduplicated in user space */
	GB_STACK_DWARF,		/* registers + a copy of the stack, unwound in user space */
};
#define GB_STACK_FP_DEPTH	127	/* frames per fp stack (PERF_MAX_STACK_DEPTH) */
#define GB_STACK_COPY_MAX	65536	/* largest --stack dwarf=BYTES */
#define GB_STACK_COPY_DEF	8192
#define GB_NREGS		34	/* the arch's struct pt_regs, raw (x86-64: 21 used) */

/*
 * GB_REC_STACK, emitted at entry just before the call it belongs to
 * reaches the ring (r.ts_ns and r.tid equal those of the call record):
 * the user registers at the probe and the top len bytes of the user stack
 * starting at the stack pointer. Variable size: header + the bytes
 * reserved (the live stack rounded up to 512, or the bound + a page of
 * slack where the stack's end is not known); len says what was copied.
 */
struct gb_stack_rec {
	struct gb_rec r;
	__u64 regs[GB_NREGS];	/* struct pt_regs of the arch, zero padded */
	__u64 sp;		/* address of data[0] */
	__u32 len;		/* bytes of data[] that were readable */
	__u32 _pad;
	__u8 data[GB_STACK_COPY_MAX + 4096];	/* slack: lets the verifier bound each page read */
};
#define GB_STACK_REC_HDR	((unsigned long)__builtin_offsetof(struct gb_stack_rec, data))

/*
 * --python: where CPython 3.11+ keeps its frames, derived by user space
 * from the interpreter binary itself (src/stacks/pyframes.c), byte offsets.
 * _PyRuntime is at mm->start_code + runtime_off of a process whose
 * executable is inode exe_ino.
 */
struct gb_py_offsets {
	__u64 exe_ino;
	__u64 runtime_off;
	__s32 interp_head;	/* _PyRuntime.interpreters.head */
	__s32 threads_head;	/* PyInterpreterState.threads.head */
	__s32 ts_next, ts_tid;	/* PyThreadState.next, .native_thread_id */
	__s32 ts_cframe;	/* PyThreadState.cframe (3.13: current_frame, cf_current -1) */
	__s32 cf_current;	/* _PyCFrame.current_frame */
	__s32 fr_code, fr_previous, fr_instr;	/* _PyInterpreterFrame */
	__s32 co_code, co_name, co_filename, co_linetable, co_firstlineno;	/* PyCodeObject */
	__s32 str_data;		/* compact ASCII str: first character */
	__s32 bytes_data;	/* bytes: first byte */
};

#define GB_PY_MAX_FRAMES	24
#define GB_PY_NAME		64
#define GB_PY_FILE		128
#define GB_PY_LTAB		192	/* bytes of co_linetable kept: enough for most functions */

struct gb_py_frame {
	__u64 code;		/* PyCodeObject address */
	__s32 instr;		/* code unit index of the current instruction */
	__s32 firstline;	/* co_firstlineno */
	__u32 ltab_len;
	__u32 _pad;
	char name[GB_PY_NAME];
	char file[GB_PY_FILE];
	__u8 ltab[GB_PY_LTAB];	/* co_linetable (3.11 location table) */
};

/* GB_REC_PYSTACK, sent ahead of its call like gb_stack_rec; size by n */
struct gb_py_rec {
	struct gb_rec r;
	__u32 n;
	__u32 _pad;
	struct gb_py_frame f[GB_PY_MAX_FRAMES];
};
#define GB_PY_REC_SIZE(n)	((unsigned long)&((struct gb_py_rec *)0)->f[n])

/* indexes of the per-CPU drops map */
#define GB_DROP_CALL	0	/* API call records */
#define GB_DROP_CTL	1	/* loader/exit notifications */
#define GB_DROP_TARGET	2	/* -- CMD: a child that could not become a target */
#define GB_NDROPS	3

/* The attach cookie: type id in the low 16 bits, shape above it, flags at 32. */
#define GB_COOKIE_F_RET		(1ull << 32)	/* a return probe completes this call */
#define GB_COOKIE_F_OPEN	(1ull << 33)	/* announced at entry (GB_RF_OPEN): seen even if it
						 * never returns */
#define GB_COOKIE_F_OP		(1ull << 34)	/* a library operation (GB_TF_OP) */
#define GB_COOKIE_F_LEAN	(1ull << 35)	/* --lean launch: struct gb_lean_rec, nothing else */
#define GB_COOKIE_F_SESS	(1ull << 36)	/* user space: attached to the session program */
#define GB_COOKIE(type, shape)	((__u64)(type) | ((__u64)(shape) << 16))
#define GB_COOKIE_TYPE(c)	((__u32)((c) & 0xffff))
#define GB_COOKIE_SHAPE(c)	((__u32)(((c) >> 16) & 0xffff))

/* --- CUPTI / NVTX records (USDT side, see cupti/): section owned by that work --- */

/*
 * Records from the USDT probes (provider "gpubpf") of
 * cupti/libgpubpf_cupti.so. Each starts with struct gb_rec so user space
 * dispatches on r.kind before it knows the layout.
 *
 * GB_REC_CUPTI_LAUNCH (struct gb_rec), probe launch(domain, cbid, corr,
 * handle, stream) on the thread calling the API, at API entry:
 *   a[0] correlation id, a[1] CUPTI callback id, a[2] CUpti_CallbackDomain,
 *   a[3] CUfunction (launches) or 0, a[4] CUstream or 0.
 * GB_REC_CUPTI_LOST (struct gb_rec), probe lost(cupti_dropped, rate_limited):
 *   a[0] records CUPTI dropped, a[1] records over GPUBPF_CUPTI_MAX_EVENTS_PER_S;
 *   both cumulative for the process.
 */
#define GB_REC_CUPTI_LAUNCH	16
#define GB_REC_CUPTI_ACT	17	/* struct gb_cupti_rec */
#define GB_REC_NVTX		18	/* struct gb_nvtx_rec */
#define GB_REC_CUPTI_LOST	19

enum gb_act_kind {
	GB_ACT_KERNEL = 1,
	GB_ACT_MEMCPY,
	GB_ACT_MEMSET,
	GB_ACT_SYNC,
	GB_ACT_OVERHEAD,
};

/*
 * One completed device activity, as the library hands it to probe
 * activity(struct gb_cupti_act *, size). Fixed layout: a USDT probe has
 * at most 12 arguments, and one user read is cheaper than twelve.
 */
struct gb_cupti_act {
	__u64 start, end;	/* CLOCK_MONOTONIC ns: the library registers that clock */
	__u64 corr_id;		/* CUPTI correlation id (driver API) */
	__u64 name;		/* const char * in the process (kernels), else 0 */
	__u64 bytes;		/* copies and memsets */
	__u32 device, context;
	__u32 stream;		/* CUPTI's stream id, not a CUstream */
	__u32 grid[3], block[3];
	__u32 shmem;		/* static + dynamic shared memory */
	__u32 value;		/* memset value, sync type, overhead kind */
	__u16 act_kind;		/* enum gb_act_kind */
	__u8 copy_kind;		/* GB_K_* */
	__u8 _pad;
};

struct gb_cupti_rec {
	struct gb_rec r;	/* ts_ns: when the probe fired; pid: the process */
	struct gb_cupti_act act;
	char name[GB_NAME_MAX];	/* kernel name, "" if none */
};

enum gb_nvtx_op {
	GB_NVTX_MARK = 1,
	GB_NVTX_PUSH,
	GB_NVTX_POP,
	GB_NVTX_START,		/* nvtxRangeStart: may end on another thread */
	GB_NVTX_END,
};

/*
 * Probe nvtx(op, id, domain, name, color): r.a[0] op, a[1] range id
 * (start/end), a[2] nvtxDomainHandle_t (0 = default), a[3] ARGB color
 * or 0.
 */
struct gb_nvtx_rec {
	struct gb_rec r;
	char name[GB_NAME_MAX];	/* message, "" for pop/end */
};

/* --- GPU driver ioctls (bpf/ioctl.bpf.c, src/ioctl/ioctl.c): section owned by that work --- */

/*
 * One ioctl on a GPU device file, completed at return. r.type is
 * GB_T_ioctl, r.ret the syscall/driver return value, r.dur_ns the time in
 * the call (GB_RF_RET); r.a[]/r.x[] are unused. GB_RF_XFAULT: the argument
 * was not decoded (unknown cmd, short struct, unreadable pointer).
 */
#define GB_REC_IOCTL		32	/* struct gb_ioctl_rec */
#define GB_IOCTL_NF		6	/* decoded fields per ioctl */
#define GB_IOCTL_ARG_MAX	64	/* bytes of an argument struct we look at */
#define GB_IOCTL_MINOR_ANY	0xfffff	/* watch key: every minor of a major */

enum gb_iodev {			/* which driver's numbering a device uses */
	GB_IODEV_NONE = 0,
	GB_IODEV_NVIDIA,	/* nvidiactl, nvidia0...: NV_ESC_* ('F') */
	GB_IODEV_UVM,		/* nvidia-uvm: UVM_* (plain numbers) */
	GB_IODEV_KFD,		/* /dev/kfd: AMDKFD_IOC_* ('K') */
	GB_IODEV_DRM,		/* DRM card/render nodes: DRM_IOCTL_*, amdgpu */
	GB_IODEV__COUNT,
};

enum gb_iosrc {			/* where the record came from */
	GB_IOSRC_NONE = 0,
	GB_IOSRC_KPROBE,	/* kprobe/kretprobe on the driver entry point */
	GB_IOSRC_FENTRY,	/* fentry/fexit on the same */
	GB_IOSRC_TRACEPOINT,	/* syscalls:sys_{enter,exit}_ioctl, filtered by device */
};

/* BPF map "watch": key is the kernel dev_t (major << 20 | minor) */
struct gb_iowatch {
	__u16 dev_kind;		/* enum gb_iodev */
	__u16 id;		/* user space's index for the device name */
};

/*
 * BPF map "layouts": how to decode one cmd of one device kind. Filled by
 * user space from its version-keyed tables; a cmd without an entry is
 * recorded undecoded. Field i is read from arg + off[i], len[i] bytes
 * (1, 2, 4 or 8; 0 = unused), only when size <= _IOC_SIZE or the cmd has
 * no size bits (UVM).
 */
struct gb_iolayout_key {
	__u32 dev_kind;
	__u32 cmd;
};

struct gb_iolayout {
	__u16 size;		/* bytes the struct must have */
	__u16 decoder;		/* user space's decoder id, copied to the record */
	__u8 off[GB_IOCTL_NF];
	__u8 len[GB_IOCTL_NF];
};

struct gb_ioctl_rec {
	struct gb_rec r;
	__u64 arg;		/* the user argument pointer */
	__u64 w[GB_IOCTL_NF];	/* decoded fields, zero-extended (layout order) */
	__u32 cmd;
	__s32 fd;		/* -1 where the source cannot see it (kprobe, fentry) */
	__u32 dev;		/* kernel dev_t of the file */
	__u16 dev_kind;		/* enum gb_iodev */
	__u16 dev_id;		/* gb_iowatch.id, 0xffff if not in the watch map */
	__u16 decoder;		/* gb_iolayout.decoder, 0 = not decoded */
	__u16 source;		/* enum gb_iosrc */
	__u32 _pad;
};

#endif /* GPUBPF_ABI_H */
