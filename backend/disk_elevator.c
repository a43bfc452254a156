/*
 * The host's I/O scheduler in front of a modelled rotating disk
 * (disk:elevator=none|deadline|cfq): the order in which commands waiting
 * beyond the drive's queue (the model's host queue) are handed to the
 * drive. The published results of the 2000s were measured through the
 * Linux block layer, which sorted requests before the drive saw them; a
 * target that passes commands on in arrival order shows none of that.
 * This file is the dispatch (none and deadline here; cfq, which keeps
 * queues per submitter and may hold the drive idle, in disk_cfq.c).
 *
 * deadline follows Linux's deadline scheduler (block/deadline-iosched.c,
 * Documentation/block/deadline-iosched.rst) with its default tunables: a
 * one-way elevator in sector order from where the last dispatched command
 * ended, in batches of fifo_batch (16) dispatches. The fifo is looked at
 * only when a batch ends (fifo_batch dispatches, or nothing further on
 * in the sweep): then the oldest command goes next if it has waited
 * read_expire (500 ms) or write_expire (5 s), or if the sweep has reached
 * the end; otherwise the sweep goes on. Either way a new batch starts
 * (deadline_dispatch_requests: batching = 0), so between two looks at
 * the fifo there are fifo_batch dispatches, never one. Left out: reads
 * and writes are kept in one queue (no writes_starved preference for
 * reads), and front merges.
 *
 * A FLUSH is a wall: nothing that arrived after it passes it, nothing
 * before it is held behind it (Linux handles flushes outside the
 * elevator, in arrival order relative to the writes they cover).
 */
#include "backend/disk_model_priv.h"

#define DL_FIFO_BATCH 16u
#define DL_READ_EXPIRE_NS 500000000ull
#define DL_WRITE_EXPIRE_NS 5000000000ull

static bool cfq_on(const struct disk_model *m)
{
	return m->p.kind == DM_HDD && m->p.elevator == DM_ELV_CFQ;
}

static bool expired(const struct dm_req *r, uint64_t t)
{
	uint64_t lim = r->op == DM_WRITE ? DL_WRITE_EXPIRE_NS :
					    DL_READ_EXPIRE_NS;

	return t - r->arrive >= lim;
}

static struct dm_req *deadline_pick(struct disk_model *m, uint64_t t,
				    struct dm_req *oldest)
{
	struct dm_req *next = NULL;
	struct list_node *n;

	/* the next in sector order at or after the sweep position, among
	 * what arrived before the first FLUSH */
	list_for_each(n, &m->host) {
		struct dm_req *r = list_entry(n, struct dm_req, node);

		if (r->op == DM_FLUSH)
			break;
		if (r->lba >= m->elv_pos && (!next || r->lba < next->lba))
			next = r;
	}
	if (!next || m->elv_batch >= DL_FIFO_BATCH) {
		/* the batch ends: the fifo's turn if its oldest expired or
		 * the sweep ran out, and a new batch either way */
		if (!next || expired(oldest, t))
			next = oldest;
		m->elv_batch = 0;
	}
	m->elv_batch++;
	m->elv_pos = next->lba + next->nsect;
	return next;
}

struct dm_req *dm_elevator_pick(struct disk_model *m, uint64_t t)
{
	struct dm_req *oldest;

	if (list_empty(&m->host))
		return NULL;
	if (cfq_on(m))
		return dm_cfq_pick(m, t);
	oldest = list_first_entry(&m->host, struct dm_req, node);
	if (m->p.elevator != DM_ELV_DEADLINE || oldest->op == DM_FLUSH)
		return oldest;
	return deadline_pick(m, t, oldest);
}

void dm_elevator_add(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	if (cfq_on(m))
		dm_cfq_add(m, r, t);
}

void dm_elevator_done(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	if (cfq_on(m))
		dm_cfq_done(m, r, t);
}

uint64_t dm_elevator_wake(const struct disk_model *m, uint64_t t)
{
	return cfq_on(m) ? dm_cfq_wake(m, t) : DM_NONE;
}
