// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device-node patterns and ioctl tables. Command values and argument layouts
 * are x86-64, from shared/reference/pjrt-and-probe-points.md: gasket (4.1),
 * VFIO (5), Edge TPU apex (6), the mainline accel subsystem (7), NVIDIA (8.2).
 */
#include <string.h>

#include "discover/device_nodes.h"
#include "lib/lazy_regex.h"

#define EXACT 0xffffffffu
#define TYPE_NR 0x0000ffffu	/* DRM and NVIDIA: the size bits vary */

#define F(n_, off_, sz_, role_) \
	{ .name = (n_), .offset = (off_), .size = (sz_), .role = (role_) }

/* ---- gasket (TPU v2-v4, /dev/accelN): GASKET_IOCTL_BASE 0xDC ----------- */

#define GASKET_PAGE_TABLE_FIELDS \
	F("page_table_index", 0, 8, ROLE_NONE), F("size", 8, 8, ROLE_SIZE), \
	F("host_address", 16, 8, ROLE_HOST_ADDR), \
	F("device_address", 24, 8, ROLE_DEVICE_ADDR)

static const struct ioctl_decoder gasket_ioctls[] = {
	{ 0x4008dc00, EXACT, "GASKET_IOCTL_RESET", IOCTL_SETUP,
	  { F("reset_type", 0, 8, ROLE_NONE) } },
	{ 0x4010dc01, EXACT, "GASKET_IOCTL_SET_EVENTFD", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT), F("event_fd", 8, 8, ROLE_EVENTFD) } },
	{ 0x4008dc02, EXACT, "GASKET_IOCTL_CLEAR_EVENTFD", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT) } },
	{ 0x8008dc04, EXACT, "GASKET_IOCTL_NUMBER_PAGE_TABLES", IOCTL_SETUP, {} },
	{ 0xc020dc05, EXACT, "GASKET_IOCTL_PAGE_TABLE_SIZE", IOCTL_SETUP, {} },
	{ 0xc020dc06, EXACT, "GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE", IOCTL_SETUP, {} },
	{ 0x4020dc07, EXACT, "GASKET_IOCTL_PARTITION_PAGE_TABLE", IOCTL_SETUP, {} },
	{ 0x4020dc08, EXACT, "GASKET_IOCTL_MAP_BUFFER", IOCTL_DMA_MAP,
	  { GASKET_PAGE_TABLE_FIELDS } },
	{ 0x4020dc09, EXACT, "GASKET_IOCTL_UNMAP_BUFFER", IOCTL_DMA_UNMAP,
	  { GASKET_PAGE_TABLE_FIELDS } },
	{ 0x0000dc0a, EXACT, "GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS", IOCTL_INTERRUPT, {} },
	{ 0x4020dc0b, EXACT, "GASKET_IOCTL_REGISTER_INTERRUPT", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT), F("event_fd", 8, 8, ROLE_EVENTFD),
	    F("bar_index", 16, 8, ROLE_NONE), F("reg_offset", 24, 8, ROLE_NONE) } },
	{ 0x4008dc0c, EXACT, "GASKET_IOCTL_UNREGISTER_INTERRUPT", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT) } },
	{ 0x4018dc0d, EXACT, "GASKET_IOCTL_MAP_DMA_BUF", IOCTL_DMA_MAP,
	  { F("page_table_index", 0, 8, ROLE_NONE),
	    F("device_address", 8, 8, ROLE_DEVICE_ADDR), F("dma_buf_fd", 16, 4, ROLE_NONE) } },
};

/* ---- Edge TPU apex (gasket-driver): numbering differs from 11 on ------- */

