// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_stuck.c - gpubpf stuck without BPF: which names are GPU calls,
 * which files GPU libraries, the off-CPU time from the scheduler's
 * clocks, task states, and the unwinding of a stack taken in the middle
 * of a function (not at a probed entry: no caller guessed from [sp]).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include "incident/stuck.h"
#include "bpf/stuck.h"
#include "stacks/stack.h"
#include "stacks/symbolize.h"

static void test_gpu_func(void **state)
{
	const char *api = NULL;
	int type = 0;

	assert_true(stuck_gpu_func("cuStreamSynchronize", &type, &api));
	assert_int_equal(type, GB_T_cuStreamSynchronize);
	assert_string_equal(api, "cuda-driver");
	assert_true(stuck_gpu_func("cudaDeviceSynchronize", &type, &api));
	assert_int_equal(type, GB_T_cudaDeviceSynchronize);
	assert_string_equal(api, "cuda-runtime");
	assert_true(stuck_gpu_func("hipMemcpy", &type, &api));
	assert_string_equal(api, "hip");
	/* versioned and per-thread-stream names are the traced call */
	assert_true(stuck_gpu_func("cuMemAlloc_v2@@libcuda.so.1", &type, &api));
	assert_int_equal(type, GB_T_cuMemAlloc_v2);
	assert_true(stuck_gpu_func("cuMemcpyDtoH_v2_ptds", &type, &api));	/* traced itself (issue 19) */
	assert_int_equal(type, GB_T_cuMemcpyDtoH_v2_ptds);
	assert_true(stuck_gpu_func("cudaGraphLaunch_ptsz", &type, &api));	/* traced itself (graphs) */
	assert_int_equal(type, GB_T_cudaGraphLaunch_ptsz);
	assert_true(stuck_gpu_func("cudaEventSynchronize_ptsz", &type, &api));	/* not traced: its base call */
	assert_int_equal(type, GB_T_cudaEventSynchronize);
	assert_true(stuck_gpu_func("cuLaunchKernel_ptsz", &type, &api));
	assert_int_equal(type, GB_T_cuLaunchKernel_ptsz);
	/* blocking calls outside the table */
	assert_true(stuck_gpu_func("ncclAllReduce", &type, &api));
	assert_int_equal(type, -1);
	assert_string_equal(api, "nccl");
	assert_true(stuck_gpu_func("cudaMemcpyPeer", &type, &api));
	assert_int_equal(type, -1);
	/* table entries that are not library functions, and everything else */
	assert_false(stuck_gpu_func("ioctl", &type, &api));	/* libc's, in every stack */
	assert_false(stuck_gpu_func("none", &type, &api));
	assert_false(stuck_gpu_func("xray", &type, &api));
	assert_false(stuck_gpu_func("gpu_kernel", &type, &api));
	assert_false(stuck_gpu_func("main", &type, &api));
	assert_false(stuck_gpu_func("_ptsz", &type, &api));
	assert_false(stuck_gpu_func("", &type, &api));
	assert_false(stuck_gpu_func(NULL, &type, &api));
}

