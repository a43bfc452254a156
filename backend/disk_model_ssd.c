/*
 * The flash model of the disk backend (disk_model.c has the interface and
 * the rotating disk; disk_model_priv.h).
 *
 * ---- Flash ------------------------------------------------------------
 *
 * channels x dies (per channel); 4 KiB pages striped over the dies
 * (page p on die p mod (channels*dies), channel = die mod channels). A
 * read occupies its die for read_us then its channel for the page
 * transfer (4096 / channel rate); a write the channel, then the die for
 * program_us. Each die and channel serves its work in the order commands
 * reached the drive (a reservation when the command enters). A command
 * completes when its last page does, after overhead; a FLUSH when every
 * die is idle. The drive holds at most `queue` commands; more wait in the
 * host queue. Throughput grows with depth until the dies (or channels)
 * are all busy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "backend/disk_model_priv.h"

static void ssd_enter(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint32_t ndies = m->p.channels * m->p.dies;
	uint64_t t1 = t + m->p.overhead_ns, end = t1;
	uint64_t tx = (uint64_t)llround(DM_SSD_PAGE * DM_NS /
					(double)m->p.channel_bps);
	struct list_node *n;

	r->start = t;
	r->media = true;
	if (r->op == DM_FLUSH) {
		for (uint32_t g = 0; g < ndies; g++)
			end = dm_max_u64(end, m->die_free[g]);
	} else if (r->op == DM_READ || r->op == DM_WRITE) {
		uint64_t first = r->lba * DM_SECTOR / DM_SSD_PAGE;
		uint64_t last = ((r->lba + r->nsect) * DM_SECTOR - 1) /
				DM_SSD_PAGE;

		for (uint64_t p = first; p <= last; p++) {
			uint32_t g = (uint32_t)(p % ndies), c = g % m->p.channels;
			uint64_t s, e;

			if (r->op == DM_READ) {
				s = dm_max_u64(t1, m->die_free[g]);
				e = dm_max_u64(s + m->p.read_ns, m->ch_free[c]) + tx;
				m->die_free[g] = m->ch_free[c] = e;
				m->die_busy_ns += (double)(e - s);
			} else {
				s = dm_max_u64(t1, dm_max_u64(m->ch_free[c],
							m->die_free[g]));
				m->ch_free[c] = s + tx;
				e = s + tx + m->p.program_ns;
				m->die_free[g] = e;
				m->die_busy_ns += (double)(e - s);
			}
			end = dm_max_u64(end, e);
		}
	}
	r->done = end;
	/* in flight, by completion time (arrival order among equals) */
	for (n = m->inflight.prev; n != &m->inflight; n = n->prev)
		if (list_entry(n, struct dm_req, node)->done <= end)
			break;
	list_insert_between(&r->node, n, n->next);
}

static void ssd_fill(struct disk_model *m, uint64_t t)
{
	while (m->ndrive < m->p.queue && !list_empty(&m->host)) {
		struct dm_req *r = list_first_entry(&m->host, struct dm_req,
						    node);

		dm_acc(m, t);
		list_del(&r->node);
		m->nhost--;
		r->enter = t;
		m->ndrive++;
		ssd_enter(m, r, t);
	}
}

void dm_ssd_advance(struct disk_model *m, uint64_t now,
			struct list_node *done)
{
	while (!list_empty(&m->inflight)) {
		struct dm_req *r = list_first_entry(&m->inflight, struct dm_req,
						    node);
		uint64_t t = r->done;

		if (t > now)
			break;
		dm_finish(m, r, t, done);
		ssd_fill(m, t);
	}
	ssd_fill(m, now);
}

int dm_ssd_init(struct disk_model *m, char *err, size_t errlen)
{
	const struct dm_params *p = &m->p;
	uint32_t nd = p->channels * p->dies;

	if (!p->channels || !p->dies || !p->channel_bps || !p->queue) {
		snprintf(err, errlen, "disk: channels, dies, "
			 "channel_rate and queue must be above 0");
		return -1;
	}
	m->die_free = calloc(nd, sizeof(uint64_t));
	m->ch_free = calloc(p->channels, sizeof(uint64_t));
	if (!m->die_free || !m->ch_free) {
		dm_fini(m);
		snprintf(err, errlen, "disk: out of memory");
		return -1;
	}
	return 0;
}
