/*
 * Logical units and the device server entry points. The transport calls
 * lun_task_arrive() for each command in CmdSN order (the task joins the
 * task set at once, even if its Data-Out is still coming), then
 * lun_task_data_ready() once the write data is in the buffer. done() is
 * called exactly once per task, on the same thread.
 */
#ifndef TCQ_LUN_H
#define TCQ_LUN_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "scsi/task.h"

struct reactor;

struct sdev;
struct sbc_lun;
struct thin_lun;
struct pr_state;
struct lun_stats;
struct alua_cfg;
struct recorder;
struct durab;
struct qos;
struct mmc_lun;

/* Barrier policy for ORDERED tasks (DESIGN.md, Principles). */
enum lun_barrier {
	BARRIER_DRAIN,		/* SAM: wait for older tasks, hold newer ones */
	BARRIER_FLUSH,		/* drain plus a cache flush and FUA write */
	BARRIER_IGNORE,		/* treat ORDERED as SIMPLE */
};

struct lun {
	uint64_t id;
	struct sdev *dev;	/* the device it belongs to; NULL in tests */
	struct bdev *bdev;
	uint32_t block_size;
	uint64_t nblocks;
	bool read_only;
	bool write_cache;	/* WCE; off: every write is FUA */
	char vendor[9], product[17], revision[5];
	char serial[33];
	uint8_t naa[16];	/* NAA IEEE Registered Extended (6h) designator */
	uint16_t rel_port_id;	/* relative target port identifier */
	uint16_t tpg_id;	/* target port group */
	/* ALUA (scsi/alua.c): the target's groups (NULL: just this port's
	 * group), and the access state of this port's group. */
	const struct alua_cfg *alua;
	uint8_t alua_state;	/* enum alua_state; 0 active/optimized */
	pthread_mutex_t lock;	/* LUN-wide state: unit attentions, mode pages */
	struct list_node nexuses;	/* the task sets of its I_T nexuses
					 * (taskset.nexus_node), under lock */
	struct pr_state *pr;	/* reservations (scsi/pr.c), under lock */
	int resv_active;	/* atomic: a PR or RESERVE(6/10) reservation
				 * exists; 0 lets commands skip the check */
	/* LUN state shared with other gateways (backend/lun_store.h), or
	 * NULL: kept in this process. Closed by lun_destroy. */
	struct lun_store *store;
	uint8_t d_sense;	/* control page D_SENSE */
	uint8_t qam;		/* control page queue algorithm modifier */
	uint8_t qerr;
	uint8_t tas;		/* control page TAS */
	bool swp;		/* control page software write protect */
	bool lbpere;		/* read-write error recovery page LBPERE:
				 * soft threshold notification enabled */
	bool removable;		/* INQUIRY RMB */
	enum lun_barrier barrier; /* what an ORDERED task costs */
	bool write_cache_default;
	bool tas_default;	/* [lun] tas: the default page's TAS */
	/* SBC state (scsi/sbc_*.c): */
	bool sanitize_ok;	/* [lun] sanitize = yes: SANITIZE allowed */
	uint8_t lbppbe;		/* log2(physical / logical block size),
				 * READ CAPACITY(16) */
	struct sbc_lun *sbc;	/* range locks, medium state, copy results */
	struct mmc_lun *mmc;	/* type cdrom: the MMC device (scsi/mmc.h);
				 * NULL: a block device */
	struct thin_lun *thin;	/* scsi/thin.c: resource counts and the
				 * soft threshold; NULL: not thin, or the
				 * backend cannot tell its allocation */
	bool thin_warn;		/* it has a soft threshold: completed writes
				 * arm its check (scsi/taskset.c) */
	struct lun_stats *stats;	/* scsi/stats.c: per-reactor counters */
	/* The crash lab (scsi/record.c): its recorder, and whether it
	 * records now (read by the data path without a lock). */
	struct recorder *rec;
	struct durab *durab;	/* scsi/durability.c */
	bool recording;
	bool held;		/* lun_hold: no task starts */
	/* A device that lies (lun_get_*): SYNCHRONIZE CACHE completes
	 * without a flush, FUA is not passed on. */
	bool flush_ignore, fua_ignore;
	/* [lun] cut_through = off: a large READ is read whole before its
	 * Data-In (scsi/sbc_cut.c); changed live, read relaxed. */
	bool cut_off;
	struct qos *qos;	/* scsi/qos.c: limits, held commands */
	/* ODX tokens of its data now live (scsi/odx_store.c; atomic): 0
	 * lets a write skip the token registry. */
	unsigned odx_live;
};

/*
 * barrier and write_cache change live (tcqctl set) while reactors read
 * them: the data path reads them through these (relaxed atomics; a task
 * sees the old or the new value, never a torn one).
 */
