// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl_names.c - names and argument layouts of GPU driver ioctls.
 *
 * NVIDIA: nv-ioctl-numbers.h and nv_escape.h (escape numbers, magic 'F',
 * _IOWR with the struct size), nvos.h (NVOS00/21/33/54/64), nv-ioctl.h
 * (nv_ioctl_xfer_t) and uvm_ioctl.h (plain numbers, no size bits) of
 * NVIDIA/open-gpu-kernel-modules, which are the same from 515 on.
 * AMD: the kernel uapi <linux/kfd_ioctl.h> (see kfd_abi.h) and DRM/amdgpu
 * command numbers (drm.h, amdgpu_drm.h).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include "ioctl.h"
#include "kfd_abi.h"
#include "core/json.h"
#include "core/util.h"

#define NV_MAGIC	'F'
#define NV_IOWR(nr, size) _IOC(_IOC_READ | _IOC_WRITE, NV_MAGIC, nr, size)

struct name_ent {
	uint32_t key;
	const char *name;
};

static const struct name_ent nv_names[] = {	/* by _IOC_NR */
	{ 0x27, "NV_ESC_RM_ALLOC_MEMORY" }, { 0x28, "NV_ESC_RM_ALLOC_OBJECT" },
	{ 0x29, "NV_ESC_RM_FREE" }, { 0x2a, "NV_ESC_RM_CONTROL" }, { 0x2b, "NV_ESC_RM_ALLOC" },
	{ 0x32, "NV_ESC_RM_CONFIG_GET" }, { 0x33, "NV_ESC_RM_CONFIG_SET" },
	{ 0x34, "NV_ESC_RM_DUP_OBJECT" }, { 0x35, "NV_ESC_RM_SHARE" },
	{ 0x37, "NV_ESC_RM_CONFIG_GET_EX" }, { 0x38, "NV_ESC_RM_CONFIG_SET_EX" },
	{ 0x39, "NV_ESC_RM_I2C_ACCESS" }, { 0x41, "NV_ESC_RM_IDLE_CHANNELS" },
	{ 0x4a, "NV_ESC_RM_VID_HEAP_CONTROL" }, { 0x4d, "NV_ESC_RM_ACCESS_REGISTRY" },
	{ 0x4e, "NV_ESC_RM_MAP_MEMORY" }, { 0x4f, "NV_ESC_RM_UNMAP_MEMORY" },
	{ 0x52, "NV_ESC_RM_GET_EVENT_DATA" }, { 0x54, "NV_ESC_RM_ALLOC_CONTEXT_DMA2" },
	{ 0x56, "NV_ESC_RM_ADD_VBLANK_CALLBACK" }, { 0x57, "NV_ESC_RM_MAP_MEMORY_DMA" },
	{ 0x58, "NV_ESC_RM_UNMAP_MEMORY_DMA" }, { 0x59, "NV_ESC_RM_BIND_CONTEXT_DMA" },
	{ 0x5c, "NV_ESC_RM_EXPORT_OBJECT_TO_FD" }, { 0x5d, "NV_ESC_RM_IMPORT_OBJECT_FROM_FD" },
	{ 0x5e, "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO" },
	{ 200, "NV_ESC_CARD_INFO" }, { 201, "NV_ESC_REGISTER_FD" },
	{ 206, "NV_ESC_ALLOC_OS_EVENT" }, { 207, "NV_ESC_FREE_OS_EVENT" },
	{ 209, "NV_ESC_STATUS_CODE" }, { 210, "NV_ESC_CHECK_VERSION_STR" },
	{ 211, "NV_ESC_IOCTL_XFER_CMD" }, { 212, "NV_ESC_ATTACH_GPUS_TO_FD" },
	{ 213, "NV_ESC_QUERY_DEVICE_INTR" }, { 214, "NV_ESC_SYS_PARAMS" },
	{ 217, "NV_ESC_EXPORT_TO_DMABUF_FD" }, { 218, "NV_ESC_WAIT_OPEN_COMPLETE" },
};

