// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Plugin_Initialize and the Client_* slots. A client owns, in creation
 * order, the device node, the completion runtime and the device; a process
 * has at most one, as libtpu allows one user of the TPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "plugin.h"
#include "simtruth.h"
#include "sim_fs.h"

#if SIM_PJRT_MINOR >= 94
#define CLIENT_CREATE_SIZE PJRT_Client_Create_Args_SIZE_94
#else
#define CLIENT_CREATE_SIZE PJRT_Client_Create_Args_SIZE_26
#endif

pthread_mutex_t sim_client_lock = PTHREAD_MUTEX_INITIALIZER;
PJRT_Client *sim_client;
static pthread_cond_t feed_cond = PTHREAD_COND_INITIALIZER;
static bool initialized;

PJRT_Error *sim_PJRT_Plugin_Initialize(void *args)
{
	SIM_CHECK_ARGS(args, PJRT_Plugin_Initialize_Args, extension_start);
	__atomic_store_n(&initialized, true, __ATOMIC_RELEASE);
	return NULL;
}

int sim_device_core(PJRT_Client *c, const void *dev)
{
	const PJRT_Device *d = dev;

	if (!c || d < c->devices || d >= c->devices + c->cores)
		return -1;
	return d->core;
}

static void truth_client(PJRT_Client *c, uint64_t t0, uint64_t t1)
{
	const struct devclock *clk = simdev__clock(c->dev);
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "client_create");
	tl_u64(&l, "t_call", t0);
	tl_u64(&l, "t_return", t1);
	tl_u64(&l, "minor", SIM_PJRT_MINOR);
	tl_u64(&l, "cores", (uint64_t)c->cores);
	tl_str(&l, "device_node", devnode__present(c->node) ? devnode__path(c->node) : "");
	tl_bool(&l, "submit_ioctl", c->opt.submit_ioctl);
	tl_str(&l, "trace_dir", c->opt.trace_dir);
	tl_u64(&l, "trace_records", c->opt.trace_records);
	/* The PJRT_Device handles, by core: how a tracer keying memory by
	 * handle is checked against the truth's device numbers. */
	tl_key(&l, "devices");
	tl_raw(&l, "[", 1);
	for (int i = 0; i < c->cores; i++) {
		if (i)
			tl_raw(&l, ",", 1);
		tl_put_u64(&l, (uint64_t)(uintptr_t)c->device_ptrs[i]);
	}
	tl_raw(&l, "]", 1);
	tl_u64(&l, "device_memory", c->opt.device_memory);
	truth_commit(&l);

	tl_begin_dev(&l, "device_clock");
	tl_u64(&l, "epoch_ns", clk->epoch_ns);
	tl_u64(&l, "offset_ticks", clk->offset_ticks);
	tl_u64(&l, "rate_hz", clk->rate_hz);
	tl_i64(&l, "drift_ppb", clk->drift_ppb);
	truth_commit(&l);
}

static void client_free(PJRT_Client *c)
{
	if (!c)
		return;
	simdev__free(c->dev);		/* cancels; completions reach rt */
	sim_runtime__free(c->rt);	/* drains them, runs the callbacks */
	devnode__free(c->node);
	free(c);
}

