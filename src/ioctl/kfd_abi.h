/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kfd_abi.h - the few argument structs of <linux/kfd_ioctl.h> (uapi 1.x,
 * ABI-stable) that gpubpf decodes. That header includes <drm/drm.h>, which
 * many systems lack (it comes with the kernel's DRM uapi, not libc), so the
 * layouts are repeated here and checked against the header where it builds.
 */
#ifndef GB_KFD_ABI_H
#define GB_KFD_ABI_H

#include <stddef.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define GB_KFD_MAGIC	'K'

struct gb_kfd_create_queue {
	__u64 ring_base_address, write_pointer_address, read_pointer_address, doorbell_offset;
	__u32 ring_size, gpu_id, queue_type, queue_percentage, queue_priority, queue_id;
	__u64 eop_buffer_address, eop_buffer_size, ctx_save_restore_address;
	__u32 ctx_save_restore_size, ctl_stack_size;
};

struct gb_kfd_alloc_memory_of_gpu {
	__u64 va_addr, size, handle, mmap_offset;
	__u32 gpu_id, flags;
};

struct gb_kfd_free_memory_of_gpu {
	__u64 handle;
};

struct gb_kfd_map_memory_to_gpu {	/* also unmap_memory_from_gpu */
	__u64 handle, device_ids_array_ptr;
	__u32 n_devices, n_success;
};

#define GB_KFD_IOC_CREATE_QUEUE		_IOWR(GB_KFD_MAGIC, 0x02, struct gb_kfd_create_queue)
#define GB_KFD_IOC_ALLOC_MEMORY_OF_GPU	_IOWR(GB_KFD_MAGIC, 0x16, struct gb_kfd_alloc_memory_of_gpu)
#define GB_KFD_IOC_FREE_MEMORY_OF_GPU	_IOW(GB_KFD_MAGIC, 0x17, struct gb_kfd_free_memory_of_gpu)
#define GB_KFD_IOC_MAP_MEMORY_TO_GPU	_IOWR(GB_KFD_MAGIC, 0x18, struct gb_kfd_map_memory_to_gpu)
#define GB_KFD_IOC_UNMAP_MEMORY_FROM_GPU _IOWR(GB_KFD_MAGIC, 0x19, struct gb_kfd_map_memory_to_gpu)

#if defined(__has_include)
#if __has_include(<drm/drm.h>) && __has_include(<linux/kfd_ioctl.h>)
#include <linux/kfd_ioctl.h>
_Static_assert(GB_KFD_IOC_CREATE_QUEUE == AMDKFD_IOC_CREATE_QUEUE, "kfd create_queue");
_Static_assert(GB_KFD_IOC_ALLOC_MEMORY_OF_GPU == AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, "kfd alloc");
_Static_assert(GB_KFD_IOC_FREE_MEMORY_OF_GPU == AMDKFD_IOC_FREE_MEMORY_OF_GPU, "kfd free");
_Static_assert(GB_KFD_IOC_MAP_MEMORY_TO_GPU == AMDKFD_IOC_MAP_MEMORY_TO_GPU, "kfd map");
_Static_assert(GB_KFD_IOC_UNMAP_MEMORY_FROM_GPU == AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, "kfd unmap");
_Static_assert(offsetof(struct gb_kfd_alloc_memory_of_gpu, flags) ==
	       offsetof(struct kfd_ioctl_alloc_memory_of_gpu_args, flags), "kfd alloc layout");
_Static_assert(offsetof(struct gb_kfd_create_queue, queue_id) ==
	       offsetof(struct kfd_ioctl_create_queue_args, queue_id), "kfd queue layout");
#endif
#endif

#endif
