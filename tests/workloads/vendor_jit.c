/*
 * vendor_jit - JIT work: two real NVRTC compilations (nvrtc compiles
 * without a GPU), each timed by the program itself around the call; an
 * nvJitLink link; module loads from images in memory through libcuda
 * (argv[1]: a fake libcuda.so.1, dlopen'd) - an ELF image (this program's
 * own file, whose size is known) and a fat binary header. Built by
 * tests/integ/record_libs_jit.sh; prints what it measured.
 */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static const char *const src_saxpy =
	"extern \"C\" __global__ void saxpy(float a, float *x, float *y, int n)\n"
	"{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";
static const char *const src_reduce =
	"template <int B> __device__ float blocksum(float v) { __shared__ float s[B];\n"
	"  s[threadIdx.x] = v; __syncthreads();\n"
	"  for (int o = B / 2; o > 0; o >>= 1) { if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];\n"
	"  __syncthreads(); } return s[0]; }\n"
	"extern \"C\" __global__ void reduce(const float *x, float *out)\n"
	"{ float v = blocksum<256>(x[blockIdx.x * 256 + threadIdx.x]); if (!threadIdx.x) out[blockIdx.x] = v; }\n";

static int compile(const char *src, const char *name, int nopts, const char **opts, uint64_t *ns)
{
	nvrtcProgram p;
	uint64_t t0;
	int r;

	if (nvrtcCreateProgram(&p, src, name, 0, NULL, NULL) != NVRTC_SUCCESS)
		return -1;
	t0 = now_ns();
	r = nvrtcCompileProgram(p, nopts, opts);
	*ns = now_ns() - t0;
	nvrtcDestroyProgram(&p);
	return r;
}

int main(int argc, char **argv)
{
	const char *o1[] = { "--gpu-architecture=compute_80" };
	const char *o2[] = { "--gpu-architecture=compute_80", "-default-device", "--use_fast_math" };
	uint64_t ns1 = 0, ns2 = 0;
	int r1, r2, rl = -1, rm = -1, rmx = -1, rlib = -1;
	long elf_size = 0;
	nvJitLinkHandle lh = NULL;
	const char *lo[] = { "-arch=sm_80" };

	r1 = compile(src_saxpy, "saxpy.cu", 1, o1, &ns1);
	r2 = compile(src_reduce, "reduce_kernels.cu", 3, o2, &ns2);
	if (nvJitLinkCreate(&lh, 1, lo) == NVJITLINK_SUCCESS) {
		rl = nvJitLinkComplete(lh);
		nvJitLinkDestroy(&lh);
	}
	if (argc > 1) {
		void *cu = dlopen(argv[1], RTLD_NOW);
		int (*load)(void **, const void *) = cu ? (int (*)(void **, const void *))dlsym(cu, "cuModuleLoadData") : NULL;
		int (*loadex)(void **, const void *, unsigned, void *, void **) =
			cu ? (int (*)(void **, const void *, unsigned, void *, void **))dlsym(cu, "cuModuleLoadDataEx") : NULL;
		int (*libload)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned) =
			cu ? (int (*)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned))
				dlsym(cu, "cuLibraryLoadData") : NULL;
		FILE *f = fopen("/proc/self/exe", "rb");
		char *img = NULL;
		/* a fat binary header: magic, version 1, header size 16, payload 4096 */
		uint8_t fat[16 + 64] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0 };
		void *m;

		fat[8] = 0x00, fat[9] = 0x10;
		if (f && fseek(f, 0, SEEK_END) == 0 && (elf_size = ftell(f)) > 0 && (img = malloc(elf_size))) {
			rewind(f);
			if (fread(img, 1, elf_size, f) != (size_t)elf_size)
				elf_size = 0;
		}
		if (f)
			fclose(f);
		if (load && img)
			rm = load(&m, img);
		if (loadex)
			rmx = loadex(&m, fat, 0, NULL, NULL);
		if (libload && img)
			rlib = libload(&m, img, NULL, NULL, 0, NULL, NULL, 0);
		free(img);
	}
	printf("produced compile1=%d ns1=%llu compile2=%d ns2=%llu link=%d load=%d loadex=%d libload=%d "
	       "elf_size=%ld pid=%d\n", r1, (unsigned long long)ns1, r2, (unsigned long long)ns2, rl, rm, rmx,
	       rlib, elf_size, getpid());
	fflush(stdout);
	usleep(300000);
	return 0;
}
