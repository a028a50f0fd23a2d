// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stuck_calls.c - the names gpubpf stuck decides by: which functions are
 * GPU calls, which files are GPU libraries, syscall and task state names,
 * and the off-CPU time from the scheduler's clocks.
 */
#include <stdio.h>
#include <string.h>
#include "core/event.h"
#include "bpf/stuck.h"
#include "stuck.h"

/*
 * Calls that can block for long and that the GB_TYPES table does not
 * trace (collectives, peer copies, initialisation, teardown): a thread
 * found in one of them is stuck in the GPU stack all the same. Names as
 * the libraries export them (RCCL exports NCCL's names).
 */
static const struct {
	const char *name;
	const char *api;
} extra_calls[] = {
	/* NCCL / RCCL: a collective waits for every rank */
	{ "ncclAllReduce", "nccl" }, { "ncclBroadcast", "nccl" }, { "ncclBcast", "nccl" },
	{ "ncclReduce", "nccl" }, { "ncclAllGather", "nccl" }, { "ncclReduceScatter", "nccl" },
	{ "ncclAllToAll", "nccl" }, { "ncclSend", "nccl" }, { "ncclRecv", "nccl" },
	{ "ncclGroupEnd", "nccl" }, { "ncclCommInitRank", "nccl" },
	{ "ncclCommInitRankConfig", "nccl" }, { "ncclCommInitAll", "nccl" },
	{ "ncclCommSplit", "nccl" }, { "ncclCommFinalize", "nccl" },
	{ "ncclCommDestroy", "nccl" }, { "ncclCommAbort", "nccl" },
	/* CUDA driver */
	{ "cuInit", "cuda-driver" }, { "cuDevicePrimaryCtxRetain", "cuda-driver" },
	{ "cuCtxCreate_v2", "cuda-driver" }, { "cuCtxDestroy_v2", "cuda-driver" },
	{ "cuMemcpyPeer", "cuda-driver" }, { "cuMemcpyPeerAsync", "cuda-driver" },
	{ "cuMemcpy3DPeer", "cuda-driver" }, { "cuMemHostAlloc", "cuda-driver" },
	{ "cuMemFreeHost", "cuda-driver" }, { "cuMemHostRegister_v2", "cuda-driver" },
	{ "cuStreamDestroy_v2", "cuda-driver" }, { "cuModuleUnload", "cuda-driver" },
	{ "cuLinkComplete", "cuda-driver" }, { "cuGraphInstantiateWithFlags", "cuda-driver" },
	/* CUDA runtime */
	{ "cudaMemcpyPeer", "cuda-runtime" }, { "cudaMemcpyPeerAsync", "cuda-runtime" },
	{ "cudaMemcpy2D", "cuda-runtime" }, { "cudaMemcpy3D", "cuda-runtime" },
	{ "cudaMemcpyToSymbol", "cuda-runtime" }, { "cudaMemcpyFromSymbol", "cuda-runtime" },
	{ "cudaSetDevice", "cuda-runtime" }, { "cudaDeviceReset", "cuda-runtime" },
	{ "cudaFreeHost", "cuda-runtime" }, { "cudaHostAlloc", "cuda-runtime" },
	{ "cudaHostRegister", "cuda-runtime" }, { "cudaStreamWaitEvent", "cuda-runtime" },
	{ "cudaStreamDestroy", "cuda-runtime" }, { "cudaGraphInstantiate", "cuda-runtime" },
	/* HIP and HSA */
	{ "hipInit", "hip" }, { "hipSetDevice", "hip" }, { "hipDeviceReset", "hip" },
	{ "hipMemcpyPeer", "hip" }, { "hipMemcpyPeerAsync", "hip" }, { "hipMemcpy3D", "hip" },
	{ "hipMemcpyToSymbol", "hip" }, { "hipMemcpyFromSymbol", "hip" },
	{ "hipHostFree", "hip" }, { "hipHostRegister", "hip" }, { "hipStreamWaitEvent", "hip" },
	{ "hipStreamDestroy", "hip" },
	{ "hsa_init", "hsa" }, { "hsa_signal_wait_scacquire", "hsa" },
	{ "hsa_signal_wait_relaxed", "hsa" }, { "hsa_signal_wait_acquire", "hsa" },
};

/* a table entry that is a library function (not ioctl, xray, cupti ... records) */
static bool table_func(const char *name, int *type, const char **api)
{
	const struct gb_type_info *ti;
	int t = gb_type_by_name(name);

	if (t <= 0 || !(ti = gb_type_info((unsigned)t)))
		return false;
	switch (ti->api) {
	case GB_API_CUDA_DRV:
	case GB_API_CUDA_RT:
	case GB_API_HIP:
	case GB_API_HSA:
		*type = t;
		*api = gb_api_name(ti->api);
		return true;
	}
	return false;
}

static bool lookup(const char *name, int *type, const char **api)
{
	unsigned i;

	if (table_func(name, type, api))
		return true;
	for (i = 0; i < sizeof(extra_calls) / sizeof(extra_calls[0]); i++) {
		if (!strcmp(name, extra_calls[i].name)) {
			*type = -1;
			*api = extra_calls[i].api;
			return true;
		}
	}
	return false;
}

bool stuck_gpu_func(const char *name, int *type, const char **api)
{
	static const char *const suffixes[] = { "_ptds", "_ptsz" };
	char base[128];
	size_t n, k;
	unsigned i;

	if (!name || !*name)
		return false;
	n = strcspn(name, "@");		/* cuMemAlloc_v2@@libcuda.so.1 */
	if (n >= sizeof(base))
		return false;
	memcpy(base, name, n);
	base[n] = 0;
	if (lookup(base, type, api))
		return true;
	/* per-thread default stream variants of a traced call (cuMemcpyDtoH_v2_ptds) */
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		k = strlen(suffixes[i]);
		if (n > k && !strcmp(base + n - k, suffixes[i])) {
			base[n - k] = 0;
			return lookup(base, type, api);
		}
	}
	return false;
}

