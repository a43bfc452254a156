/*
 * A memory backend for the behaviours the built-in ones cannot show: it
 * offers COMPARE AND WRITE of a few blocks (a LUN then reports that
 * limit, as one over rbd does), and it can lose the writes to one block
 * while acknowledging them, as a failing medium would (what the verify
 * step of WRITE AND VERIFY is there to catch). Blocks never written, or
 * discarded, are unmapped, as on a thin device. Completions come on the
 * next reactor pass, like ram's; one reactor only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "tests/unit/harness.h"

struct mem {
	uint8_t *data;
	uint8_t *mapped;	/* per block: written since the last discard */
	uint64_t lost_lba;
	/* Completions, on the one reactor the unit tests run (set up by
	 * the first I/O, on that reactor's thread). */
	struct bdev_cq cq;
	bool cq_ready;
	struct harness_io_seen seen[HARNESS_MEM_SEEN];
	unsigned nseen;
};

/* Writes buf over [off, off+len) but for the lost block. */
static void mem_write(struct bdev *b, uint64_t off, uint64_t len,
		      const uint8_t *buf)
{
	struct mem *m = b->priv;
	uint64_t lost = m->lost_lba * b->block_size;

	memset(m->mapped + off / b->block_size, 1, len / b->block_size);
	if (m->lost_lba >= b->size / b->block_size) {
		memcpy(m->data + off, buf, len);
		return;
	}
	for (uint64_t i = 0; i < len; i++)
		if (off + i < lost || off + i >= lost + b->block_size)
			m->data[off + i] = buf[i];
}

static int mem_caw(struct bdev *b, struct bdev_io *io)
{
	const uint8_t *have = ((struct mem *)b->priv)->data + io->offset;
	const uint8_t *want = io->cmp_buf;

	for (uint64_t i = 0; i < io->len; i++)
		if (have[i] != want[i]) {
			io->miscompare = i;
			return -EILSEQ;
		}
	mem_write(b, io->offset, io->len, io->buf);
	return 0;
}

static void mem_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct bdev *b = q->bdev;
	struct mem *m = b->priv;
	int rc = 0;

	if (!m->cq_ready) {
		bdev_cq_init(&m->cq, q->reactor, true);
		m->cq_ready = true;
	}
	ck_assert_ptr_eq(q->reactor, m->cq.reactor);
	if (m->nseen < HARNESS_MEM_SEEN)
		m->seen[m->nseen] = (struct harness_io_seen){
			.op = io->op, .offset = io->offset, .len = io->len,
			.submitter = io->submitter, .command = io->command };
	m->nseen++;
	/* bdev_submit has checked the range and the optional ops. */
	switch (io->op) {
	case BDEV_READ:
		memcpy(io->buf, m->data + io->offset, io->len);
		break;
	case BDEV_WRITE:
		mem_write(b, io->offset, io->len, io->buf);
		break;
	case BDEV_DISCARD:
		memset(m->mapped + io->offset / b->block_size, 0,
		       io->len / b->block_size);
		/* fall through */
	case BDEV_WRITE_ZEROES:
		memset(m->data + io->offset, 0, io->len);
		break;
	case BDEV_COMPARE_AND_WRITE:
		rc = mem_caw(b, io);
		break;
	case BDEV_FLUSH:
	case BDEV_WRITE_SAME:	/* not offered */
		break;
	}
	bdev_cq_push(&m->cq, io, rc);
}

/* The run of blocks from offset that share its mapped state. */
static int mem_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
			  bool *mapped)
{
	const struct mem *m = b->priv;
	uint64_t first = offset / b->block_size, end = first + 1;
	uint64_t nblocks = b->size / b->block_size;

	while (end < nblocks && m->mapped[end] == m->mapped[first])
		end++;
	*mapped = m->mapped[first];
	*len = (end - first) * b->block_size;
	return 0;
}

static void mem_close(struct bdev *b)
{
	struct mem *m = b->priv;

	if (m->cq_ready)
		bdev_cq_fini(&m->cq);
	free(m->data);
	free(m->mapped);
	free(m);
	b->priv = NULL;
}

static const struct bdev_ops mem_ops = {
	.name = "harness-mem",
	.submit = mem_submit,
	.close = mem_close,
	.lba_status = mem_lba_status,
};

const struct harness_io_seen *harness_mem_seen(struct bdev *b, unsigned *n)
{
	struct mem *m = b->priv;

	*n = m->nseen;
	return m->seen;
}

struct bdev *harness_mem_bdev(uint64_t size, uint32_t caw_blocks,
			      uint64_t lost_lba)
{
	struct bdev_params p = { .size = size, .queue_depth = 8 };
	char err[128];
	struct bdev *b = bdev_alloc(&mem_ops, &p, size, err, sizeof(err));
	struct mem *m = calloc(1, sizeof(*m));

	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_ptr_nonnull(m);
	m->data = calloc(1, size);
	m->mapped = calloc(1, size / b->block_size);
	ck_assert_ptr_nonnull(m->data);
	ck_assert_ptr_nonnull(m->mapped);
	m->lost_lba = lost_lba;
	b->priv = m;
	b->caw_max = caw_blocks * b->block_size;
	return b;
}
