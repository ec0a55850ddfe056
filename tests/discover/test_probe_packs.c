// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe packs and device-node tables are data; these checks keep the data
 * honest: every fetch program is well-formed, value indexes the collector
 * reads are where the packs put them, library and device-node names match the
 * right entries, and ioctls decode to the right fields.
 */
#include "test.h"
#include "../sim/pjrt_abi.h"
#include "discover/device_nodes.h"
#include "discover/probe_packs.h"

static const struct rt_pack_entry *entry_for(const struct rt_pack *p,
					     enum rt_event_kind kind)
{
	for (size_t i = 0; p && i < p->n_entries; i++)
		if (p->entries[i].event == kind)
			return &p->entries[i];
	return NULL;
}

static void check_packs(void)
{
	char why[256];

	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *p = rt_pack_get(i);

		for (size_t j = 0; j < p->n_entries; j++) {
			why[0] = '\0';
			ASSERT_OK(rt_pack_entry__validate(&p->entries[j], why, sizeof(why)),
				  why[0] ? why : p->entries[j].name);
		}
	}
	ASSERT_OK(rt_pack_entry__validate(rt_pack_callback_entry(), why, sizeof(why)),
		  "callback entry");

	/* A bad program is refused, with a reason. */
	{
		struct rt_pack_entry bad = { .name = "bad", .n_ops = 2,
			.ops = { { .src = FETCH_VAL + 1, .size = 8, .flags = FETCH_DEREF },
				 { .src = FETCH_ARG0 } } };

		ASSERT_EQ(rt_pack_entry__validate(&bad, why, sizeof(why)), -EINVAL,
			  "forward reference refused");
		ASSERT_STRCONTAINS(why, "not fetched yet", "reason");
		bad.ops[0] = (struct at_fetch_op){ .src = FETCH_RET };
		ASSERT_EQ(rt_pack_entry__validate(&bad, why, sizeof(why)), -EINVAL,
			  "return value at entry refused");
		bad.spec_flags = RT_SPEC_RETURN;
		bad.ops[0] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8,
			.flags = FETCH_DEREF | FETCH_AT_RETURN, .offset = 48 };
		ASSERT_EQ(rt_pack_entry__validate(&bad, why, sizeof(why)), -EINVAL,
			  "argument register at return refused");
		ASSERT_STRCONTAINS(why, "at return", "reason");
	}
}

