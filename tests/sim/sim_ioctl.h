/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The driver ioctls the simulated runtime issues on its device node, with
 * the command numbers and argument structs of the real drivers: gasket as
 * used by TPU v2-v4 (reference section 4.1) and the mainline DRM accel
 * drivers (section 7.2). The static asserts pin the derived values.
 */
#ifndef ACCELTRACE_SIM_IOCTL_H
#define ACCELTRACE_SIM_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* gasket (tensorflow/tpu tools/driver/include/linux/google/gasket.h) */
#define GASKET_IOCTL_BASE 0xDC

struct gasket_interrupt_mapping {
	__u64 interrupt;
	__u64 event_fd;
	__u64 bar_index;
	__u64 reg_offset;
};

struct gasket_page_table_ioctl {
	__u64 page_table_index;
	__u64 size;
	__u64 host_address;
	__u64 device_address;
};

#define GASKET_IOCTL_RESET		_IOW(GASKET_IOCTL_BASE, 0, unsigned long)
#define GASKET_IOCTL_MAP_BUFFER		_IOW(GASKET_IOCTL_BASE, 8, struct gasket_page_table_ioctl)
#define GASKET_IOCTL_UNMAP_BUFFER	_IOW(GASKET_IOCTL_BASE, 9, struct gasket_page_table_ioctl)
#define GASKET_IOCTL_REGISTER_INTERRUPT	_IOW(GASKET_IOCTL_BASE, 11, struct gasket_interrupt_mapping)
#define GASKET_IOCTL_UNREGISTER_INTERRUPT _IOW(GASKET_IOCTL_BASE, 12, unsigned long)

/* DRM accel: ivpu submit (include/uapi/drm/ivpu_accel.h), syncobj eventfd
 * (include/uapi/drm/drm.h) */
#define SIM_SUBMIT_MAX_BUFFERS 64

#define DRM_IOCTL_BASE 'd'
#define DRM_COMMAND_BASE 0x40

struct drm_ivpu_submit {
	__u64 buffers_ptr;
	__u32 buffer_count;
	__u32 engine;
	__u32 flags;
	__u32 commands_offset;
	__u32 priority;
	__u32 pad;		/* the kernel struct is 32 bytes */
};

struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

#define DRM_IOCTL_IVPU_SUBMIT \
	_IOW(DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x05, struct drm_ivpu_submit)
#define DRM_IOCTL_SYNCOBJ_EVENTFD \
	_IOWR(DRM_IOCTL_BASE, 0xCF, struct drm_syncobj_eventfd)

_Static_assert(GASKET_IOCTL_RESET == 0x4008dc00, "RESET");
_Static_assert(GASKET_IOCTL_MAP_BUFFER == 0x4020dc08, "MAP_BUFFER");
_Static_assert(GASKET_IOCTL_UNMAP_BUFFER == 0x4020dc09, "UNMAP_BUFFER");
_Static_assert(GASKET_IOCTL_REGISTER_INTERRUPT == 0x4020dc0b, "REGISTER_INTERRUPT");
_Static_assert(GASKET_IOCTL_UNREGISTER_INTERRUPT == 0x4008dc0c, "UNREGISTER_INTERRUPT");
_Static_assert(DRM_IOCTL_IVPU_SUBMIT == 0x40206445, "IVPU_SUBMIT");
_Static_assert(DRM_IOCTL_SYNCOBJ_EVENTFD == 0xc01864cf, "SYNCOBJ_EVENTFD");

#endif /* ACCELTRACE_SIM_IOCTL_H */
