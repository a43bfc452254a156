/*
 * The live durability audit: how many bytes a LUN has acknowledged that
 * are not yet durable (SBC-4: written with the write cache on, without
 * FUA, and no SYNCHRONIZE CACHE since their completion has ended), and
 * the age of the oldest, per LUN and per initiator port. What a power
 * cut would cost now, for tcqctl stats and the metrics.
 *
 * Writes acknowledged between two SYNCHRONIZE CACHE arrivals form an
 * epoch; a SYNCHRONIZE CACHE (of the whole LUN, not IMMED, not swallowed
 * by flush = ignore) that ends GOOD makes durable every epoch closed by
 * its arrival (SBC-4: what completed before it was received).
 */
#ifndef TCQ_DURABILITY_H
#define TCQ_DURABILITY_H
#include <stdint.h>

struct lun;
struct tcq_task;

#define DURAB_PORTS 16	/* initiator ports counted apart; the rest as one */

struct durab_port {
	char port[256];		/* initiator port name; "" : the others */
	uint64_t bytes;
	double oldest_s;
};

struct durab_info {
	uint64_t bytes;		/* acknowledged, not yet durable */
	double oldest_s;	/* age of the oldest of them (0: none) */
	unsigned nports;
	struct durab_port ports[DURAB_PORTS + 1];
};

int durab_lun_init(struct lun *l);
void durab_lun_free(struct lun *l);
/* The data path (lun.c): a task arrived, a task ended. */
void durab_arrive(struct tcq_task *t);
void durab_done(struct tcq_task *t);
void durab_info(struct lun *l, struct durab_info *out);
#endif