static void check_library_matching(void)
{
	const struct rt_pack *pjrt = rt_pack_match("/usr/lib/python3/dist-packages/libtpu/libtpu.so");

	ASSERT_TRUE(pjrt && pjrt->pjrt, "libtpu.so is a PJRT plugin");
	ASSERT_TRUE(rt_pack_match("/opt/jax_plugins/xla_cuda_plugin.so") == pjrt, "CUDA PJRT plugin");
	ASSERT_TRUE(rt_pack_match("pjrt_c_api_gpu_plugin.so") == pjrt, "GPU plugin fallback name");
	ASSERT_TRUE(rt_pack_match("/build/sim/pjrt-0.94/libtpu.so") == pjrt, "simulator plugin");
	ASSERT_TRUE(rt_pack_match("/usr/lib/x86_64-linux-gnu/libcuda.so.1") != NULL, "libcuda");
	ASSERT_FALSE(rt_pack_match("/usr/lib/x86_64-linux-gnu/libcuda.so.1")->pjrt, "libcuda is no PJRT plugin");
	ASSERT_TRUE(rt_pack_match("libtensorflow_framework.so.2") != NULL, "tf.data");
	ASSERT_TRUE(rt_pack_match("/lib/x86_64-linux-gnu/libc.so.6") == NULL, "libc matches nothing");
	ASSERT_TRUE(rt_pack_match("/tmp/libtpu.txt") == NULL, "not a shared object");

	/* The PJRT pack probes what the collector correlates. */
	ASSERT_TRUE(entry_for(pjrt, RT_EV_EXECUTE) && entry_for(pjrt, RT_EV_ON_READY) &&
		    entry_for(pjrt, RT_EV_H2D) && entry_for(pjrt, RT_EV_D2H) &&
		    entry_for(pjrt, RT_EV_GET_PJRT_API) && entry_for(pjrt, RT_EV_INFEED_LITERAL) &&
		    entry_for(pjrt, RT_EV_OUTFEED_LITERAL), "PJRT pack entries");
	{
		const struct rt_pack_entry *e = entry_for(pjrt, RT_EV_EXECUTE);

		/* launch_id: *(int *)(options + 48); options at Args + 24. */
		ASSERT_EQ(e->ops[V_EXEC_OPTIONS].offset, 24, "options offset");
		ASSERT_EQ(e->ops[V_EXEC_LAUNCH_ID].src, FETCH_VAL + V_EXEC_OPTIONS, "launch_id via options");
		ASSERT_EQ(e->ops[V_EXEC_LAUNCH_ID].offset, 48, "launch_id offset");
		ASSERT_EQ(e->ops[V_EXEC_LAUNCH_ID].size, 4, "launch_id is an int");
		ASSERT_EQ(e->ops[V_EXEC_EVENTS].offset, 64, "device_complete_events offset");
		ASSERT_TRUE(e->ops[V_EXEC_EVENT0].flags & FETCH_AT_RETURN, "events read at return");
		ASSERT_EQ(e->n_ops, V_EXEC_EVENT0 + EXEC_MAX_EVENTS, "execute op count");
		e = entry_for(pjrt, RT_EV_H2D);
		ASSERT_EQ(e->ops[V_H2D_DONE_EVENT].offset, 104, "done_with_host_buffer offset");
		ASSERT_EQ(e->ops[V_H2D_DONE_EVENT].src, FETCH_VAL + V_H2D_ARGS,
			  "done event read through the Args pointer saved at entry");
		ASSERT_EQ(e->ops[V_H2D_BUFFER].offset, 112, "buffer offset");
		e = entry_for(pjrt, RT_EV_D2H);
		ASSERT_EQ(e->ops[V_D2H_DST_SIZE].offset, 40, "dst_size offset");
		ASSERT_EQ(e->ops[V_D2H_EVENT].src, FETCH_VAL + V_D2H_ARGS, "event via saved Args");
		e = entry_for(pjrt, RT_EV_COMPILE);
		ASSERT_EQ(e->ops[V_COMPILE_EXECUTABLE].offset, 48, "executable offset");
		ASSERT_EQ(e->ops[V_COMPILE_EXECUTABLE].src, FETCH_VAL + V_COMPILE_ARGS,
			  "executable via saved Args");
	}
	ASSERT_EQ(pjrt_buffer_type_size(11), 4, "F32 is 4 bytes");
	ASSERT_EQ(pjrt_buffer_type_size(13), 2, "BF16 is 2 bytes");
	ASSERT_EQ(pjrt_buffer_type_size(999), 0, "unknown type");
}

