// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "probe/bpf_links.h"

#define MAX_THREADS 16

/* Every stride-th item from the first: one thread's share. Items below
 * n_links are links, the rest fds. */
struct slice {
	struct bpf_link **links;
	int *fds;
	size_t n_links, n, first, stride;
};

static void *destroy_slice(void *arg)
{
	struct slice *s = arg;

	for (size_t i = s->first; i < s->n; i += s->stride) {
		if (i < s->n_links) {
			bpf_link__destroy(s->links[i]);
			s->links[i] = NULL;
		} else if (s->fds[i - s->n_links] >= 0) {
			close(s->fds[i - s->n_links]);
			s->fds[i - s->n_links] = -1;
		}
	}
	return NULL;
}

void bpf_links__destroy_mixed(struct bpf_link **links, size_t n_links, int *fds,
			      size_t n_fds)
{
	struct slice slices[MAX_THREADS];
	pthread_t threads[MAX_THREADS];
	size_t n = n_links + n_fds;
	size_t nthreads = n < MAX_THREADS ? n : MAX_THREADS;
	bool started[MAX_THREADS] = {};

	/* Thread t takes items t, t + nthreads, ...; the caller takes slice 0. */
	for (size_t t = 0; t < nthreads; t++) {
		slices[t] = (struct slice){ .links = links, .fds = fds, .n_links = n_links,
					    .n = n, .first = t, .stride = nthreads };
		if (t && !pthread_create(&threads[t], NULL, destroy_slice, &slices[t]))
			started[t] = true;
	}
	for (size_t t = 0; t < nthreads; t++)
		if (!t || !started[t])
			destroy_slice(&slices[t]);	/* no thread: do it here */
	for (size_t t = 1; t < nthreads; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
}

void bpf_links__destroy_all(struct bpf_link **links, size_t n)
{
	bpf_links__destroy_mixed(links, n, NULL, 0);
}
