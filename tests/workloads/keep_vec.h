/*
 * keep_vec.h - read(fd, buf, 1) as a raw syscall with a pattern held in
 * ymm8 (xmm8 without AVX) across it, the register's value after it in out:
 * a blocking call whose vector state an injection must give back
 * (tests/workloads/inject_work.c, tests/unit/test_inject.c).
 */
#ifndef KEEP_VEC_H
#define KEEP_VEC_H
/* the vector width to keep: 64 (AVX-512), 32 (AVX) or 16 bytes */
static inline int keep_vec_width(void)
{
	return __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx") ? 32 : 16;
}

static inline long read_keep_vec(int fd, char *buf, const unsigned long pat[8], unsigned long out[8], int width)
{
	long ret;

	if (width == 64)
		__asm__ volatile("vmovdqu64 (%[pat]), %%zmm8\n\tsyscall\n\tvmovdqu64 %%zmm8, (%[out])"
				 : "=a"(ret)
				 : "a"(0L), "D"((long)fd), "S"(buf), "d"(1L), [pat] "r"(pat), [out] "r"(out)
				 : "rcx", "r11", "memory", "xmm8");
	else if (width == 32)
		__asm__ volatile("vmovdqu (%[pat]), %%ymm8\n\tsyscall\n\tvmovdqu %%ymm8, (%[out])"
				 : "=a"(ret)
				 : "a"(0L), "D"((long)fd), "S"(buf), "d"(1L), [pat] "r"(pat), [out] "r"(out)
				 : "rcx", "r11", "memory", "xmm8");
	else
		__asm__ volatile("movdqu (%[pat]), %%xmm8\n\tsyscall\n\tmovdqu %%xmm8, (%[out])"
				 : "=a"(ret)
				 : "a"(0L), "D"((long)fd), "S"(buf), "d"(1L), [pat] "r"(pat), [out] "r"(out)
				 : "rcx", "r11", "memory", "xmm8");
	return ret;
}
#endif