static void check_device_nodes(void)
{
	const struct device_node_pattern *p;
	const struct ioctl_decoder *d;
	const char *prefixes[16];
	uint8_t arg[32] = {};
	uint64_t v;
	size_t n;

	p = device_node_match("/dev/accel0");
	ASSERT_TRUE(p && !strcmp(p->family->name, "gasket"), "/dev/accel0 is gasket");
	p = device_node_match("/dev/accel/accel3");
	ASSERT_TRUE(p && !strcmp(p->family->name, "drm-accel/ivpu"), "/dev/accel/accel3 is accel");
	ASSERT_TRUE(device_node_match("/dev/vfio/12") != NULL, "vfio group");
	ASSERT_TRUE(device_node_match("/dev/vfio/vfio") != NULL, "vfio container");
	ASSERT_TRUE(device_node_match("/dev/nvidia0") && device_node_match("/dev/nvidiactl") &&
		    device_node_match("/dev/nvidia-uvm"), "nvidia nodes");
	ASSERT_TRUE(device_node_match("/dev/apex_0") != NULL, "apex");
	ASSERT_TRUE(device_node_match("/run/acceltrace-sim/1234/accel0") != NULL, "simulator node");
	ASSERT_TRUE(device_node_match("/dev/accelerometer") == NULL, "not an accel node");
	ASSERT_TRUE(device_node_match("/dev/null") == NULL, "/dev/null");
	ASSERT_TRUE(device_node_match("/run/acceltrace-sim/1/x/accel0") == NULL, "no deeper sim paths");

	n = device_node_prefixes(prefixes, 16);
	ASSERT_EQ(n, 5, "distinct kernel prefixes");
	for (size_t i = 0; i < device_node_pattern_count(); i++) {
		const struct device_node_pattern *q = device_node_pattern(i);

		ASSERT_TRUE(strlen(q->kernel_prefix) <= 32, "prefix fits the BPF slot");
	}

	/* gasket REGISTER_INTERRUPT {interrupt, event_fd, bar_index, reg_offset} */
	p = device_node_match("/dev/accel0");
	d = ioctl_decode(p->family, 0x4020dc0b);
	ASSERT_TRUE(d && !strcmp(d->name, "GASKET_IOCTL_REGISTER_INTERRUPT"), "decode REGISTER_INTERRUPT");
	arg[0] = 2;		/* interrupt 2 */
	arg[8] = 17;		/* eventfd 17 */
	ASSERT_TRUE(ioctl_field_value(&d->fields[1], arg, sizeof(arg), &v) && v == 17,
		    "event_fd field");
	ASSERT_EQ(d->fields[1].role, ROLE_EVENTFD, "event_fd role");
	ASSERT_FALSE(ioctl_field_value(&d->fields[3], arg, 16, &v), "field past the copied bytes");
	ASSERT_TRUE(ioctl_decode(p->family, 0x4020dc08) &&
		    ioctl_decode(p->family, 0x4020dc08)->kind == IOCTL_DMA_MAP, "MAP_BUFFER is a DMA map");
	ASSERT_TRUE(ioctl_decode(p->family, 0x12345678) == NULL, "unknown command");

	/* DRM commands match on type + nr whatever their size bits. */
	p = device_node_match("/dev/accel/accel0");
	ASSERT_TRUE(ioctl_decode(p->family, 0x40206445) && ioctl_decode(p->family, 0x40186445) &&
		    ioctl_decode(p->family, 0x40186445)->kind == IOCTL_SUBMIT, "ivpu submit, both sizes");
	d = ioctl_decode(p->family, 0xc01864cf);
	ASSERT_TRUE(d && d->fields[3].role == ROLE_EVENTFD, "syncobj eventfd");

	ASSERT_TRUE(device_irq_name_match("tpu_common0-17"), "gasket irq name");
	ASSERT_TRUE(device_irq_name_match("vfio-msix[3](0000:00:04.0)"), "vfio irq name");
	ASSERT_FALSE(device_irq_name_match("virtio0-input.0"), "virtio is no accelerator");
}

/* Every pack says which exports identify its library (runtime_kind.h). */
static void check_signatures(void)
{
	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *p = rt_pack_get(i);
		const struct rt_abi_signature *abi = &p->abi;

		ASSERT_TRUE((abi->all_of && abi->all_of[0]) || (abi->any_of && abi->any_of[0]),
			    p->name);
		/* A PJRT pack is recognised by the function it finds the table with. */
		if (p->pjrt)
			ASSERT_TRUE(abi->all_of && !strcmp(abi->all_of[0], "GetPjrtApi"),
				    "PJRT packs: GetPjrtApi");
		/* An any_of symbol is one the pack probes: exporting it is what
		 * makes the library worth probing. */
		for (size_t j = 0; abi->any_of && abi->any_of[j]; j++) {
			bool probed = false;

			for (size_t k = 0; k < p->n_entries; k++)
				probed |= p->entries[k].target == RT_TARGET_SYMBOL &&
					  !strcmp(p->entries[k].symbol, abi->any_of[j]);
			ASSERT_TRUE(probed, abi->any_of[j]);
		}
	}
	/* Names are hints: the CPU plugin's name hints the PJRT pack. */
	ASSERT_TRUE(rt_pack_match("/x/pjrt_c_api_cpu_plugin.so") &&
		    rt_pack_match("/x/pjrt_c_api_cpu_plugin.so")->pjrt, "CPU plugin name hint");
	ASSERT_TRUE(rt_pack_match("/x/libcudart.so.13") &&
		    !strcmp(rt_pack_match("/x/libcudart.so.13")->name, "CUDA runtime"),
		    "libcudart name hint");
}

