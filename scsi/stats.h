/*
 * Per-LUN statistics for tcqctl. Every reactor thread owns one slot per
 * LUN and is its only writer, so the data path takes no lock and shares no
 * cache line; readers (the control socket) sum the slots with relaxed
 * loads. Values are "since start or the last reset".
 *
 * Histograms are log-linear: exact below 32, then 16 buckets per power of
 * two (at most 6 % relative error), covering all of uint64_t.
 */
#ifndef TCQ_STATS_H
#define TCQ_STATS_H
#include <stdbool.h>
#include <stdint.h>

struct lun;
struct tcq_task;

#define STATS_HIST_SUB_BITS 4
#define STATS_HIST_SUB (1u << STATS_HIST_SUB_BITS)
#define STATS_HIST_BUCKETS ((64 - STATS_HIST_SUB_BITS + 1) * STATS_HIST_SUB)
#define STATS_MAX_SLOTS 64	/* one per reactor (CFG_MAX_THREADS) */

struct stats_hist {
	uint64_t b[STATS_HIST_BUCKETS];
};

/* Index 0: SIMPLE (and untagged), 1: ORDERED, 2: HEAD OF QUEUE, 3: ACA. */
#define STATS_NATTR 4
/* Commands by what their command table row does to the medium (enum
 * cdb_access): 0 other (no medium access, or a CDB that did not decode),
 * 1 read, 2 write. */
#define STATS_NCLASS 3
/* CHECK CONDITION by sense key (SPC-4 4.5.6: 0h..Fh). */
#define STATS_NSENSE 16

/* The path of a sampled command, in stages (stats_path_stage_name).
 * Commands without backend I/O count to submit .. to status as one
 * "to status". */
enum stats_path_stage {
	STATS_PATH_IN,		/* the pass that read the command began .. the
				 * device server has it */
	STATS_PATH_TO_SUBMIT,	/* .. its first backend I/O: decode, task set,
				 * ordering, Data-Out */
	STATS_PATH_BACKEND,	/* .. the pass that reaped its last I/O began:
				 * the device and the wake-up */
	STATS_PATH_TO_STATUS,	/* .. status final */
	STATS_PATH_OUT,		/* .. the last byte of its answer left in
				 * sendmsg */
	STATS_NPATH
};
/* One command in this many (by CmdSN) is sampled. */
#define STATS_PATH_EVERY 16

struct stats_counters {
	uint64_t cmds[STATS_NATTR];	/* tasks that arrived, by attribute */
	uint64_t completed;		/* tasks completed by the device server */
	uint64_t ios;			/* backend I/Os submitted */
	uint64_t flushes;		/* of those, cache flushes */
	uint64_t barrier_flushes;	/* flushes before ORDERED writes */
	uint64_t ordered_enabled;	/* ORDERED tasks that left draining */
	uint64_t drain_ns_total;	/* their summed time from arrival */
	uint64_t drain_ns_max;
	uint64_t lat_ns_total;		/* summed latency of completed tasks */
	uint64_t cls[STATS_NCLASS];	/* tasks that arrived, by class */
	/* Data moved by medium commands that completed GOOD: Data-In of the
	 * read class, Data-Out of the write class. */
	uint64_t read_bytes, write_bytes;
	uint64_t sense[STATS_NSENSE];	/* CHECK CONDITION, by sense key */
	uint64_t path_samples;		/* sampled commands answered */
	uint64_t path_io_samples;	/* of those, with backend I/O */
	uint64_t path_ns[STATS_NPATH];	/* their summed time per stage */
};

/* One reactor's share; written only by that reactor's thread. */
struct stats_slot {
	struct stats_counters c;
	struct stats_hist lat;		/* ns, arrival to completion */
	struct stats_hist occ;		/* the LUN's I/Os in flight (over every
					 * reactor) at each submit */
	struct stats_hist drain;	/* ns, ORDERED arrival to enabled */
} __attribute__((aligned(64)));

struct lun_stats {
	struct stats_slot *slot[STATS_MAX_SLOTS];	/* made on first use */
};

/* A summed view (what tcqctl shows). */
struct stats_snapshot {
	struct stats_counters c;
	uint64_t inflight;		/* the LUN's backend I/O in flight now,
					 * over every reactor */
	uint64_t peak_inflight;		/* the most at once since reset (never
					 * below inflight) */
	struct stats_hist lat, occ, drain;
};

struct lun_stats *stats_new(void);
void stats_free(struct lun_stats *s);

/* ---- histograms ---- */
unsigned stats_hist_bucket(uint64_t v);
/* Smallest and largest value that fall in bucket i. */
uint64_t stats_hist_lo(unsigned i);
uint64_t stats_hist_hi(unsigned i);
uint64_t stats_hist_count(const struct stats_hist *h);
/* The value below which a fraction q (0..1) of the samples lie, as the
 * midpoint of its bucket; 0 for an empty histogram. */
uint64_t stats_hist_quantile(const struct stats_hist *h, double q);

/* ---- data-path hooks (no-ops off a reactor or without stats) ---- */
/* A task addressed to l arrives: stamps t->t_arrive_ns, counts it. */
void stats_task_arrive(struct lun *l, struct tcq_task *t);
/* The device server completes t of l (status final). */
void stats_task_done(struct lun *l, struct tcq_task *t);
/* An ORDERED task (effective attribute) of l is enabled. */
void stats_ordered_enabled(struct lun *l, const struct tcq_task *t);
/* Before bdev_submit of an I/O of l: counts it, flushes, and the LUN's
 * occupancy (the backend keeps in flight and peak: bdev_depth_counts). */
void stats_io_submit(struct lun *l, int op, bool barrier);

/* Whether the command of CmdSN sn is sampled for the path breakdown
 * (the transport then stamps t->t_rx_ns). */
static inline bool stats_path_sampled(uint32_t sn)
{
	return sn % STATS_PATH_EVERY == 0;
}
/* The first backend I/O of t is submitted. */
void stats_path_submit(struct tcq_task *t);
/* The transport has sent the last byte of t's answer: a sampled task's
 * stages are counted. */
void stats_task_sent(struct tcq_task *t);

/* ---- names (tcqctl's JSON keys, Prometheus label values) ---- */
/* "simple", "ordered", "head_of_queue", "aca". */
const char *stats_attr_name(unsigned i);
/* "transport_in", "to_submit", "backend", "to_status",
 * "transport_out". */
const char *stats_path_stage_name(unsigned i);
/* "other", "read", "write". */
const char *stats_class_name(unsigned i);
/* SPC-4 table 28 in snake case: "no_sense" .. "completed". */
const char *stats_sense_key_name(unsigned key);

/* ---- readers ---- */
/* Sums every slot of l (and reads the backend's in-flight counts) with
 * relaxed loads: any thread may call it while the reactors count; each
 * value is one that was written (never torn), and values of one snapshot
 * may be a few commands apart. */
void stats_snapshot(const struct lun *l, struct stats_snapshot *out);
/* Zeroes the calling reactor's slot of l's statistics (its owner thread
 * only), and starts l's peak in flight again from what is in flight. */
void stats_reset_local(struct lun *l);
#endif
