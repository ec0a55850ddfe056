// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <pthread.h>
#include <stdbool.h>
#include <bpf/libbpf.h>

#include "probe/bpf_links.h"

#define MAX_THREADS 16

struct slice {
	struct bpf_link **links;
	size_t n, stride;
};

static void *destroy_slice(void *arg)
{
	struct slice *s = arg;

	for (size_t i = 0; i < s->n; i += s->stride) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	return NULL;
}

void bpf_links__destroy_all(struct bpf_link **links, size_t n)
{
	struct slice slices[MAX_THREADS];
	pthread_t threads[MAX_THREADS];
	size_t nthreads = n < MAX_THREADS ? n : MAX_THREADS;
	bool started[MAX_THREADS] = {};

	/* Thread t takes links t, t + nthreads, ...; the caller takes slice 0. */
	for (size_t t = 0; t < nthreads; t++) {
		slices[t] = (struct slice){ .links = links + t, .n = n - t,
					    .stride = nthreads };
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
