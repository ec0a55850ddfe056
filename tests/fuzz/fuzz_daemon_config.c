// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's configuration file (daemon/): "key = value" lines, loaded
 * over the defaults as at start and on SIGHUP, then the listen address
 * split as the metrics endpoint does.
 */
#include "fuzz_input.h"
#include "daemon/daemon_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct daemon_config flags, out;
	int fd = fuzz_memfd(data, size, 0);
	char path[64], err[512], addr[128];
	uint16_t port;

	daemon_config__defaults(&flags);
	fuzz_fd_path(fd, path, sizeof(path));
	if (!daemon_config__load(path, &flags, &out, err, sizeof(err))) {
		if (!memchr(out.listen, 0, sizeof(out.listen)) ||
		    !memchr(out.logdir, 0, sizeof(out.logdir)) ||
		    !memchr(out.socket, 0, sizeof(out.socket)))
			abort();
		daemon_config__split_listen(out.listen, addr, sizeof(addr), &port);
	}
	close(fd);
	return 0;
}
