// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_words.c - the words a finding uses for the API its calls came
 * from: error codes by their names (the vendors' enums, errnames_tab.h,
 * made by tools/gen_errnames.py), the family's functions in the advice.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "report_int.h"

struct gb_errname {
	int64_t code;
	const char *name;
};
#include "errnames_tab.h"

#define TAB(t) { t, sizeof(t) / sizeof(t[0]) }
static const struct {
	const struct gb_errname *e;
	size_t n;
} err_tabs[GB_API__COUNT] = {
	[GB_API_CUDA_DRV] = TAB(errs_cu),
	[GB_API_CUDA_RT] = TAB(errs_cudart),
	[GB_API_HIP] = TAB(errs_hip),
	[GB_API_CUBLAS] = TAB(errs_cublas),
	[GB_API_CUBLASLT] = TAB(errs_cublas),
	[GB_API_CUDNN] = TAB(errs_cudnn),
	[GB_API_NCCL] = TAB(errs_nccl),
	[GB_API_NVRTC] = TAB(errs_nvrtc),
	[GB_API_NVJITLINK] = TAB(errs_nvjitlink),
};

static const char *const err_types[GB_API__COUNT] = {
	[GB_API_CUDA_DRV] = "CUresult", [GB_API_CUDA_RT] = "cudaError_t", [GB_API_HIP] = "hipError_t",
	[GB_API_CUBLAS] = "cublasStatus_t", [GB_API_CUBLASLT] = "cublasStatus_t",
	[GB_API_CUDNN] = "cudnnStatus_t", [GB_API_NCCL] = "ncclResult_t", [GB_API_NVRTC] = "nvrtcResult",
	[GB_API_NVJITLINK] = "nvJitLinkResult",
};

const char *rep_err_name(unsigned api, int64_t code)
{
	size_t lo = 0, hi;

	if (api >= GB_API__COUNT || !err_tabs[api].e)
		return NULL;
	hi = err_tabs[api].n;
	while (lo < hi) {	/* the tables are sorted by code */
		size_t mid = (lo + hi) / 2;

		if (err_tabs[api].e[mid].code == code)
			return err_tabs[api].e[mid].name;
		if (err_tabs[api].e[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *rep_err_type(unsigned api)
{
	return api < GB_API__COUNT ? err_types[api] : NULL;
}

/* the runtime family a finding's advice speaks to (enum REP_FAM_*) */
unsigned rep_family(unsigned api)
{
	return api == GB_API_HIP || api == GB_API_HSA ? REP_FAM_HIP : api == GB_API_CUDA_DRV ? REP_FAM_CUDA_DRV :
	       REP_FAM_CUDA_RT;
}

/* a failed call: what to do, in its API's terms */
const char *rep_error_advice(unsigned api, int64_t code)
{
	switch (api) {
	case GB_API_CUDA_DRV:
		if (code >= 700 && code < 800)
			return "a sticky error: the context is unusable from here on and every later call fails; find the kernel that faulted (compute-sanitizer, CUDA_LAUNCH_BLOCKING=1)";
		return "check the CUresult where the call is made (cuGetErrorName names it) and handle or stop on it";
	case GB_API_CUDA_RT:
		if (code >= 700 && code < 800)
			return "a sticky error: the context is unusable from here on and every later call fails; find the kernel that faulted (compute-sanitizer, CUDA_LAUNCH_BLOCKING=1)";
		return "check the cudaError_t where the call is made (cudaGetErrorName names it); cudaGetLastError clears a non-sticky one";
	case GB_API_HIP:
	case GB_API_HSA:
		return "check the hipError_t where the call is made (hipGetErrorName names it); hipGetLastError clears a non-sticky one";
	case GB_API_CUBLAS:
	case GB_API_CUBLASLT:
		return "check the cublasStatus_t where the call is made (cublasGetStatusName names it): a handle made with cublasCreate, arguments and workspace for this shape";
	case GB_API_CUDNN:
		return "check the cudnnStatus_t where the call is made (cudnnGetErrorString, and cudnnGetLastErrorString for why)";
	case GB_API_NCCL:
		return "check the ncclResult_t where the call is made (ncclGetErrorString; ncclGetLastError for why, ncclCommGetAsyncError for errors found later)";
	case GB_API_NVRTC:
		return "the compilation failed: nvrtcGetProgramLog says why";
	case GB_API_NVJITLINK:
		return "the link failed: nvJitLinkGetErrorLog says why";
	default:
		return "check the return code where the call is made";
	}
}