const char stuck_gpu_lib_list[] = "libcuda, libcudart, libamdhip64, libhsa-runtime64, libnccl, librccl";

bool stuck_gpu_lib(const char *path)
{
	static const char *const prefixes[] = {
		"libcuda.so", "libcudart.so", "libamdhip64.so", "libhsa-runtime64.so",
		"libnccl.so", "librccl.so",
	};
	const char *base;
	unsigned i;

	if (!path)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* the syscalls a thread is usually found blocked in, for this architecture */
static const struct {
	int nr;
	const char *name;
} syscalls[] = {
#if defined(__x86_64__)
	{ 0, "read" }, { 1, "write" }, { 2, "open" }, { 3, "close" }, { 7, "poll" },
	{ 9, "mmap" }, { 11, "munmap" }, { 16, "ioctl" }, { 17, "pread64" },
	{ 18, "pwrite64" }, { 19, "readv" }, { 20, "writev" }, { 23, "select" },
	{ 24, "sched_yield" }, { 26, "msync" }, { 28, "madvise" }, { 34, "pause" },
	{ 35, "nanosleep" }, { 42, "connect" }, { 43, "accept" }, { 44, "sendto" },
	{ 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" }, { 61, "wait4" },
	{ 65, "semop" }, { 73, "flock" }, { 74, "fsync" }, { 128, "rt_sigtimedwait" },
	{ 130, "rt_sigsuspend" }, { 202, "futex" }, { 220, "semtimedop" },
	{ 230, "clock_nanosleep" }, { 232, "epoll_wait" }, { 247, "waitid" },
	{ 257, "openat" }, { 270, "pselect6" }, { 271, "ppoll" }, { 281, "epoll_pwait" },
	{ 288, "accept4" }, { 426, "io_uring_enter" }, { 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
#elif defined(__aarch64__)
	{ 22, "epoll_pwait" }, { 29, "ioctl" }, { 56, "openat" }, { 57, "close" },
	{ 63, "read" }, { 64, "write" }, { 65, "readv" }, { 66, "writev" },
	{ 67, "pread64" }, { 68, "pwrite64" }, { 72, "pselect6" }, { 73, "ppoll" },
	{ 82, "fsync" }, { 98, "futex" }, { 101, "nanosleep" }, { 115, "clock_nanosleep" },
	{ 124, "sched_yield" }, { 133, "rt_sigsuspend" }, { 137, "rt_sigtimedwait" },
	{ 202, "accept" }, { 203, "connect" }, { 206, "sendto" }, { 207, "recvfrom" },
	{ 211, "sendmsg" }, { 212, "recvmsg" }, { 215, "munmap" }, { 222, "mmap" },
	{ 227, "msync" }, { 233, "madvise" }, { 242, "accept4" }, { 260, "wait4" },
	{ 426, "io_uring_enter" }, { 441, "epoll_pwait2" }, { 449, "futex_waitv" },
#endif
};

const char *stuck_syscall_name(int64_t nr)
{
	unsigned i;

	for (i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

/* task->__state bits (include/linux/sched.h) */
#define TS_INTERRUPTIBLE	0x0001
#define TS_UNINTERRUPTIBLE	0x0002
#define TS_STOPPED		0x0004
#define TS_TRACED		0x0008
#define TS_EXITING		(0x0010 | 0x0020 | 0x0080)	/* dead, zombie, TASK_DEAD */
#define TS_PARKED		0x0040
#define TS_FROZEN		0x8000

const char *stuck_state_name(uint32_t state, bool on_cpu)
{
	if (!state)
		return on_cpu ? "running" : "runnable";
	if (state & TS_FROZEN)
		return "frozen";
	if (state & TS_TRACED)
		return "traced";
	if (state & TS_STOPPED)
		return "stopped";
	if (state & TS_EXITING)
		return "exiting";
	if (state & TS_UNINTERRUPTIBLE)
		return "uninterruptible";
	if (state & (TS_INTERRUPTIBLE | TS_PARKED))
		return "sleeping";
	return "waiting";
}

/*
 * se.exec_start is the task clock (rq->clock_task) of the CPU the thread
 * last ran on, taken when it stopped running. That clock is the run
 * queue's clock (sched_clock) less the steal and IRQ time of that CPU, so
 * bpf_ktime_get_ns() - exec_start is wrong by the steal time accumulated
 * since boot (3.7 s on a KVM guest after 7 hours). Now in the same clock:
 * the iterating CPU's rq->clock (fresh within a tick: that CPU runs us)
 * less the thread's CPU's lag (rq->clock - rq->clock_task). Checked
 * against `sleep 30`: 4.016 s after 4 s, 12.048 s after 12 s, same or other
 * CPU. Steal time during the sleep itself is not counted (a little short).
 */
uint64_t stuck_off_cpu_ns(const struct stuck_task_rec *t)
{
	uint64_t lag, now;

	if (!t->state || (t->flags & STUCK_F_ON_CPU) || !t->exec_start || !t->this_rq_clock ||
	    !t->task_rq_clock || t->task_rq_clock < t->task_rq_clock_task)
		return 0;
	lag = t->task_rq_clock - t->task_rq_clock_task;
	if (t->this_rq_clock < lag)
		return 0;
	now = t->this_rq_clock - lag;
	return now > t->exec_start ? now - t->exec_start : 0;
}
