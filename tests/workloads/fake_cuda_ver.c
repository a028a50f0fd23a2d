/*
 * fake_cuda_ver.c - a libcuda.so.1 that exports two versions of one name,
 * cuMemAlloc_v2@LIBCUDA_1 (old binaries) and cuMemAlloc_v2@@LIBCUDA_2 (the
 * default), like a vendor library that changed a call's ABI under its
 * old name: both must be traced as cuMemAlloc_v2
 * (tests/integ/record_apicov.sh). The old one hands out 0x1000.., the new
 * one 0x2000.. so a test tells them apart.
 */
#include <stddef.h>

#define NOINLINE __attribute__((noinline, visibility("default")))
typedef unsigned long long CUdeviceptr;

NOINLINE int cuMemAlloc_v2_old(CUdeviceptr *p, size_t n) { *p = 0x10000000ull + n; return 0; }
NOINLINE int cuMemAlloc_v2_new(CUdeviceptr *p, size_t n) { *p = 0x20000000ull + n; return 0; }
NOINLINE int cuInit(unsigned int f) { return 0; }
__asm__(".symver cuMemAlloc_v2_old, cuMemAlloc_v2@LIBCUDA_1");
__asm__(".symver cuMemAlloc_v2_new, cuMemAlloc_v2@@LIBCUDA_2");