static const struct name_ent uvm_names[] = {	/* by the whole number */
	{ 0x30000001, "UVM_INITIALIZE" }, { 0x30000002, "UVM_DEINITIALIZE" },
	{ 1, "UVM_RESERVE_VA" }, { 2, "UVM_RELEASE_VA" }, { 3, "UVM_REGION_COMMIT" },
	{ 4, "UVM_REGION_DECOMMIT" }, { 5, "UVM_REGION_SET_STREAM" },
	{ 6, "UVM_SET_STREAM_RUNNING" }, { 7, "UVM_SET_STREAM_STOPPED" }, { 9, "UVM_RUN_TEST" },
	{ 10, "UVM_ADD_SESSION" }, { 11, "UVM_REMOVE_SESSION" }, { 12, "UVM_ENABLE_COUNTERS" },
	{ 13, "UVM_MAP_COUNTER" }, { 14, "UVM_CREATE_EVENT_QUEUE" },
	{ 15, "UVM_REMOVE_EVENT_QUEUE" }, { 16, "UVM_MAP_EVENT_QUEUE" }, { 17, "UVM_EVENT_CTRL" },
	{ 18, "UVM_REGISTER_MPS_SERVER" }, { 19, "UVM_REGISTER_MPS_CLIENT" },
	{ 20, "UVM_GET_GPU_UUID_TABLE" }, { 23, "UVM_CREATE_RANGE_GROUP" },
	{ 24, "UVM_DESTROY_RANGE_GROUP" }, { 25, "UVM_REGISTER_GPU_VASPACE" },
	{ 26, "UVM_UNREGISTER_GPU_VASPACE" }, { 27, "UVM_REGISTER_CHANNEL" },
	{ 28, "UVM_UNREGISTER_CHANNEL" }, { 29, "UVM_ENABLE_PEER_ACCESS" },
	{ 30, "UVM_DISABLE_PEER_ACCESS" }, { 31, "UVM_SET_RANGE_GROUP" },
	{ 33, "UVM_MAP_EXTERNAL_ALLOCATION" }, { 34, "UVM_FREE" }, { 35, "UVM_MEM_MAP" },
	{ 36, "UVM_DEBUG_ACCESS_MEMORY" }, { 37, "UVM_REGISTER_GPU" },
	{ 38, "UVM_UNREGISTER_GPU" }, { 39, "UVM_PAGEABLE_MEM_ACCESS" },
	{ 40, "UVM_PREVENT_MIGRATION_RANGE_GROUPS" }, { 41, "UVM_ALLOW_MIGRATION_RANGE_GROUPS" },
	{ 42, "UVM_SET_PREFERRED_LOCATION" }, { 43, "UVM_UNSET_PREFERRED_LOCATION" },
	{ 44, "UVM_ENABLE_READ_DUPLICATION" }, { 45, "UVM_DISABLE_READ_DUPLICATION" },
	{ 46, "UVM_SET_ACCESSED_BY" }, { 47, "UVM_UNSET_ACCESSED_BY" }, { 51, "UVM_MIGRATE" },
	{ 53, "UVM_MIGRATE_RANGE_GROUP" }, { 54, "UVM_ENABLE_SYSTEM_WIDE_ATOMICS" },
	{ 55, "UVM_DISABLE_SYSTEM_WIDE_ATOMICS" }, { 56, "UVM_TOOLS_INIT_EVENT_TRACKER" },
	{ 57, "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD" },
	{ 58, "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS" },
	{ 59, "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS" }, { 60, "UVM_TOOLS_ENABLE_COUNTERS" },
	{ 61, "UVM_TOOLS_DISABLE_COUNTERS" }, { 62, "UVM_TOOLS_READ_PROCESS_MEMORY" },
	{ 63, "UVM_TOOLS_WRITE_PROCESS_MEMORY" }, { 64, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE" },
};

static const struct name_ent kfd_names[] = {	/* kfd_ioctl.h, by _IOC_NR */
	{ 0x01, "AMDKFD_IOC_GET_VERSION" },
	{ 0x02, "AMDKFD_IOC_CREATE_QUEUE" },
	{ 0x03, "AMDKFD_IOC_DESTROY_QUEUE" },
	{ 0x04, "AMDKFD_IOC_SET_MEMORY_POLICY" },
	{ 0x05, "AMDKFD_IOC_GET_CLOCK_COUNTERS" },
	{ 0x06, "AMDKFD_IOC_GET_PROCESS_APERTURES" },
	{ 0x07, "AMDKFD_IOC_UPDATE_QUEUE" },
	{ 0x08, "AMDKFD_IOC_CREATE_EVENT" },
	{ 0x09, "AMDKFD_IOC_DESTROY_EVENT" },
	{ 0x0a, "AMDKFD_IOC_SET_EVENT" },
	{ 0x0b, "AMDKFD_IOC_RESET_EVENT" },
	{ 0x0c, "AMDKFD_IOC_WAIT_EVENTS" },
	{ 0x0d, "AMDKFD_IOC_DBG_REGISTER_DEPRECATED" },
	{ 0x0e, "AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED" },
	{ 0x0f, "AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED" },
	{ 0x10, "AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED" },
	{ 0x11, "AMDKFD_IOC_SET_SCRATCH_BACKING_VA" },
	{ 0x12, "AMDKFD_IOC_GET_TILE_CONFIG" },
	{ 0x13, "AMDKFD_IOC_SET_TRAP_HANDLER" },
	{ 0x14, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW" },
	{ 0x15, "AMDKFD_IOC_ACQUIRE_VM" },
	{ 0x16, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU" },
	{ 0x17, "AMDKFD_IOC_FREE_MEMORY_OF_GPU" },
	{ 0x18, "AMDKFD_IOC_MAP_MEMORY_TO_GPU" },
	{ 0x19, "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU" },
	{ 0x1a, "AMDKFD_IOC_SET_CU_MASK" },
	{ 0x1b, "AMDKFD_IOC_GET_QUEUE_WAVE_STATE" },
	{ 0x1c, "AMDKFD_IOC_GET_DMABUF_INFO" },
	{ 0x1d, "AMDKFD_IOC_IMPORT_DMABUF" },
	{ 0x1e, "AMDKFD_IOC_ALLOC_QUEUE_GWS" },
	{ 0x1f, "AMDKFD_IOC_SMI_EVENTS" },
	{ 0x20, "AMDKFD_IOC_SVM" },
	{ 0x21, "AMDKFD_IOC_SET_XNACK_MODE" },
	{ 0x22, "AMDKFD_IOC_CRIU_OP" },
	{ 0x23, "AMDKFD_IOC_AVAILABLE_MEMORY" },
};

static const struct name_ent drm_names[] = {	/* drm.h, by _IOC_NR */
	{ 0x00, "DRM_IOCTL_VERSION" }, { 0x01, "DRM_IOCTL_GET_UNIQUE" },
	{ 0x02, "DRM_IOCTL_GET_MAGIC" }, { 0x05, "DRM_IOCTL_GET_CLIENT" },
	{ 0x06, "DRM_IOCTL_GET_STATS" }, { 0x07, "DRM_IOCTL_SET_VERSION" },
	{ 0x09, "DRM_IOCTL_GEM_CLOSE" }, { 0x0a, "DRM_IOCTL_GEM_FLINK" },
	{ 0x0b, "DRM_IOCTL_GEM_OPEN" }, { 0x0c, "DRM_IOCTL_GET_CAP" },
	{ 0x0d, "DRM_IOCTL_SET_CLIENT_CAP" }, { 0x2d, "DRM_IOCTL_PRIME_HANDLE_TO_FD" },
	{ 0x2e, "DRM_IOCTL_PRIME_FD_TO_HANDLE" }, { 0xbf, "DRM_IOCTL_SYNCOBJ_CREATE" },
	{ 0xc0, "DRM_IOCTL_SYNCOBJ_DESTROY" }, { 0xc1, "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD" },
	{ 0xc2, "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE" }, { 0xc3, "DRM_IOCTL_SYNCOBJ_WAIT" },
	{ 0xc4, "DRM_IOCTL_SYNCOBJ_RESET" }, { 0xc5, "DRM_IOCTL_SYNCOBJ_SIGNAL" },
	{ 0xca, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT" }, { 0xcb, "DRM_IOCTL_SYNCOBJ_QUERY" },
	{ 0xcc, "DRM_IOCTL_SYNCOBJ_TRANSFER" }, { 0xcd, "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL" },
};

static const struct name_ent amdgpu_names[] = {	/* amdgpu_drm.h, DRM_COMMAND_BASE + n */
	{ 0x40, "DRM_IOCTL_AMDGPU_GEM_CREATE" }, { 0x41, "DRM_IOCTL_AMDGPU_GEM_MMAP" },
	{ 0x42, "DRM_IOCTL_AMDGPU_CTX" }, { 0x43, "DRM_IOCTL_AMDGPU_BO_LIST" },
	{ 0x44, "DRM_IOCTL_AMDGPU_CS" }, { 0x45, "DRM_IOCTL_AMDGPU_INFO" },
	{ 0x46, "DRM_IOCTL_AMDGPU_GEM_METADATA" }, { 0x47, "DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE" },
	{ 0x48, "DRM_IOCTL_AMDGPU_GEM_VA" }, { 0x49, "DRM_IOCTL_AMDGPU_WAIT_CS" },
	{ 0x50, "DRM_IOCTL_AMDGPU_GEM_OP" }, { 0x51, "DRM_IOCTL_AMDGPU_GEM_USERPTR" },
	{ 0x52, "DRM_IOCTL_AMDGPU_WAIT_FENCES" }, { 0x53, "DRM_IOCTL_AMDGPU_VM" },
	{ 0x54, "DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE" }, { 0x55, "DRM_IOCTL_AMDGPU_SCHED" },
};

/* RM control commands seen on every CUDA start (ctrl0000*.h, ctrl0080*.h, ...) */
static const struct name_ent nv_ctrl_names[] = {
	{ 0x00000201, "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS" },
	{ 0x00000205, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2" },
	{ 0x00000d01, "NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE" },
	{ 0x00000d04, "NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY" },
	{ 0x00003d06, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD" },
	{ 0x00800201, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST" },
	{ 0x20800102, "NV2080_CTRL_CMD_GPU_GET_INFO_V2" },
	{ 0x2080110b, "NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS" },
	{ 0xa06c0103, "NVA06C_CTRL_CMD_SET_TIMESLICE" },
	{ 0xa06c0105, "NVA06C_CTRL_CMD_PREEMPT" },
};

static const struct name_ent nv_class_names[] = {
	{ 0x0000, "NV01_ROOT" }, { 0x0041, "NV01_ROOT_CLIENT" }, { 0x003e, "NV01_MEMORY_SYSTEM" },
	{ 0x0040, "NV01_MEMORY_LOCAL_USER" }, { 0x0070, "NV01_MEMORY_VIRTUAL" },
	{ 0x0071, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR" }, { 0x0080, "NV01_DEVICE_0" },
	{ 0x2080, "NV20_SUBDEVICE_0" }, { 0x50a0, "NV50_MEMORY_VIRTUAL" },
	{ 0x90f1, "FERMI_VASPACE_A" }, { 0xa06c, "KEPLER_CHANNEL_GROUP_A" },
	{ 0xc56f, "AMPERE_CHANNEL_GPFIFO_A" }, { 0xc86f, "HOPPER_CHANNEL_GPFIFO_A" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *find(const struct name_ent *t, size_t n, uint32_t key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].key == key)
			return t[i].name;
	return NULL;
}

const char *ioctl_cmd_name(unsigned kind, uint32_t cmd, bool amdgpu)
{
	switch (kind) {
	case GB_IODEV_NVIDIA:
		return _IOC_TYPE(cmd) == NV_MAGIC ? find(nv_names, N(nv_names), _IOC_NR(cmd)) : NULL;
	case GB_IODEV_UVM:
		return find(uvm_names, N(uvm_names), cmd);
	case GB_IODEV_KFD:
		return _IOC_TYPE(cmd) == GB_KFD_MAGIC ? find(kfd_names, N(kfd_names), _IOC_NR(cmd)) : NULL;
	case GB_IODEV_DRM:
		if (_IOC_TYPE(cmd) != 'd')
			return NULL;
		if (_IOC_NR(cmd) >= 0x40 && _IOC_NR(cmd) < 0xa0)
			return amdgpu ? find(amdgpu_names, N(amdgpu_names), _IOC_NR(cmd)) : NULL;
		return find(drm_names, N(drm_names), _IOC_NR(cmd));
	default:
		return NULL;
	}
}

const char *ioctl_nv_ctrl_name(uint32_t ctrl)
{
	return find(nv_ctrl_names, N(nv_ctrl_names), ctrl);
}

const char *ioctl_nv_class_name(uint32_t cls)
{
	return find(nv_class_names, N(nv_class_names), cls);
}

/* --- layouts --- */

#define F(n, o, l, s, h) { n, o, l, s, h }
#define KOFF(st, m) offsetof(struct gb_kfd_##st, m)
#define KSZ(st, m) sizeof(((struct gb_kfd_##st *)0)->m)
#define KF(st, m, s, h) F(#m, KOFF(st, m), KSZ(st, m), s, h)

static const struct ioctl_layout_desc descs[] = {
	/* NVOS21_PARAMETERS: hRoot, hObjectParent, hObjectNew, hClass, pAllocParms, paramsSize, status */
	{ IOCTL_DEC_NV_ALLOC21, GB_IODEV_NVIDIA, NV_IOWR(0x2b, 32), 32, {
		F("hRoot", 0, 4, IOS_AUX1_LO, true), F("hObjectParent", 4, 4, IOS_AUX0_HI, true),
		F("hObjectNew", 8, 4, IOS_AUX0_LO, true), F("hClass", 12, 4, IOS_ARG_LO, true),
		F("paramsSize", 24, 4, IOS_ARG_HI, false), F("status", 28, 4, IOS_AUX1_HI, true) } },
	/* NVOS64_PARAMETERS: ... pRightsRequested@24, paramsSize@32, flags@36, status@40 */
	{ IOCTL_DEC_NV_ALLOC64, GB_IODEV_NVIDIA, NV_IOWR(0x2b, 48), 48, {
		F("hRoot", 0, 4, IOS_AUX1_LO, true), F("hObjectParent", 4, 4, IOS_AUX0_HI, true),
		F("hObjectNew", 8, 4, IOS_AUX0_LO, true), F("hClass", 12, 4, IOS_ARG_LO, true),
		F("paramsSize", 32, 4, IOS_ARG_HI, false), F("status", 40, 4, IOS_AUX1_HI, true) } },
	/* NVOS54_PARAMETERS: hClient, hObject, cmd, flags, params, paramsSize, status */
	{ IOCTL_DEC_NV_CONTROL, GB_IODEV_NVIDIA, NV_IOWR(0x2a, 32), 32, {
		F("hClient", 0, 4, IOS_AUX0_HI, true), F("hObject", 4, 4, IOS_AUX0_LO, true),
		F("cmd", 8, 4, IOS_ARG_LO, true), F("flags", 12, 4, IOS_ARG_HI, true),
		F("paramsSize", 24, 4, IOS_AUX1_LO, false), F("status", 28, 4, IOS_AUX1_HI, true) } },
	/* NVOS00_PARAMETERS: hRoot, hObjectParent, hObjectOld, status */
	{ IOCTL_DEC_NV_FREE, GB_IODEV_NVIDIA, NV_IOWR(0x29, 16), 16, {
		F("hRoot", 0, 4, IOS_AUX1_LO, true), F("hObjectParent", 4, 4, IOS_AUX0_HI, true),
		F("hObjectOld", 8, 4, IOS_AUX0_LO, true), F("status", 12, 4, IOS_AUX1_HI, true) } },
	/* nv_ioctl_nvos33_parameters_with_fd: NVOS33 (hClient, hDevice, hMemory, offset,
	 * length, pLinearAddress, status, flags) + fd */
	{ IOCTL_DEC_NV_MAP_MEMORY, GB_IODEV_NVIDIA, NV_IOWR(0x4e, 56), 56, {
		F("hClient", 0, 4, IOS_AUX0_HI, true), F("hDevice", 4, 4, IOS_AUX0_LO, true),
		F("hMemory", 8, 4, IOS_ARG_LO, true), F("offset", 16, 8, IOS_AUX1, true),
		F("length", 24, 8, IOS_BYTES, false), F("status", 40, 4, IOS_ARG_HI, true) } },
	/* nv_ioctl_xfer_t: the real cmd, its size and a pointer to its struct */
	{ IOCTL_DEC_NV_XFER, GB_IODEV_NVIDIA, NV_IOWR(211, 16), 16, {
		F("xfer_cmd", 0, 4, IOS_ARG_LO, true), F("xfer_size", 4, 4, IOS_ARG_HI, false),
		F("xfer_ptr", 8, 8, IOS_PTR, true) } },
	/* UVM_FREE_PARAMS: base, length, rmStatus */
	{ IOCTL_DEC_UVM_FREE, GB_IODEV_UVM, 34, 24, {
		F("base", 0, 8, IOS_PTR, true), F("length", 8, 8, IOS_BYTES, false),
		F("rmStatus", 16, 4, IOS_ARG_LO, true) } },
	/* UVM_MIGRATE_PARAMS: base, length, destinationUuid[16], flags */
	{ IOCTL_DEC_UVM_MIGRATE, GB_IODEV_UVM, 51, 80, {
		F("base", 0, 8, IOS_PTR, true), F("length", 8, 8, IOS_BYTES, false),
		F("flags", 32, 4, IOS_ARG_LO, true), F("rmStatus", 72, 4, IOS_ARG_HI, true) } },
	/* UVM_MAP_EXTERNAL_ALLOCATION_PARAMS: base, length, offset, ... */
	{ IOCTL_DEC_UVM_MAP_EXTERNAL, GB_IODEV_UVM, 33, 24, {
		F("base", 0, 8, IOS_PTR, true), F("length", 8, 8, IOS_BYTES, false),
		F("offset", 16, 8, IOS_AUX1, true) } },
	{ IOCTL_DEC_KFD_ALLOC, GB_IODEV_KFD, GB_KFD_IOC_ALLOC_MEMORY_OF_GPU,
	  sizeof(struct gb_kfd_alloc_memory_of_gpu), {
		KF(alloc_memory_of_gpu, va_addr, IOS_PTR, true),
		KF(alloc_memory_of_gpu, size, IOS_BYTES, false),
		KF(alloc_memory_of_gpu, handle, IOS_AUX0, true),
		KF(alloc_memory_of_gpu, gpu_id, IOS_DEVICE, false),
		KF(alloc_memory_of_gpu, flags, IOS_ARG_LO, true) } },
	{ IOCTL_DEC_KFD_FREE, GB_IODEV_KFD, GB_KFD_IOC_FREE_MEMORY_OF_GPU,
	  sizeof(struct gb_kfd_free_memory_of_gpu), {
		KF(free_memory_of_gpu, handle, IOS_AUX0, true) } },
	{ IOCTL_DEC_KFD_MAP, GB_IODEV_KFD, GB_KFD_IOC_MAP_MEMORY_TO_GPU,
	  sizeof(struct gb_kfd_map_memory_to_gpu), {
		KF(map_memory_to_gpu, handle, IOS_AUX0, true),
		KF(map_memory_to_gpu, device_ids_array_ptr, IOS_PTR, true),
		KF(map_memory_to_gpu, n_devices, IOS_ARG_LO, false),
		KF(map_memory_to_gpu, n_success, IOS_ARG_HI, false) } },
	{ IOCTL_DEC_KFD_UNMAP, GB_IODEV_KFD, GB_KFD_IOC_UNMAP_MEMORY_FROM_GPU,
	  sizeof(struct gb_kfd_map_memory_to_gpu), {
		KF(map_memory_to_gpu, handle, IOS_AUX0, true),
		KF(map_memory_to_gpu, device_ids_array_ptr, IOS_PTR, true),
		KF(map_memory_to_gpu, n_devices, IOS_ARG_LO, false),
		KF(map_memory_to_gpu, n_success, IOS_ARG_HI, false) } },
	{ IOCTL_DEC_KFD_CREATE_QUEUE, GB_IODEV_KFD, GB_KFD_IOC_CREATE_QUEUE,
	  sizeof(struct gb_kfd_create_queue), {
		KF(create_queue, ring_base_address, IOS_PTR, true),
		KF(create_queue, ring_size, IOS_BYTES, false),
		KF(create_queue, gpu_id, IOS_DEVICE, false),
		KF(create_queue, queue_type, IOS_ARG_LO, false),
		KF(create_queue, queue_priority, IOS_ARG_HI, false),
		KF(create_queue, queue_id, IOS_AUX0, false) } },
};

const struct ioctl_layout_desc *ioctl_layout_descs(unsigned *n)
{
	*n = N(descs);
	return descs;
}

const struct ioctl_layout_desc *ioctl_layout_by_decoder(unsigned id)
{
	size_t i;

	for (i = 0; i < N(descs); i++)
		if (descs[i].decoder == id)
			return &descs[i];
	return NULL;
}

static uint64_t *slot_word(struct gb_event *ev, unsigned slot)
{
	switch (slot) {
	case IOS_ARG: case IOS_ARG_LO: case IOS_ARG_HI: return &ev->arg;
	case IOS_AUX0: case IOS_AUX0_LO: case IOS_AUX0_HI: return &ev->aux[0];
	case IOS_AUX1: case IOS_AUX1_LO: case IOS_AUX1_HI: return &ev->aux[1];
	case IOS_BYTES: return &ev->bytes;
	case IOS_PTR: return &ev->ptr;
	default: return NULL;
	}
}

static unsigned slot_shift(unsigned slot)
{
	return slot == IOS_ARG_HI || slot == IOS_AUX0_HI || slot == IOS_AUX1_HI ? 32 : 0;
}

static bool slot_half(unsigned slot)
{
	return slot == IOS_ARG_LO || slot == IOS_ARG_HI || slot == IOS_AUX0_LO ||
	       slot == IOS_AUX0_HI || slot == IOS_AUX1_LO || slot == IOS_AUX1_HI;
}

void ioctl_pack_fields(const struct ioctl_layout_desc *l, const __u64 *w, struct gb_event *ev)
{
	unsigned i;

	for (i = 0; i < GB_IOCTL_NF; i++) {
		const struct ioctl_field *f = &l->f[i];
		uint64_t *dst;

		if (!f->name)
			continue;
		if (f->slot == IOS_DEVICE) {
			ev->device = (uint32_t)w[i];
			continue;
		}
		dst = slot_word(ev, f->slot);
		if (!dst)
			continue;
		if (slot_half(f->slot))
			*dst |= (w[i] & 0xffffffffull) << slot_shift(f->slot);
		else
			*dst = w[i];
		if (f->slot == IOS_BYTES)
			ev->flags |= GB_EF_BYTES;
		else if (f->slot == IOS_PTR)
			ev->flags |= GB_EF_PTR;
	}
	ev->flags |= GB_EF_ARG;
}

uint64_t ioctl_field_value(const struct ioctl_field *f, const struct gb_event *ev)
{
	uint64_t *w;

	if (f->slot == IOS_DEVICE)
		return ev->device;
	w = slot_word((struct gb_event *)ev, f->slot);
	if (!w)
		return 0;
	if (slot_half(f->slot))
		return (*w >> slot_shift(f->slot)) & 0xffffffffull;
	return *w;
}

static const char *dir_name(uint32_t cmd)
{
	static const char *const d[] = { "none", "w", "r", "rw" };

	return d[_IOC_DIR(cmd) & 3];
}

/* the name of a field's value: an RM control command or a class, or NULL */
static const char *field_extra(const struct gb_event *ev, const char *name, uint64_t v)
{
	if (ev->src == IOCTL_DEC_NV_CONTROL && !strcmp(name, "cmd"))
		return ioctl_nv_ctrl_name((uint32_t)v);
	if (!strcmp(name, "hClass"))
		return ioctl_nv_class_name((uint32_t)v);
	return NULL;
}

/* the process's live device memory after a KFD alloc or free: best-effort */
static bool has_devmem(const struct gb_event *ev)
{
	return ev->src == IOCTL_DEC_KFD_ALLOC || ev->src == IOCTL_DEC_KFD_FREE;
}

void ioctl_event_text(struct gb_buf *b, const struct gb_event *ev)
{
	const struct ioctl_layout_desc *l = ev->src ? ioctl_layout_by_decoder((unsigned)ev->src) : NULL;
	uint32_t cmd = (uint32_t)ev->handle;
	unsigned i;

	gb_buf_printf(b, " cmd=0x%08" PRIx32 "(%s,'%c',%u,%u)", cmd, dir_name(cmd),
		      _IOC_TYPE(cmd) >= 0x20 && _IOC_TYPE(cmd) < 0x7f ? _IOC_TYPE(cmd) : '?',
		      _IOC_NR(cmd), _IOC_SIZE(cmd));
	if (!l) {
		gb_buf_puts(b, " (not decoded)");
		return;
	}
	for (i = 0; i < GB_IOCTL_NF; i++) {
		const struct ioctl_field *f = &l->f[i];
		const char *s;
		uint64_t v;

		if (!f->name)
			continue;
		v = ioctl_field_value(f, ev);
		if (f->hex)
			gb_buf_printf(b, " %s=0x%" PRIx64, f->name, v);
		else
			gb_buf_printf(b, " %s=%" PRIu64, f->name, v);
		if ((s = field_extra(ev, f->name, v)))
			gb_buf_printf(b, "(%s)", s);
	}
	if (has_devmem(ev))
		gb_buf_printf(b, " devmem_live=%" PRIu64 "(best-effort)", ev->aux[1]);
}

void ioctl_event_json(struct gb_json *j, const struct gb_event *ev)
{
	const struct ioctl_layout_desc *l = ev->src ? ioctl_layout_by_decoder((unsigned)ev->src) : NULL;
	uint32_t cmd = (uint32_t)ev->handle;
	char extra[64];
	unsigned i;

	gb_json_uint_field(j, "cmd", cmd);
	gb_json_name(j, "ioc");
	gb_json_start_object(j);
	gb_json_string_field(j, "dir", dir_name(cmd));
	gb_json_uint_field(j, "type", _IOC_TYPE(cmd));
	gb_json_uint_field(j, "nr", _IOC_NR(cmd));
	gb_json_uint_field(j, "size", _IOC_SIZE(cmd));
	gb_json_end_object(j);
	gb_json_bool_field(j, "decoded", l);
	if (!l)
		return;
	gb_json_name(j, "fields");
	gb_json_start_object(j);
	for (i = 0; i < GB_IOCTL_NF; i++)
		if (l->f[i].name)
			gb_json_uint_field(j, l->f[i].name, ioctl_field_value(&l->f[i], ev));
	gb_json_end_object(j);
	for (i = 0; i < GB_IOCTL_NF; i++) {
		const char *s;

		if (!l->f[i].name || !(s = field_extra(ev, l->f[i].name, ioctl_field_value(&l->f[i], ev))))
			continue;
		snprintf(extra, sizeof(extra), "%s_name", l->f[i].name);
		gb_json_string_field(j, extra, s);
	}
	if (has_devmem(ev)) {
		gb_json_uint_field(j, "devmem_live", ev->aux[1]);
		gb_json_bool_field(j, "devmem_best_effort", true);
	}
}
