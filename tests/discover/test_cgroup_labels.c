// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container and pod from the cgroup paths runtimes make. */
#include <string.h>

#include "test.h"
#include "discover/cgroup_labels.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect(const char *path, const char *container, const char *pod)
{
	struct cgroup_labels l;

	cgroup_labels_parse(path, &l);
	ASSERT_STREQ(l.container, container, path);
	ASSERT_STREQ(l.pod, pod, path);
}

int main(void)
{
	expect("/kubepods.slice/kubepods-burstable.slice/"
	       "kubepods-burstable-pod1a2b3c4d_0000_4e5f_a6b7_c8d9e0f1a2b3.slice/"
	       "cri-containerd-" ID ".scope",
	       ID, "1a2b3c4d-0000-4e5f-a6b7-c8d9e0f1a2b3");
	expect("/kubepods/burstable/pod1a2b3c4d-0000-4e5f-a6b7-c8d9e0f1a2b3/" ID,
	       ID, "1a2b3c4d-0000-4e5f-a6b7-c8d9e0f1a2b3");
	expect("/system.slice/docker-" ID ".scope", ID, "");
	expect("/docker/" ID, ID, "");
	expect("/machine.slice/libpod-" ID ".scope/container", ID, "");
	expect("/user.slice/user-0.slice/session-3.scope", "", "");
	expect("/", "", "");
	expect("", "", "");
	/* Not quite an id: one digit short, or not hex. */
	expect("/docker/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", "", "");
	expect("/docker-" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg"
	       ".scope", "", "");
	return test_exit();
}