static const struct ioctl_decoder apex_ioctls[] = {
	{ 0x0000dc00, EXACT, "GASKET_IOCTL_RESET", IOCTL_SETUP, {} },
	{ 0x4010dc01, EXACT, "GASKET_IOCTL_SET_EVENTFD", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT), F("event_fd", 8, 8, ROLE_EVENTFD) } },
	{ 0x4008dc02, EXACT, "GASKET_IOCTL_CLEAR_EVENTFD", IOCTL_INTERRUPT,
	  { F("interrupt", 0, 8, ROLE_INTERRUPT) } },
	{ 0x4008dc03, EXACT, "GASKET_IOCTL_LOOPBACK_INTERRUPT", IOCTL_INTERRUPT, {} },
	{ 0x4020dc08, EXACT, "GASKET_IOCTL_MAP_BUFFER", IOCTL_DMA_MAP,
	  { GASKET_PAGE_TABLE_FIELDS } },
	{ 0x4020dc09, EXACT, "GASKET_IOCTL_UNMAP_BUFFER", IOCTL_DMA_UNMAP,
	  { GASKET_PAGE_TABLE_FIELDS } },
	{ 0xc020dc0b, EXACT, "GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR", IOCTL_MEMORY, {} },
	{ 0x4028dc0c, EXACT, "GASKET_IOCTL_MAP_BUFFER_FLAGS", IOCTL_DMA_MAP,
	  { GASKET_PAGE_TABLE_FIELDS } },
	{ 0x4020dc0d, EXACT, "GASKET_IOCTL_MAP_DMABUF", IOCTL_DMA_MAP, {} },
	{ 0x40107f00, EXACT, "APEX_IOCTL_GATE_CLOCK", IOCTL_SETUP, {} },
	{ 0x40047f01, EXACT, "APEX_IOCTL_PERFORMANCE_EXPECTATION", IOCTL_SETUP, {} },
};

/* ---- VFIO (TPU v5e/v5p/v6e/7x): type ';', VFIO_BASE 100, no size bits --- */

static const struct ioctl_decoder vfio_ioctls[] = {
	{ 0x3b64, EXACT, "VFIO_GET_API_VERSION", IOCTL_SETUP, {} },
	{ 0x3b65, EXACT, "VFIO_CHECK_EXTENSION", IOCTL_SETUP, {} },
	{ 0x3b66, EXACT, "VFIO_SET_IOMMU", IOCTL_SETUP, {} },
	{ 0x3b68, EXACT, "VFIO_GROUP_SET_CONTAINER", IOCTL_SETUP, {} },
	{ 0x3b6a, EXACT, "VFIO_GROUP_GET_DEVICE_FD", IOCTL_SETUP, {} },
	{ 0x3b6b, EXACT, "VFIO_DEVICE_GET_INFO", IOCTL_SETUP, {} },
	{ 0x3b6c, EXACT, "VFIO_DEVICE_GET_REGION_INFO", IOCTL_SETUP, {} },
	{ 0x3b6d, EXACT, "VFIO_DEVICE_GET_IRQ_INFO", IOCTL_SETUP, {} },
	/* struct vfio_irq_set {argsz, flags, index, start, count, data[]}:
	 * with DATA_EVENTFD, data holds one eventfd per vector. */
	{ 0x3b6e, EXACT, "VFIO_DEVICE_SET_IRQS", IOCTL_INTERRUPT,
	  { F("index", 8, 4, ROLE_INTERRUPT), F("start", 12, 4, ROLE_NONE),
	    F("count", 16, 4, ROLE_NONE), F("eventfd", 20, 4, ROLE_EVENTFD) } },
	{ 0x3b6f, EXACT, "VFIO_DEVICE_RESET", IOCTL_SETUP, {} },
	{ 0x3b71, EXACT, "VFIO_IOMMU_MAP_DMA", IOCTL_DMA_MAP,
	  { F("flags", 4, 4, ROLE_NONE), F("vaddr", 8, 8, ROLE_HOST_ADDR),
	    F("iova", 16, 8, ROLE_DEVICE_ADDR), F("size", 24, 8, ROLE_SIZE) } },
	{ 0x3b72, EXACT, "VFIO_IOMMU_UNMAP_DMA", IOCTL_DMA_UNMAP,
	  { F("iova", 16, 8, ROLE_DEVICE_ADDR), F("size", 24, 8, ROLE_SIZE) } },
};

/* ---- mainline accel, Intel NPU (ivpu): DRM type 'd', match type + nr ---- */

