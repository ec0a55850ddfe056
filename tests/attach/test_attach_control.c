// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach/attach_control.c without a probe session: what it does without
 * one (nothing, successfully), an unknown kind refused and counted, the
 * lookups and reads it hands the collector.
 */
#include <errno.h>
#include <unistd.h>

#include "test.h"
#include "attach/attach_control.h"

static void test_controller_without_session(void)
{
	struct attach_control *ac = attach_control__new(NULL, NULL);
	struct control_record exec = { .kind = CTL_EXEC, .pid = getpid() };
	struct control_record bogus = { .kind = 999, .pid = getpid() };
	struct control_record both[2] = { exec, bogus };
	struct control_lookups ops;
	struct session_reads reads;

	if (!ASSERT_OK_PTR(ac, "controller"))
		return;
	ASSERT_OK(attach_control__handle(ac, &exec), "nothing to do without a session");
	ASSERT_EQ(attach_control__handle(ac, &bogus), -EINVAL, "unknown kind refused");
	ASSERT_EQ(attach_control__failures(ac), 1, "the refusal counted");
	attach_control__act(ac, both, 2);
	ASSERT_EQ(attach_control__failures(ac), 2, "each record acted on, in turn");
	ops = attach_control__lookups(ac);
	ASSERT_TRUE(ops.ctx == ac && ops.probe_entry, "lookups filled");
	ASSERT_TRUE(ops.probe_entry(ops.ctx, 3) == NULL, "no probes: no entry");
	ASSERT_STREQ(control_kind_name(CTL_EVENTFD_REGISTERED), "eventfd registered", "name");
	reads = attach_control__reads(ac);
	ASSERT_TRUE(!reads.for_each_open && !reads.losses, "no session: nothing to read");
	attach_control__free(ac);
	attach_control__free(NULL);
}

int main(void)
{
	test_controller_without_session();
	return test_exit();
}