static inline enum lun_barrier lun_get_barrier(const struct lun *l)
{
	return __atomic_load_n(&l->barrier, __ATOMIC_RELAXED);
}
static inline void lun_set_barrier(struct lun *l, enum lun_barrier b)
{
	__atomic_store_n(&l->barrier, b, __ATOMIC_RELAXED);
}
static inline bool lun_get_write_cache(const struct lun *l)
{
	return __atomic_load_n(&l->write_cache, __ATOMIC_RELAXED);
}
static inline void lun_set_write_cache(struct lun *l, bool on)
{
	__atomic_store_n(&l->write_cache, on, __ATOMIC_RELAXED);
}
static inline bool lun_get_flush_ignore(const struct lun *l)
{
	return __atomic_load_n(&l->flush_ignore, __ATOMIC_RELAXED);
}
static inline bool lun_get_fua_ignore(const struct lun *l)
{
	return __atomic_load_n(&l->fua_ignore, __ATOMIC_RELAXED);
}
static inline bool lun_get_cut_off(const struct lun *l)
{
	return __atomic_load_n(&l->cut_off, __ATOMIC_RELAXED);
}
static inline void lun_set_cut_off(struct lun *l, bool off)
{
	__atomic_store_n(&l->cut_off, off, __ATOMIC_RELAXED);
}
static inline bool lun_recording(const struct lun *l)
{
	return __atomic_load_n(&l->recording, __ATOMIC_RELAXED);
}
static inline bool lun_held(const struct lun *l)
{
	return __atomic_load_n(&l->held, __ATOMIC_ACQUIRE);
}
/* Whether t may not modify its LUN's medium: a read-only LUN, software
 * write protect, or an initiator's LUN map that makes it read-only. */
static inline bool lun_write_protected(const struct tcq_task *t)
{
	return t->lun->read_only || t->lun->swp || t->map_ro;
}

/* What a logical unit is made of (a [lun] section of tcqd.conf). */
struct lun_params {
	struct sdev *dev;	/* its device: name, state_dir, port groups */
	uint64_t id;
	struct bdev *bdev;	/* opened; borrowed (whoever opened it
				 * closes it, after lun_destroy); NULL: no
				 * medium (unit tests) */
	const char *serial;	/* NULL or "": from the device name and id */
	/* INQUIRY identity (lun_set_identity); NULL or "": the default */
	const char *vendor, *product, *revision;
	bool write_cache;	/* WCE (never where the backend has no cache) */
	enum lun_barrier barrier;
	uint8_t qam;
	bool tas;		/* control page TAS, current and default */
	bool read_only, removable, sanitize;
	bool cdrom;		/* an MMC device (scsi/mmc.h): read-only,
				 * removable, 2048-byte blocks; bdev NULL:
				 * no medium */
	uint32_t phys_block_size;	/* 0: the logical one */
	int thin;		/* 0 or 1; -1: the backend's choice */
	unsigned thin_threshold;	/* soft threshold, percent; 0: none */
	bool local_state;	/* reservations kept in this process even
				 * where the medium is shared */
	bool flush_ignore, fua_ignore;	/* a device that lies */
	bool cut_off;		/* cut_through = off (scsi/sbc_cut.c) */
	uint32_t qos_iops, qos_mbps;	/* QoS limits (scsi/qos.h); 0: none */
	const char *record_path;	/* record from the start (crash lab) */
	uint64_t record_max;		/* its bytes at most (0: default) */
};

/* The defaults of a [lun] (WCE on, drain barrier, QAM 0, thin as the
 * backend says) for dev, id, b. */
void lun_params_default(struct lun_params *p, struct sdev *dev, uint64_t id,
			struct bdev *b);
/*
 * Creates the LUN p describes, whole: identity (serial and NAA from the
 * names, or the serial given), mode settings, ALUA state from the
 * device's port groups, thin provisioning, and its reservations: shared
 * with the other gateways of its medium when the backend says it is
 * shared (bdev_shared_state), else the ones kept with APTPL in the
 * device's state_dir. NULL with a message naming what failed. The caller
 * puts it in the device's LUN map.
 */
struct lun *lun_create(const struct lun_params *p, char *err, size_t errlen);
void lun_destroy(struct lun *l);
/* Sets the unit serial number (at most 32 characters) and derives the NAA
 * designator from it: gateways configured with one serial report one
 * logical unit whatever their names. */