static const struct ioctl_decoder ivpu_ioctls[] = {
	{ 0x6445, TYPE_NR, "DRM_IOCTL_IVPU_SUBMIT", IOCTL_SUBMIT,
	  { F("buffers_ptr", 0, 8, ROLE_HOST_ADDR), F("buffer_count", 8, 4, ROLE_COUNT),
	    F("engine", 12, 4, ROLE_NONE), F("flags", 16, 4, ROLE_NONE),
	    F("commands_offset", 20, 4, ROLE_NONE), F("priority", 24, 4, ROLE_NONE) } },
	{ 0x6446, TYPE_NR, "DRM_IOCTL_IVPU_BO_WAIT", IOCTL_WAIT,
	  { F("handle", 0, 4, ROLE_NONE), F("flags", 4, 4, ROLE_NONE),
	    F("timeout_ns", 8, 8, ROLE_NONE), F("job_status", 16, 4, ROLE_NONE) } },
	{ 0x644d, TYPE_NR, "DRM_IOCTL_IVPU_CMDQ_SUBMIT", IOCTL_SUBMIT,
	  { F("buffers_ptr", 0, 8, ROLE_HOST_ADDR), F("buffer_count", 8, 4, ROLE_COUNT),
	    F("cmdq_id", 12, 4, ROLE_NONE) } },
	/* DRM core: a syncobj signals an eventfd (Linux 6.6+). */
	{ 0x64cf, TYPE_NR, "DRM_IOCTL_SYNCOBJ_EVENTFD", IOCTL_INTERRUPT,
	  { F("handle", 0, 4, ROLE_NONE), F("flags", 4, 4, ROLE_NONE),
	    F("point", 8, 8, ROLE_NONE), F("fd", 16, 4, ROLE_EVENTFD) } },
};

/* ---- NVIDIA: 'F' + nr; resource-manager escapes, no per-launch submit --- */

static const struct ioctl_decoder nvidia_ioctls[] = {
	{ 0x46c8, TYPE_NR, "NV_ESC_CARD_INFO", IOCTL_SETUP, {} },
	{ 0x46c9, TYPE_NR, "NV_ESC_REGISTER_FD", IOCTL_SETUP, {} },
	{ 0x46ce, TYPE_NR, "NV_ESC_ALLOC_OS_EVENT", IOCTL_INTERRUPT, {} },
	{ 0x46cf, TYPE_NR, "NV_ESC_FREE_OS_EVENT", IOCTL_INTERRUPT, {} },
	{ 0x4627, TYPE_NR, "NV_ESC_RM_ALLOC_MEMORY", IOCTL_MEMORY, {} },
	{ 0x4628, TYPE_NR, "NV_ESC_RM_ALLOC_OBJECT", IOCTL_MEMORY, {} },
	{ 0x4629, TYPE_NR, "NV_ESC_RM_FREE", IOCTL_MEMORY, {} },
	{ 0x462a, TYPE_NR, "NV_ESC_RM_CONTROL", IOCTL_OTHER, {} },
	{ 0x462b, TYPE_NR, "NV_ESC_RM_ALLOC", IOCTL_MEMORY, {} },
	{ 0x464e, TYPE_NR, "NV_ESC_RM_MAP_MEMORY", IOCTL_DMA_MAP, {} },
	{ 0x464f, TYPE_NR, "NV_ESC_RM_UNMAP_MEMORY", IOCTL_DMA_UNMAP, {} },
	{ 0x4652, TYPE_NR, "NV_ESC_RM_GET_EVENT_DATA", IOCTL_WAIT, {} },
	{ 0x4657, TYPE_NR, "NV_ESC_RM_MAP_MEMORY_DMA", IOCTL_DMA_MAP, {} },
	{ 0x4658, TYPE_NR, "NV_ESC_RM_UNMAP_MEMORY_DMA", IOCTL_DMA_UNMAP, {} },
	{ 0x30000001, EXACT, "UVM_INITIALIZE", IOCTL_SETUP, {} },
	{ 0x30000002, EXACT, "UVM_DEINITIALIZE", IOCTL_SETUP, {} },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct driver_family gasket = {
	"gasket", "Google gasket/accel driver (TPU v2-v4)", gasket_ioctls, N(gasket_ioctls),
};
static const struct driver_family apex = {
	"apex", "Edge TPU gasket/apex driver", apex_ioctls, N(apex_ioctls),
};
static const struct driver_family vfio = {
	"vfio", "VFIO (TPU v5e/v5p/v6e/7x)", vfio_ioctls, N(vfio_ioctls),
};
static const struct driver_family ivpu = {
	"drm-accel/ivpu", "mainline accel subsystem, Intel NPU", ivpu_ioctls, N(ivpu_ioctls),
};
static const struct driver_family nvidia = {
	"nvidia", "NVIDIA driver", nvidia_ioctls, N(nvidia_ioctls),
};

static const struct device_node_pattern patterns[] = {
	{ "^/dev/accel[0-9]+$", "/dev/accel", &gasket, "TPU v2-v4 (gasket)" },
	{ "^/dev/vfio/([0-9]+|vfio)$", "/dev/vfio/", &vfio, "TPU v5+ (VFIO)" },
	{ "^/dev/accel/accel[0-9]+$", "/dev/accel", &ivpu, "accel subsystem" },
	{ "^/dev/apex_[0-9]+$", "/dev/apex_", &apex, "Edge TPU" },
	{ "^/dev/nvidia([0-9]+|ctl|-uvm|-uvm-tools|-modeset)$", "/dev/nvidia", &nvidia,
	  "NVIDIA GPU" },
	/*
	 * The simulated TPU stack (tests/sim) creates its nodes here, in the
	 * gasket and the mainline-accel styles: matched like /dev/accelN.
	 */
	{ "^/run/acceltrace-sim/[^/]+/accel[0-9]+$", "/run/acceltrace-sim/", &gasket,
	  "simulated TPU (gasket style)" },
	{ "^/run/acceltrace-sim/[^/]+/accel/accel[0-9]+$", "/run/acceltrace-sim/", &ivpu,
	  "simulated TPU (accel style)" },
};

size_t device_node_pattern_count(void)
{
	return N(patterns);
}

const struct device_node_pattern *device_node_pattern(size_t i)
{
	return i < N(patterns) ? &patterns[i] : NULL;
}

const struct device_node_pattern *device_node_match(const char *path)
{
	static struct lazy_regex path_res[N(patterns)];

	for (size_t i = 0; i < N(patterns); i++)
		if (lazy_regex__match(&path_res[i], patterns[i].regex, path))
			return &patterns[i];
	return NULL;
}

size_t device_node_prefixes(const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < N(patterns); i++) {
		bool seen = false;

		for (size_t j = 0; j < n; j++)
			if (!strcmp(out[j], patterns[i].kernel_prefix))
				seen = true;
		if (!seen && n < max)
			out[n++] = patterns[i].kernel_prefix;
	}
	return n;
}

