// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* PJRT_Error objects and the Error_* slots. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

/* Allocation failure still yields an error the caller can read. */
static struct {
	PJRT_Error e;
	char text[16];
} oom_error = { { PJRT_Error_Code_RESOURCE_EXHAUSTED }, "out of memory" };

PJRT_Error *sim_error(PJRT_Error_Code code, const char *fmt, ...)
{
	char msg[512];
	PJRT_Error *e;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	e = malloc(sizeof(*e) + n + 1);
	if (!e)
		return &oom_error.e;
	e->code = code;
	memcpy(e->message, msg, n + 1);
	return e;
}

PJRT_Error *sim_error_copy(const PJRT_Error *e)
{
	return e ? sim_error(e->code, "%s", e->message) : NULL;
}

void sim_error_free(PJRT_Error *e)
{
	if (e != &oom_error.e)
		free(e);
}

PJRT_Error *sim_check_size(const char *name, size_t expected, size_t actual)
{
	if (actual >= expected)
		return NULL;
	return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
			 "Unexpected %s size: expected %zu, got %zu. Check installed "
			 "software versions. The plugin's PJRT API version is 0.%d.",
			 name, expected, actual, SIM_PJRT_MINOR);
}

/* Error_Destroy and Error_Message return void in the real API; the table
 * slot type is shared, so they return NULL. */
PJRT_Error *sim_PJRT_Error_Destroy(void *args)
{
	PJRT_Error_Destroy_Args *a = args;

	if (a && a->struct_size >= PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error))
		sim_error_free(a->error);
	return NULL;
}

PJRT_Error *sim_PJRT_Error_Message(void *args)
{
	PJRT_Error_Message_Args *a = args;

	if (!a || a->struct_size < PJRT_STRUCT_SIZE(PJRT_Error_Message_Args, message_size))
		return NULL;
	a->message = a->error ? a->error->message : "";
	a->message_size = strlen(a->message);
	return NULL;
}

PJRT_Error *sim_PJRT_Error_GetCode(void *args)
{
	PJRT_Error_GetCode_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Error_GetCode_Args, code);
	if (!a->error)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "error is NULL");
	a->code = a->error->code;
	return NULL;
}