static const struct rt_pack_entry *entry_named(const struct rt_pack *p, const char *name)
{
	for (size_t i = 0; p && i < p->n_entries; i++)
		if (!strcmp(p->entries[i].name, name))
			return &p->entries[i];
	return NULL;
}

static const struct rt_pack *pack_named(const char *name)
{
	for (size_t i = 0; i < rt_pack_count(); i++)
		if (!strcmp(rt_pack_get(i)->name, name))
			return rt_pack_get(i);
	return NULL;
}

/* The CUDA runtime pack reads the arguments where the SysV ABI puts them
 * (docs/probes.md lists the signatures). */
static void check_cudart_pack(void)
{
	const struct rt_pack *p = pack_named("CUDA runtime");
	const struct rt_pack_entry *e;
	static const char *const probed[] = {
		"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
		"cudaLaunchKernelExC_ptsz", "cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync",
		"cudaMemcpyAsync_ptsz", "cudaGraphLaunch", "cudaGraphLaunch_ptsz",
		"cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaEventSynchronize",
		"cudaDeviceSynchronize", "cudaEventRecord", "cudaEventRecord_ptsz",
	};

	if (!ASSERT_OK_PTR(p, "CUDA runtime pack"))
		return;
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		e = entry_named(p, probed[i]);
		if (!ASSERT_OK_PTR(e, probed[i]))
			continue;
		ASSERT_TRUE(rt_event_kind_is_cudart(e->event), "a runtime kind");
		ASSERT_STREQ(e->symbol, probed[i], "probed by its own symbol");
		/* Paired: the collector needs each call's end to tell nesting. */
		ASSERT_TRUE(e->spec_flags & RT_SPEC_RETURN, "with a return probe");
	}
	e = entry_named(p, "cudaLaunchKernel");
	if (ASSERT_OK_PTR(e, "cudaLaunchKernel")) {
		ASSERT_EQ(e->ops[V_CUDART_FUNC].src, FETCH_ARG0, "func in rdi");
		ASSERT_EQ(e->ops[V_CUDART_GRID_XY].src, FETCH_ARG0 + 1, "grid x|y in rsi");
		ASSERT_EQ(e->ops[V_CUDART_GRID_Z].src, FETCH_ARG0 + 2, "grid z in rdx");
		ASSERT_EQ(e->ops[V_CUDART_BLOCK_XY].src, FETCH_ARG0 + 3, "block x|y in rcx");
		ASSERT_EQ(e->ops[V_CUDART_BLOCK_Z].src, FETCH_ARG0 + 4, "block z in r8");
		ASSERT_TRUE(e->ops[V_CUDART_SHARED].src == FETCH_SP &&
			    e->ops[V_CUDART_SHARED].offset == 8, "sharedMem at [sp+8]");
		ASSERT_TRUE(e->ops[V_CUDART_STREAM].src == FETCH_SP &&
			    e->ops[V_CUDART_STREAM].offset == 16, "stream at [sp+16]");
		ASSERT_TRUE(e->spec_flags & RT_SPEC_ADOPT, "a launch adopts its caller");
	}
	e = entry_named(p, "cudaLaunchKernelExC");
	if (ASSERT_OK_PTR(e, "cudaLaunchKernelExC")) {
		ASSERT_EQ(e->ops[V_CUDART_FUNC].src, FETCH_ARG0 + 1, "func is the 2nd argument");
		ASSERT_TRUE(e->ops[V_CUDART_GRID_XY].offset == 0 &&
			    e->ops[V_CUDART_GRID_XY].size == 8, "config->gridDim.x|y");
		ASSERT_EQ(e->ops[V_CUDART_BLOCK_XY].offset, 12, "config->blockDim @12");
		ASSERT_EQ(e->ops[V_CUDART_SHARED].offset, 24, "dynamicSmemBytes @24");
		ASSERT_EQ(e->ops[V_CUDART_STREAM].offset, 32, "stream @32");
	}
	e = entry_named(p, "cudaMemcpyAsync");
	if (ASSERT_OK_PTR(e, "cudaMemcpyAsync")) {
		ASSERT_EQ(e->ops[V_CUDART_MEM_BYTES].src, FETCH_ARG0 + 2, "count in rdx");
		ASSERT_EQ(e->ops[V_CUDART_MEM_KIND].src, FETCH_ARG0 + 3, "kind in rcx");
		ASSERT_EQ(e->ops[V_CUDART_MEM_STREAM].src, FETCH_ARG0 + 4, "stream in r8");
	}
	e = entry_named(p, "cudaMemcpy");
	ASSERT_TRUE(e && e->n_ops == V_CUDART_MEM_KIND + 1, "cudaMemcpy: no stream");
	ASSERT_FALSE(rt_event_kind_is_cudart(RT_EV_CUDA_LAUNCH), "cuLaunchKernel: the driver");
	ASSERT_TRUE(rt_event_kind_is_cuda_driver(RT_EV_CUDA_GRAPH_LAUNCH), "driver kind");
	ASSERT_FALSE(rt_event_kind_is_cuda_driver(RT_EV_CUDART_LAUNCH), "runtime kind");
	for (int k = 0; k < RT_EV__COUNT; k++)
		ASSERT_TRUE(strcmp(rt_event_kind_name(k), "?"), "every kind named");
}