const struct ioctl_decoder *ioctl_decode(const struct driver_family *family,
					 uint32_t cmd)
{
	if (!family)
		return NULL;
	for (size_t i = 0; i < family->n_ioctls; i++) {
		const struct ioctl_decoder *d = &family->ioctls[i];

		if ((cmd & d->mask) == (d->cmd & d->mask))
			return d;
	}
	return NULL;
}

bool ioctl_field_value(const struct ioctl_field *f, const uint8_t *buf,
		       size_t len, uint64_t *value)
{
	uint64_t v = 0;

	if (!f->name || f->offset + f->size > len)
		return false;
	/* Little-endian, like the machines acceltrace decodes for. */
	for (int i = f->size - 1; i >= 0; i--)
		v = (v << 8) | buf[f->offset + i];
	*value = v;
	return true;
}

const char *ioctl_kind_name(enum ioctl_kind kind)
{
	switch (kind) {
	case IOCTL_SETUP: return "setup";
	case IOCTL_DMA_MAP: return "dma-map";
	case IOCTL_DMA_UNMAP: return "dma-unmap";
	case IOCTL_SUBMIT: return "submit";
	case IOCTL_WAIT: return "wait";
	case IOCTL_INTERRUPT: return "interrupt";
	case IOCTL_MEMORY: return "memory";
	default: return "other";
	}
}

bool device_irq_name_match(const char *name)
{
	/* gasket: "tpu_common<dev>-<irq>"; vfio-pci: "vfio-msix[<n>](<bdf>)";
	 * Edge TPU: "apex"; NVIDIA: "nvidia". */
	static const char *const res[] = {
		"^tpu_common[0-9]+-[0-9]+$",
		"^vfio-msi(x)?\\[[0-9]+\\]\\(.*\\)$",
		"^apex$",
		"^nvidia$",
	};

	static struct lazy_regex name_res[N(res)];

	for (size_t i = 0; i < N(res); i++)
		if (lazy_regex__match(&name_res[i], res[i], name))
			return true;
	return false;
}
