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
	CUpti_ActivityKernel10 k;

	if (room < sizeof(k))
		return 0;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.start = start;
	k.end = end;
	k.name = name;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 32;
	k.blockY = k.blockZ = 1;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 7;
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
