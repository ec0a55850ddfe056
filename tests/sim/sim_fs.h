/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Filesystem helpers the plugin and the trainer share. */
#ifndef ACCELTRACE_SIM_FS_H
#define ACCELTRACE_SIM_FS_H

/* mkdir -p @path (mode 0755); 0 or -errno. */
int sim_make_dirs(const char *path);

#endif /* ACCELTRACE_SIM_FS_H */