PJRT_Error *sim_PJRT_Client_Create(void *args)
{
	PJRT_Client_Create_Args *a = args;
	PJRT_Error *perr = NULL;
	PJRT_Client *c = NULL;
	uint64_t t0 = truth_now();
	char msg[256] = "";
	int i, err;

	perr = sim_check_size("PJRT_Client_Create_Args", CLIENT_CREATE_SIZE,
			      a ? a->struct_size : 0);
	if (perr)
		return perr;
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return sim_error(PJRT_Error_Code_FAILED_PRECONDITION,
				 "PJRT_Plugin_Initialize was not called");
	c = calloc(1, sizeof(*c));
	if (!c)
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	err = sim_options_parse(&c->opt, a->create_options, a->num_options, msg,
				sizeof(msg));
	if (err) {
		perr = sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s", msg);
		goto fail;
	}
	if (c->opt.truth_path[0] && !truth_enabled()) {
		err = truth_open(c->opt.truth_path);
		if (err)
			fprintf(stderr, "libtpu(sim): cannot open %s: %s\n",
				c->opt.truth_path, strerror(-err));
	}

	pthread_mutex_lock(&sim_client_lock);
	if (sim_client) {
		pthread_mutex_unlock(&sim_client_lock);
		perr = sim_error(PJRT_Error_Code_FAILED_PRECONDITION,
				 "The TPU is already in use by process with pid %d",
				 (int)getpid());
		goto fail;
	}
	sim_client = c;		/* reserved; published complete below */
	pthread_mutex_unlock(&sim_client_lock);
	sim_buffer_set_capacity(c->opt.device_memory);

	c->cores = c->opt.cores;
	for (i = 0; i < c->cores; i++) {
		c->devices[i].client = c;
		c->devices[i].core = i;
		c->device_ptrs[i] = &c->devices[i];
	}
	c->node = devnode__open(c->opt.device_dir, c->opt.submit_ioctl);
	if (!c->node) {
		perr = sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
		goto fail_unreserve;
	}
	devnode__reset(c->node);
	c->rt = sim_runtime__new(c);
	if (!c->rt) {
		perr = sim_error(PJRT_Error_Code_INTERNAL, "runtime: %s", strerror(errno));
		goto fail_unreserve;
	}

	{
		struct simdev_opts o = {
			.cores = c->cores,
			.clock = {
				.epoch_ns = truth_now(),
				.offset_ticks = c->opt.clock_offset,
				.rate_hz = c->opt.clock_rate_hz,
				.drift_ppb = c->opt.clock_drift_ppb,
			},
			.trace_dir = c->opt.trace_dir,
			.trace_records = c->opt.trace_records,
			.owner_pid = (uint32_t)getpid(),
			.truth_ops = c->opt.truth_ops,
			.complete = sim_runtime__interrupt,
			.ctx = c->rt,
			.tap = sim_profiler_tap,
		};

		if (c->opt.no_devtrace) {
			o.trace_dir = NULL;
			c->opt.trace_dir[0] = 0;
		} else if (sim_make_dirs(c->opt.trace_dir)) {
			fprintf(stderr, "libtpu(sim): cannot create %s (%s); no device "
				"trace buffers\n", c->opt.trace_dir, strerror(errno));
			o.trace_dir = NULL;
			c->opt.trace_dir[0] = 0;
		}
		c->dev = simdev__new(&o);
		if (!c->dev && o.trace_dir) {
			o.trace_dir = NULL;
			c->opt.trace_dir[0] = 0;
			c->dev = simdev__new(&o);
		}
	}
	if (!c->dev) {
		perr = sim_error(PJRT_Error_Code_INTERNAL, "device: %s", strerror(errno));
		goto fail_unreserve;
	}
	truth_client(c, t0, truth_now());
	pthread_mutex_lock(&sim_client_lock);
	c->ready = true;
	pthread_mutex_unlock(&sim_client_lock);
	a->client = c;
	return NULL;

fail_unreserve:
	pthread_mutex_lock(&sim_client_lock);
	sim_client = NULL;
	pthread_mutex_unlock(&sim_client_lock);
fail:
	client_free(c);
	return perr;
}

PJRT_Error *sim_PJRT_Client_Destroy(void *args)
{
	PJRT_Client_Destroy_Args *a = args;
	PJRT_Client *c;

	SIM_CHECK_ARGS(a, PJRT_Client_Destroy_Args, client);
	c = a->client;
	if (!c)
		return NULL;
	pthread_mutex_lock(&sim_client_lock);
	if (sim_client == c)
		sim_client = NULL;
	pthread_mutex_unlock(&sim_client_lock);
	/* Wake feeders blocked on the device, and wait for them to leave. */
	simdev__shutdown(c->dev);
	pthread_mutex_lock(&sim_client_lock);
	while (c->feed_users)
		pthread_cond_wait(&feed_cond, &sim_client_lock);
	pthread_mutex_unlock(&sim_client_lock);
	client_free(c);
	truth_flush();
	return NULL;
}

/* Feed calls (TPU C API) hold the client while inside; see plugin_feed.c. */
PJRT_Client *sim_client_get(void)
{
	PJRT_Client *c;

	pthread_mutex_lock(&sim_client_lock);
	c = sim_client && sim_client->ready ? sim_client : NULL;
	if (c)
		c->feed_users++;
	pthread_mutex_unlock(&sim_client_lock);
	return c;
}

void sim_client_put(PJRT_Client *c)
{
	pthread_mutex_lock(&sim_client_lock);
	if (--c->feed_users == 0)
		pthread_cond_broadcast(&feed_cond);
	pthread_mutex_unlock(&sim_client_lock);
}

PJRT_Error *sim_PJRT_Client_PlatformName(void *args)
{
	PJRT_Client_PlatformName_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Client_PlatformName_Args, platform_name_size);
	a->platform_name = "tpu";
	a->platform_name_size = 3;
	return NULL;
}

static PJRT_Error *list_devices(PJRT_Client_Devices_Args *a)
{
	SIM_CHECK_ARGS(a, PJRT_Client_Devices_Args, num_devices);
	if (!a->client)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "client is NULL");
	a->devices = a->client->device_ptrs;
	a->num_devices = (size_t)a->client->cores;
	return NULL;
}

PJRT_Error *sim_PJRT_Client_Devices(void *args)
{
	return list_devices(args);
}

PJRT_Error *sim_PJRT_Client_AddressableDevices(void *args)
{
	return list_devices(args);
}
