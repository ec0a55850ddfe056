// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The input pipeline: data files on disk, reader threads ("pt_data_worker")
 * that pread them and preprocess each batch on the CPU, and a bounded
 * prefetch queue. With --input-bound the readers are paced: slow storage is
 * modelled by a sleep before each read, so the pipeline delivers a batch
 * every step_time / (1 - F) and the device waits for input about F of the
 * time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "simtruth.h"
#include "trainer.h"
#include "sim_fs.h"

#define MAX_READERS 64

struct input {
	const struct trainer_config *cfg;
	int nfds;
	int *fds;
	char (*paths)[PATH_MAX];
	struct bqueue *q;
	pthread_t readers[MAX_READERS];
	int nreaders;
	uint64_t next_seq;
	uint64_t period_ns;		/* per reader; 0 = as fast as the queue allows */
	volatile bool stop;
};

/* A shard of pseudo-random bytes, written once and reused by later runs. */
static int make_shard(const char *path, size_t bytes, uint64_t seed)
{
	unsigned char buf[65536];
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	struct stat st;
	size_t done, i;
	int fd, err = 0;

	if (!stat(path, &st) && (size_t)st.st_size >= bytes)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (done = 0; done < bytes && !err; done += sizeof(buf)) {
		size_t n = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);

		for (i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (unsigned char)x;
		}
		if (write(fd, buf, n) != (ssize_t)n)
			err = errno ? -errno : -EIO;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* CPU work proportional to the batch: decode and normalise the bytes,
 * a word at a time (about 0.2 ns a byte). */
static void preprocess(const unsigned char *raw, unsigned char *out, size_t n)
{
	uint64_t acc = 0x9e3779b97f4a7c15ull, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, raw + i, 8);
		acc = acc * 31 + w;
		w = (w ^ 0x5a5a5a5a5a5a5a5aull) + (acc >> 56);
		memcpy(out + i, &w, 8);
	}
	for (; i < n; i++)
		out[i] = (unsigned char)(raw[i] ^ 0x5a);
}

static int read_batch(struct input *in, uint64_t seq, unsigned char *raw)
{
	const struct trainer_config *cfg = in->cfg;
	int shard = (int)(seq % (uint64_t)in->nfds);
	size_t span = cfg->shard_bytes - cfg->batch_bytes + 1;
	off_t off = (off_t)(((seq / (uint64_t)in->nfds) * cfg->batch_bytes) % span);
	uint64_t t0, t1;
	struct truth_line l;
	ssize_t n;

	do {
		t0 = truth_now();
		n = pread(in->fds[shard], raw, cfg->batch_bytes, off);
		t1 = truth_now();
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (truth_enabled()) {
		tl_begin(&l, "file_read");
		tl_str(&l, "path", in->paths[shard]);
		tl_u64(&l, "offset", (uint64_t)off);
		tl_u64(&l, "bytes", (uint64_t)n);
		tl_u64(&l, "t_call", t0);
		tl_u64(&l, "t_return", t1);
		truth_commit(&l);
	}
	if ((size_t)n < cfg->batch_bytes)
		memset(raw + n, 0, cfg->batch_bytes - (size_t)n);
	return 0;
}

static void *reader_main(void *arg)
{
	struct input *in = arg;
	size_t bytes = in->cfg->batch_bytes;
	unsigned char *raw = malloc(bytes);
	uint64_t next = truth_now();
	int err;

	while (raw && !in->stop && !stopping()) {
		uint64_t seq = __atomic_add_fetch(&in->next_seq, 1, __ATOMIC_RELAXED);
		struct batch *b;

		if (in->period_ns) {
			next += in->period_ns;
			if (truth_now() < next && !tsleep(next - truth_now()))
				break;
		}
		b = malloc(sizeof(*b) + bytes);
		if (!b)
			break;
		b->seq = seq;
		b->bytes = bytes;
		b->data = (unsigned char *)(b + 1);
		err = read_batch(in, seq, raw);
		if (err) {
			fprintf(stderr, "tpu-trainer: read: %s\n", strerror(-err));
			free(b);
			break;
		}
		preprocess(raw, b->data, bytes);
		if (bqueue__push(in->q, b)) {
			free(b);
			break;
		}
	}
	free(raw);
	return NULL;
}

struct input *input__start(const struct trainer_config *cfg, const char *data_dir)
{
	struct input *in = calloc(1, sizeof(*in));
	int i, err;

	if (!in)
		return NULL;
	in->cfg = cfg;
	in->nfds = cfg->shards;
	in->fds = calloc((size_t)in->nfds, sizeof(*in->fds));
	in->paths = calloc((size_t)in->nfds, sizeof(*in->paths));
	in->q = bqueue__new((size_t)cfg->prefetch);
	if (!in->fds || !in->paths || !in->q)
		goto fail;
	for (i = 0; i < in->nfds; i++)
		in->fds[i] = -1;
	if (cfg->readers) {
		err = sim_make_dirs(data_dir);
		if (err) {
			fprintf(stderr, "tpu-trainer: cannot create %s: %s\n", data_dir,
				strerror(-err));
			goto fail;
		}
		for (i = 0; i < in->nfds; i++) {
			snprintf(in->paths[i], PATH_MAX, "%.4000s/shard-%05d.rec", data_dir, i);
			err = make_shard(in->paths[i], cfg->shard_bytes, (uint64_t)i + 1);
			if (!err) {
				in->fds[i] = open(in->paths[i], O_RDONLY | O_CLOEXEC);
				err = in->fds[i] < 0 ? -errno : 0;
			}
			if (err) {
				fprintf(stderr, "tpu-trainer: %s: %s\n", in->paths[i],
					strerror(-err));
				goto fail;
			}
		}
	}
	if (cfg->input_bound > 0)
		in->period_ns = (uint64_t)((double)cfg->readers * (double)cfg->step_ns /
					   (1.0 - cfg->input_bound));
	for (i = 0; i < cfg->readers && i < MAX_READERS; i++) {
		if (tthread_start(&in->readers[i], "pt_data_worker", "reader",
				  reader_main, in))
			goto fail;
		in->nreaders++;
	}
	return in;
fail:
	input__stop(in);
	return NULL;
}

struct batch *input__next(struct input *in, uint64_t *waited_ns)
{
	struct batch *b = NULL;

	*waited_ns = 0;
	if (in->stop)
		return NULL;
	if (!in->nreaders) {
		/* No pipeline: a synthetic batch, made on the spot. */
		b = calloc(1, sizeof(*b) + in->cfg->batch_bytes);
		if (b) {
			b->seq = ++in->next_seq;
			b->bytes = in->cfg->batch_bytes;
			b->data = (unsigned char *)(b + 1);
		}
		return b;
	}
	if (bqueue__pop(in->q, (void **)&b, waited_ns))
		return NULL;
	return b;
}

void input__batch_free(struct batch *b)
{
	free(b);
}

void input__close(struct input *in)
{
	if (!in)
		return;
	in->stop = true;
	if (in->q)
		bqueue__close(in->q);
}

void input__stop(struct input *in)
{
	struct batch *b;
	int i;

	if (!in)
		return;
	input__close(in);
	if (in->q) {
		for (i = 0; i < in->nreaders; i++)
			pthread_join(in->readers[i], NULL);
		while (!bqueue__pop(in->q, (void **)&b, NULL))
			free(b);
		bqueue__free(in->q);
	}
	for (i = 0; in->fds && i < in->nfds; i++)
		if (in->fds[i] >= 0)
			close(in->fds[i]);
	free(in->fds);
	free(in->paths);
	free(in);
}
