/* The live durability audit (durability.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/durability.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/task.h"

#define OP_SYNC_10 0x35
#define OP_SYNC_16 0x91
#define OTHERS DURAB_PORTS	/* the slot of every port past the first */

struct epoch {
	struct epoch *next;	/* newer */
	uint64_t id;
	bool closed;		/* a SYNCHRONIZE CACHE arrived after it */
	uint64_t bytes[DURAB_PORTS + 1];
	uint64_t first_ns[DURAB_PORTS + 1];	/* 0: none yet */
};

struct durab {
	pthread_mutex_t lock;
	struct epoch *oldest, *newest;
	uint64_t next_id;
	const void *nexus[DURAB_PORTS];
	char port[DURAB_PORTS][256];
	unsigned nports;
};

int durab_lun_init(struct lun *l)
{
	struct durab *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	pthread_mutex_init(&d->lock, NULL);
	d->next_id = 1;
	l->durab = d;
	return 0;
}

void durab_lun_free(struct lun *l)
{
	struct durab *d = l->durab;

	if (!d)
		return;
	while (d->oldest) {
		struct epoch *e = d->oldest;

		d->oldest = e->next;
		free(e);
	}
	pthread_mutex_destroy(&d->lock);
	free(d);
	l->durab = NULL;
}

static bool is_sync(const struct tcq_task *t)
{
	return t->cdb[0] == OP_SYNC_10 || t->cdb[0] == OP_SYNC_16;
}

/* A SYNCHRONIZE CACHE that promises the whole LUN at its end. */
static bool full_sync(const struct tcq_task *t)
{
	return is_sync(t) && !t->req.immed && !lun_get_flush_ignore(t->lun) &&
	       t->req.lba == 0 &&
	       (t->req.blocks == 0 || t->req.blocks >= t->lun->nblocks);
}

void durab_arrive(struct tcq_task *t)
{
	struct durab *d = t->lun ? t->lun->durab : NULL;

	t->durab_epoch = 0;
	if (!d || !full_sync(t))
		return;
	pthread_mutex_lock(&d->lock);
	if (d->newest) {
		d->newest->closed = true;
		t->durab_epoch = d->newest->id;
	}
	pthread_mutex_unlock(&d->lock);
}

/* The slot of nexus (lock held). */
static unsigned slot(struct lun *l, struct durab *d, const void *nexus)
{
	for (unsigned i = 0; i < d->nports; i++)
		if (d->nexus[i] == nexus)
			return i;
	if (d->nports == DURAB_PORTS)
		return OTHERS;
	d->nexus[d->nports] = nexus;
	snprintf(d->port[d->nports], sizeof(d->port[0]), "%s",
		 sdev_initiator_port(l, nexus));
	return d->nports++;
}

static void acked(struct durab *d, struct lun *l, const struct tcq_task *t,
		  uint64_t bytes)
{
	struct epoch *e = d->newest;
	unsigned s;

	if (!e || e->closed) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return;	/* the audit undercounts; the data is safe */
		e->id = d->next_id++;
		if (d->newest)
			d->newest->next = e;
		else
			d->oldest = e;
		d->newest = e;
	}
	s = slot(l, d, t->nexus);
	e->bytes[s] += bytes;
	if (!e->first_ns[s])
		e->first_ns[s] = reactor_now_ns();
}

void durab_done(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct durab *d = l ? l->durab : NULL;

	if (!d || t->status != SAM_STAT_GOOD || !t->req.cmd)
		return;
	if (cdb_access(&t->req) == CDB_ACCESS_WRITE) {
		/* Durable at completion: FUA passed on, or the cache off. */
		if ((t->req.fua && !lun_get_fua_ignore(l)) ||
		    !lun_get_write_cache(l))
			return;
		pthread_mutex_lock(&d->lock);
		acked(d, l, t, (uint64_t)t->req.blocks * l->block_size);
		pthread_mutex_unlock(&d->lock);
	} else if (full_sync(t) && t->durab_epoch) {
		pthread_mutex_lock(&d->lock);
		while (d->oldest && d->oldest->id <= t->durab_epoch) {
			struct epoch *e = d->oldest;

			d->oldest = e->next;
			if (!d->oldest)
				d->newest = NULL;
			free(e);
		}
		pthread_mutex_unlock(&d->lock);
	}
}

void durab_info(struct lun *l, struct durab_info *out)
{
	struct durab *d = l->durab;
	uint64_t now = reactor_now_ns(), first[DURAB_PORTS + 1] = { 0 };
	uint64_t bytes[DURAB_PORTS + 1] = { 0 }, oldest = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (struct epoch *e = d->oldest; e; e = e->next)
		for (unsigned s = 0; s <= DURAB_PORTS; s++) {
			if (!e->bytes[s])
				continue;
			bytes[s] += e->bytes[s];
			if (!first[s] || e->first_ns[s] < first[s])
				first[s] = e->first_ns[s];
		}
	for (unsigned s = 0; s <= DURAB_PORTS; s++) {
		struct durab_port *p;

		if (!bytes[s])
			continue;
		p = &out->ports[out->nports++];
		snprintf(p->port, sizeof(p->port), "%s",
			 s < d->nports ? d->port[s] : "");
		p->bytes = bytes[s];
		p->oldest_s = (double)(now - first[s]) / 1e9;
		out->bytes += bytes[s];
		if (!oldest || first[s] < oldest)
			oldest = first[s];
	}
	pthread_mutex_unlock(&d->lock);
	out->oldest_s = oldest ? (double)(now - oldest) / 1e9 : 0;
}