void lun_set_serial(struct lun *l, const char *serial);
/*
 * Sets the INQUIRY identity: vendor (8 characters at most), product (16),
 * revision (4); NULL or "" keeps that field's default (TCQ, tcq disk, the
 * version's digits). Taken under the LUN's lock, as lun_identity reads
 * it. True when a field changed: the caller raises INQUIRY DATA HAS
 * CHANGED for every nexus (SPC-4 5.14) on a LUN already serving.
 */
bool lun_set_identity(struct lun *l, const char *vendor, const char *product,
		      const char *revision);
/* The features that pick l's rows of the command table (OPC_FEAT_*:
 * thin, sanitize, the MMC device's table); 0 for no LUN. */
unsigned lun_opc_features(const struct lun *l);
/*
 * The mode page fields a [lun] key sets (write_cache, tas), current value
 * and default, under the lock MODE SELECT takes; 0 or 1, or -1 to keep
 * that field.
 * True when a current value changed: the caller raises MODE PARAMETERS
 * CHANGED for every nexus (SPC-4 5.14).
 */
bool lun_set_mode_keys(struct lun *l, int wce, int tas);
/* A consistent copy of the identity (for INQUIRY and its VPD pages). */
void lun_identity(const struct lun *l, char vendor[9], char product[17],
		  char revision[5]);

/*
 * LOGICAL UNIT RESET side effects on LUN-wide state (SAM-5 6.3.3), made
 * by scsi/tmf.c before it aborts the tasks: unit attentions for every I_T
 * nexus, SPC-2 reservation released, PREVENT ended.
 */
void lun_reset(struct lun *l);

/* The medium's size changed (a resized backend): publishes nblocks and
 * gives every I_T nexus CAPACITY DATA HAS CHANGED. */
void lun_capacity_changed(struct lun *l, uint64_t nblocks);

/*
 * Task entry points (see the header comment). Tasks addressed to a missing
 * LUN (t->lun == NULL) are answered by lun_task_arrive too: REPORT LUNS,
 * INQUIRY (PQ 3) and REQUEST SENSE work, anything else gets ILLEGAL
 * REQUEST, LOGICAL UNIT NOT SUPPORTED.
 *
 * lun_task_arrive returns true when the task wants Data-Out (the transport
 * then receives it and calls lun_task_data_ready); false when it needs no
 * data or was already completed (e.g. a bad CDB).
 */
bool lun_task_arrive(struct taskset *ts, struct tcq_task *t);
/* Makes a zeroed t ready for lun_task_arrive (a command the transport
 * just got; lun_task_arrive sets the rest of the device server's part). */
static inline void lun_task_init(struct tcq_task *t)
{
	list_init(&t->order.node);
	list_init(&t->lock.node);
}
void lun_task_data_ready(struct tcq_task *t);
/* The transport is done with t (response sent or task dropped): frees the
 * Data-In buffer if the device server allocated it. */
void lun_task_release(struct tcq_task *t);
/* Aborts t (ABORT TASK, a broken Data-Out sequence): true when t was in a
 * task set and not yet done (done() runs as the abort completes it);
 * false when it is not there (the transport answers it itself). */
bool lun_task_abort(struct tcq_task *t);
/* Once t is done: the length its CDB asked to move (SPDTL), which the
 * transport compares with the expected length for the residual; a failed
 * read that returned nothing moved nothing. */
uint32_t lun_task_spdtl(const struct tcq_task *t);

/* An I_T nexus joins l (its first command to l): its task set, one per
 * nexus per LUN (TST=001b, so ordering needs no lock), with the unit
 * attention a new nexus gets. NULL when out of memory. */
struct taskset *lun_nexus_join(struct lun *l, struct reactor *r, void *nexus);
/* The nexus leaves l (logout, lost connection): it leaves the LUN's
 * lists, its RESERVE(6/10) reservation and PREVENT MEDIUM REMOVAL end,
 * and its task set is freed. The caller has aborted or drained the
 * tasks. */
void lun_nexus_leave(struct taskset *ts);
/* The nexus is lost (its connection ended): every task of its set on
 * the LUN is aborted, without status; on the set's reactor. */
void lun_nexus_abort(struct taskset *ts);
/* Tasks in the task sets of every nexus of l now (a snapshot taken from
 * any thread: the sets' reactors keep changing it). */
unsigned lun_tasks(struct lun *l);
/*
 * Holds l still: no task starts from now on (they wait in their task
 * sets); lun_running tells when those running are done. lun_release lets
 * the waiting ones go, on every nexus' reactor.
 */
void lun_hold(struct lun *l);
void lun_release(struct lun *l);
/* Tasks of l running now, over every nexus (any thread). */
unsigned lun_running(struct lun *l);
/* The task set of nexus on l, or NULL; l->lock held by the caller. */
struct taskset *lun_nexus_find_locked(struct lun *l, const void *nexus);
#endif