/* Core kinds record always; the high-rate ones are detail (sampled mode),
 * and their specs carry the flag that picks the switch-first programs. */
static void check_detail_kinds(void)
{
	struct rt_probe_spec spec;
	size_t core = 0, detail = 0;

	ASSERT_FALSE(rt_event_kind_is_detail(RT_EV_EXECUTE), "Execute is core");
	ASSERT_FALSE(rt_event_kind_is_detail(RT_EV_GET_PJRT_API), "GetPjrtApi is core");
	ASSERT_FALSE(rt_event_kind_is_detail(RT_EV_COMPILE), "Compile is core");
	ASSERT_TRUE(rt_event_kind_is_detail(RT_EV_H2D), "transfers are detail");
	ASSERT_TRUE(rt_event_kind_is_detail(RT_EV_ON_READY), "completions are detail");
	ASSERT_TRUE(rt_event_kind_is_detail(RT_EV_CALLBACK), "callbacks are detail");
	ASSERT_TRUE(rt_event_kind_is_detail(RT_EV_CUDART_LAUNCH), "kernel launches are detail");
	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *pack = rt_pack_get(i);

		for (size_t j = 0; j < pack->n_entries; j++) {
			const struct rt_pack_entry *e = &pack->entries[j];

			rt_pack_entry__spec(e, &spec);
			ASSERT_EQ(!!(spec.flags & RT_SPEC_DETAIL), rt_event_kind_is_detail(e->event),
				  e->name);
			if (spec.flags & RT_SPEC_DETAIL)
				detail++;
			else
				core++;
		}
	}
	ASSERT_GE(core, 3, "some entries are core");
	ASSERT_GE(detail, 10, "most are detail");
}

/* PJRT_Buffer_Type numbers (tests/sim/pjrt_abi.h's enum, written from
 * pjrt_c_api.h) and their XLA names. */
static void test_type_names(void)
{
	ASSERT_TRUE(pjrt_buffer_type_name(PJRT_Buffer_Type_INVALID) == NULL, "invalid");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_PRED), "pred", "pred");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_S32), "s32", "s32");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_U8), "u8", "u8");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_F16), "f16", "f16");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_F32), "f32", "f32");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_BF16), "bf16", "bf16");
	ASSERT_STREQ(pjrt_buffer_type_name(PJRT_Buffer_Type_C128), "c128", "c128");
	ASSERT_STREQ(pjrt_buffer_type_name(17), "f8e4m3fn", "F8E4M3FN is 17");
	ASSERT_STREQ(pjrt_buffer_type_name(21), "s4", "S4 is 21");
	ASSERT_TRUE(pjrt_buffer_type_name(1000) == NULL, "beyond the enum");
	ASSERT_TRUE(pjrt_buffer_type_name(UINT64_MAX) == NULL, "hostile");
}

int main(void)
{
	check_detail_kinds();
	check_cudart_pack();
	check_packs();
	check_library_matching();
	check_signatures();
	check_device_nodes();
	test_type_names();
	return test_exit();
}
