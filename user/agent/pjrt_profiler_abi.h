/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The parts of the PJRT C API the agent's PJRT backend uses: the extension
 * chain of PJRT_Api and the profiler extension's PLUGIN_Profiler_Api.
 * Written from openxla/xla's xla/pjrt/c/pjrt_c_api.h,
 * xla/pjrt/c/pjrt_c_api_profiler_extension.h and
 * xla/backends/profiler/plugin/profiler_c_api.h (PLUGIN_PROFILER_VERSION
 * 1); docs/agent.md says which fields are read. Every struct begins with
 * its struct_size, and callers set it to the size up to the last field
 * they know, as upstream's *_STRUCT_SIZE do.
 */
#ifndef ACCELTRACE_AGENT_PJRT_PROFILER_ABI_H
#define ACCELTRACE_AGENT_PJRT_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#define PJRT_EXTENSION_TYPE_PROFILER 1

struct pjrt_extension_base {
	size_t struct_size;
	int type;			/* PJRT_Extension_Type */
	struct pjrt_extension_base *next;
};

/* The head of PJRT_Api: its size, then the extension chain. */
struct pjrt_api_head {
	size_t struct_size;
	struct pjrt_extension_base *extension_start;
};

struct plugin_profiler;
struct plugin_profiler_error;

struct plugin_profiler_error_destroy_args {
	size_t struct_size;
	void *priv;
	struct plugin_profiler_error *error;
};

struct plugin_profiler_error_message_args {
	size_t struct_size;
	void *priv;
	const struct plugin_profiler_error *error;
	const char *message;		/* out, lives as long as @error */
	size_t message_size;		/* out */
};

struct plugin_profiler_error_get_code_args {
	size_t struct_size;
	void *priv;
	const struct plugin_profiler_error *error;
	int code;			/* out: an absl::StatusCode */
};

struct plugin_profiler_create_args {
	size_t struct_size;
	const char *options;		/* serialized tensorflow.ProfileOptions */
	size_t options_size;
	struct plugin_profiler *profiler;	/* out */
};

/* Destroy, Start and Stop take the same arguments. */
struct plugin_profiler_args {
	size_t struct_size;
	struct plugin_profiler *profiler;
};

struct plugin_profiler_collect_data_args {
	size_t struct_size;
	struct plugin_profiler *profiler;
	uint8_t *buffer;		/* in/out: NULL asks for the plugin's own */
	size_t buffer_size_in_bytes;	/* out */
};

struct plugin_profiler_api {
	size_t struct_size;
	void *priv;
	void (*error_destroy)(struct plugin_profiler_error_destroy_args *);
	void (*error_message)(struct plugin_profiler_error_message_args *);
	struct plugin_profiler_error *(*error_get_code)(struct plugin_profiler_error_get_code_args *);
	struct plugin_profiler_error *(*create)(struct plugin_profiler_create_args *);
	struct plugin_profiler_error *(*destroy)(struct plugin_profiler_args *);
	struct plugin_profiler_error *(*start)(struct plugin_profiler_args *);
	struct plugin_profiler_error *(*stop)(struct plugin_profiler_args *);
	struct plugin_profiler_error *(*collect_data)(struct plugin_profiler_collect_data_args *);
};

struct pjrt_profiler_extension {
	struct pjrt_extension_base base;
	struct plugin_profiler_api *profiler_api;
	int64_t traceme_context_id;
};

#define PJRT_SIZE_TO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

#endif /* ACCELTRACE_AGENT_PJRT_PROFILER_ABI_H */
