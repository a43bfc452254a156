/*
 * ram: the LUN lives in anonymous memory, mapped lazily (MAP_NORESERVE) so
 * a large, mostly unused LUN costs nothing until written. Completions are
 * deferred to the end of the pass, like null. Options: size=N[KMGT]
 * (required here or through params->size).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/compiler.h"

#define RAM_PAGE 4096ull

static int ram_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct bdev_cq *cq = malloc(sizeof(*cq));

	if (!cq)
		return -1;
	bdev_cq_init(cq, q->reactor, true);
	q->priv = cq;
	return 0;
}

static void ram_queue_fini(struct bdev_queue *q)
{
	bdev_cq_fini(q->priv);
	free(q->priv);
	q->priv = NULL;
}

/* Zeroes a range: whole pages go back to the kernel (they read back as
 * zeros), the unaligned edges are cleared by hand. */
static void ram_zero(unsigned char *base, uint64_t off, uint64_t len)
{
	uint64_t a = (off + RAM_PAGE - 1) & ~(RAM_PAGE - 1);
	uint64_t e = (off + len) & ~(RAM_PAGE - 1);

	if (a >= e) {
		memset(base + off, 0, len);
		return;
	}
	memset(base + off, 0, a - off);
	if (madvise(base + a, e - a, MADV_DONTNEED) < 0)
		memset(base + a, 0, e - a);
	memset(base + e, 0, off + len - e);
}

static void ram_submit(struct bdev_queue *q, struct bdev_io *io)
{
	unsigned char *mem = q->bdev->priv;

	/* bdev_submit already checked the range against b->size. */
	switch (io->op) {
	case BDEV_READ:
		memcpy(io->buf, mem + io->offset, io->len);
		break;
	case BDEV_WRITE:
		memcpy(mem + io->offset, io->buf, io->len);
		break;
	case BDEV_FLUSH:
		break;
	case BDEV_DISCARD:
	case BDEV_WRITE_ZEROES:
		ram_zero(mem, io->offset, io->len);
		break;
	case BDEV_COMPARE_AND_WRITE:	/* not offered: bdev_check */
	case BDEV_WRITE_SAME:		/* refuses them */
		break;
	}
	bdev_cq_push(q->priv, io, 0);
}

static void ram_close(struct bdev *b)
{
	if (b->priv)
		munmap(b->priv, b->size);
	b->priv = NULL;
}

static int ram_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	memcpy(buf, (uint8_t *)b->priv + off, len);
	return 0;
}

static const struct bdev_ops ram_ops = {
	.name = "ram",
	.queue_init = ram_queue_init,
	.queue_fini = ram_queue_fini,
	.submit = ram_submit,
	.close = ram_close,
	.read_sync = ram_read_sync,
};

struct ram_opts {
	uint64_t size;		/* 0: the LUN's size */
};

static const struct ram_opts ram_defaults;

static const struct bdev_opt ram_keys[] = {
	{ .key = "size", .type = BDEV_OPT_SIZE, .min = 1,
	  .offset = offsetof(struct ram_opts, size),
	  .help = "capacity (default: the LUN's size; one is needed)" },
};

const struct bdev_opts_def bdev_ram_opts = {
	.backend = "ram", .opts = ram_keys, .nopts = ARRAY_SIZE(ram_keys),
	.size = sizeof(struct ram_opts), .defaults = &ram_defaults,
};

struct bdev *bdev_ram_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen)
{
	struct ram_opts o = ram_defaults;
	uint64_t size;
	struct bdev *b;
	void *mem;

	if (bdev_opts_parse(&bdev_ram_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	size = o.size ? o.size : p->size;
	if (!size) {
		snprintf(err, errlen, "ram: a size is required (ram:size=N)");
		return NULL;
	}
	b = bdev_alloc(&ram_ops, p, size, err, errlen);
	if (!b)
		return NULL;
	if (size > SIZE_MAX)
		mem = MAP_FAILED;
	else
		mem = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		snprintf(err, errlen, "ram: cannot map %llu bytes: %s",
			 (unsigned long long)size, strerror(errno));
		bdev_free(b);
		return NULL;
	}
	b->priv = mem;
	b->thin = true;
	return b;
}
