/*
 * fake_cupti_act.c - the fake libcupti's activity records (fake_cupti.c,
 * $FAKE_CUPTI_ACTIVITY): kernel records in the layout of the CUDA
 * toolkit's cupti_activity.h, the one libgpubpf_cupti.so is built against.
 * Apart from fake_cupti.c, whose CUPTI functions are declared its own way.
 * Without the header: no records (fake_act_kernel returns 0).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>

size_t fake_act_kernel(void *out, size_t room, uint32_t corr, uint64_t start, uint64_t end, const char *name)
{
	CUpti_ActivityKernel10 k = {
		.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .correlationId = corr, .name = name,
		.start = start, .end = end, .gridX = 1, .gridY = 1, .gridZ = 1, .blockX = 32, .blockY = 1,
		.blockZ = 1, .deviceId = 0, .contextId = 1, .streamId = 7,
	};

	if (room < sizeof(k))
		return 0;
	memcpy(out, &k, sizeof(k));
	return sizeof(k);
}
#else
size_t fake_act_kernel(void *out, size_t room, uint32_t corr, uint64_t start, uint64_t end, const char *name)
{
	(void)out, (void)room, (void)corr, (void)start, (void)end, (void)name;
	return 0;
}
#endif