static void test_gpu_lib(void **state)
{
	assert_true(stuck_gpu_lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	assert_true(stuck_gpu_lib("/opt/venv/nvidia/cuda_runtime/lib/libcudart.so.12"));
	assert_true(stuck_gpu_lib("/opt/rocm/lib/libamdhip64.so.6.1.0"));
	assert_true(stuck_gpu_lib("/x/libnccl.so.2"));
	assert_false(stuck_gpu_lib("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_false(stuck_gpu_lib("/home/u/libcudaxx/notlib"));
	assert_false(stuck_gpu_lib("/tmp/mylibcuda.so"));
	assert_false(stuck_gpu_lib(NULL));
}

/* values read on a 2-vCPU KVM guest, `sleep 30` 4 s after its start */
static void test_off_cpu(void **state)
{
	struct stuck_task_rec t = {
		.state = 1,
		.exec_start = 25077156940000ull,
		.task_rq_clock = 25084890759000ull,
		.task_rq_clock_task = 25081172923000ull,	/* 3.7 s of steal time behind */
		.this_rq_clock = 25084890737000ull,
		.now_ns = 25084893772000ull,
	};
	uint64_t ns = stuck_off_cpu_ns(&t);

	assert_true(ns > 4000000000ull && ns < 4030000000ull);
	t.state = 0;		/* runnable or running: not off CPU */
	assert_int_equal(stuck_off_cpu_ns(&t), 0);
	t.state = 1;
	t.flags = STUCK_F_ON_CPU;
	assert_int_equal(stuck_off_cpu_ns(&t), 0);
	t.flags = 0;
	t.task_rq_clock = 0;	/* the run queue could not be read */
	assert_int_equal(stuck_off_cpu_ns(&t), 0);
	t.task_rq_clock = t.task_rq_clock_task - 1;	/* inconsistent: no answer */
	assert_int_equal(stuck_off_cpu_ns(&t), 0);
	t.task_rq_clock = 25084890759000ull;
	t.exec_start = t.this_rq_clock;	/* stopped after the clock was last updated */
	assert_int_equal(stuck_off_cpu_ns(&t), 0);
}

static void test_names(void **state)
{
	assert_string_equal(stuck_state_name(0, true), "running");
	assert_string_equal(stuck_state_name(0, false), "runnable");
	assert_string_equal(stuck_state_name(0x2001, false), "sleeping");	/* freezable */
	assert_string_equal(stuck_state_name(0x0402, false), "uninterruptible");	/* TASK_IDLE */
	assert_string_equal(stuck_state_name(0x0004, false), "stopped");
	assert_string_equal(stuck_state_name(0x0008, false), "traced");
#if defined(__x86_64__)
	assert_string_equal(stuck_syscall_name(202), "futex");
	assert_string_equal(stuck_syscall_name(16), "ioctl");
#endif
	assert_null(stuck_syscall_name(-1));
	assert_null(stuck_syscall_name(100000));
}

#if defined(__x86_64__)
static struct gb_stack_rec *rec;

/*
 * The registers in the middle of a function, as a thread blocked in a
 * syscall has them saved: getcontext's return point and stack pointer.
 * [sp] is a local here, not a return address.
 */
__attribute__((noinline, no_sanitize_address)) static void snap_mid(void)
{
	volatile uint64_t junk[4] = { 0x1111, 0x2222, 0x3333, 0x4444 };
	ucontext_t uc;
	uint64_t sp, i;

	getcontext(&uc);
	memset(rec->regs, 0, sizeof(rec->regs));
	rec->regs[15] = 202;				/* orig_ax */
	rec->regs[16] = uc.uc_mcontext.gregs[REG_RIP];
	rec->regs[19] = sp = uc.uc_mcontext.gregs[REG_RSP];
	rec->regs[4] = uc.uc_mcontext.gregs[REG_RBP];
	rec->regs[5] = uc.uc_mcontext.gregs[REG_RBX];
	rec->regs[3] = uc.uc_mcontext.gregs[REG_R12];
	rec->regs[2] = uc.uc_mcontext.gregs[REG_R13];
	rec->regs[1] = uc.uc_mcontext.gregs[REG_R14];
	rec->regs[0] = uc.uc_mcontext.gregs[REG_R15];
	rec->sp = sp;
	for (i = 0; i < 8192 / 8; i++)
		((volatile uint64_t *)rec->data)[i] = ((volatile uint64_t *)sp)[i];
	rec->len = 8192;
	junk[0]++;
}

__attribute__((noinline)) void stk_level3(void) { snap_mid(); asm volatile(""); }
__attribute__((noinline)) void stk_level2(void) { stk_level3(); asm volatile(""); }
__attribute__((noinline)) void stk_level1(void) { stk_level2(); asm volatile(""); }

static void test_unwind_mid(void **state)
{
	struct stack_ops ops = { 0 };
	struct stack_table *t = stack_table_new(&ops);
	struct symbolizer *sy = symbolizer_new(NULL);
	const char *want[] = { "snap_mid", "stk_level3", "stk_level2", "stk_level1", "test_unwind_mid" };
	struct gb_frame f[GB_STACK_MAX_FRAMES];
	struct gb_maps m;
	unsigned i, n;

	rec = calloc(1, sizeof(*rec));
	rec->r.kind = GB_REC_STACK;
	rec->r.pid = rec->r.tid = getpid();
	stk_level1();
	assert_int_equal(procmaps_read(getpid(), &m), 0);
	n = stack_dwarf_frames(t, &m, rec, GB_STACK_REC_HDR + rec->len, f, GB_STACK_MAX_FRAMES);
	assert_true(n >= 5);
	for (i = 0; i < 5; i++) {
		const char *name = symbolize_frame(sy, &f[i], i);

		assert_non_null(name);
		assert_string_equal(name, want[i]);
	}
	/* a header alone, or no room: nothing */
	assert_int_equal(stack_dwarf_frames(t, &m, rec, 10, f, GB_STACK_MAX_FRAMES), 0);
	assert_int_equal(stack_dwarf_frames(t, &m, rec, GB_STACK_REC_HDR + rec->len, f, 0), 0);
	procmaps_free(&m);
	symbolizer_free(sy);
	stack_table_free(t);
	free(rec);
}
#else
static void test_unwind_mid(void **state)
{
	skip();
}
#endif

/* a found call as a trace event: attach time, flag, off-CPU ns, type or name */
static void test_event(void **state)
{
	struct stuck_call c[2] = {
		{ .tid = 11, .ns_tid = 3, .ns_pid = 1, .comm = "w", .type = GB_T_cuMemcpyDtoH_v2,
		  .func = "cuMemcpyDtoH_v2", .api = "cuda-driver", .off_cpu_ns = 5 },
		{ .tid = 12, .comm = "w", .type = -1, .func = "ncclAllReduce", .api = "nccl" },
	};
	struct stuck_report r = { .pid = 10, .ts_ns = 1234, .calls = c, .ncalls = 2 };
	struct gb_event ev;

	stuck_call_event(&r, 0, &ev);
	assert_int_equal(ev.ts_ns, 1234);
	assert_int_equal(ev.pid, 10);
	assert_int_equal(ev.tid, 11);
	assert_int_equal(ev.ns_tid, 3);
	assert_int_equal(ev.type, GB_T_cuMemcpyDtoH_v2);
	assert_int_equal(ev.api, GB_API_CUDA_DRV);
	assert_int_equal(ev.kind, GB_K_DTOH);
	assert_int_equal(ev.flags, GB_EF_ATTACHED);
	assert_int_equal(ev.aux[0], 5);
	assert_string_equal(ev.comm, "w");
	assert_null(ev.name);
	assert_string_equal(gb_event_state(&ev), "blocked_at_attach");
	stuck_call_event(&r, 1, &ev);
	assert_int_equal(ev.type, GB_T_none);
	assert_string_equal(ev.name, "ncclAllReduce");
	assert_int_equal(ev.aux[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_func),
		cmocka_unit_test(test_gpu_lib),
		cmocka_unit_test(test_off_cpu),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unwind_mid),
		cmocka_unit_test(test_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
