/*
 * A SCSI task as the transport-independent device server sees it. The
 * transport (target/cmd.c) embeds it in its own command struct, fills
 * the "in" fields, and gets it back through done() with the "out" fields
 * set; what follows them belongs to the device server, each part to the
 * module named on it. All calls for one task happen on one reactor
 * thread.
 */
#ifndef TCQ_TASK_H
#define TCQ_TASK_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/list.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"

#define TASK_CDB_MAX 260	/* 16 in the BHS + extended CDB AHS */

struct exec_rc;
struct lun;
struct opc_entry;
struct sbc_cut;
struct sdev;
struct taskset;
struct tcq_task;
struct reactor;

/* Decoded CDB: what cdb_decode() extracts for the executors. */
struct cdb_req {
	const struct opc_entry *cmd;	/* its command table row (NULL: the
					 * CDB did not decode) */
	uint8_t opcode;
	uint8_t sa;		/* service action, where the opcode has one */
	uint64_t lba;
	uint32_t blocks;	/* transfer length in logical blocks */
	uint32_t alloc_len;	/* allocation / parameter list length */
	bool fua, dpo, immed;
	uint8_t group;
	uint8_t flags;		/* opcode-specific bits (BYTCHK, UNMAP, ...) */
	uint32_t data_out_len;	/* bytes the CDB asks the initiator to send */
	uint32_t data_in_len;	/* bytes the CDB may return; after execution
				 * of an emulated command: bytes it returned
				 * (residuals are computed from this vs
				 * exp_len) */
	uint8_t control;	/* CONTROL byte (NACA) */
	uint8_t page, subpage;	/* INQUIRY / MODE SENSE page codes */
	uint16_t param_ptr;	/* LOG SENSE PARAMETER POINTER */
};

enum task_state {
	TASK_NEW,		/* decoded, not yet in the task set */
	TASK_DORMANT,		/* in the task set, held by ordering rules */
	TASK_WAIT_DATA,		/* enabled but Data-Out still arriving */
	TASK_RUNNING,		/* executing (emulation or backend I/O) */
	TASK_DONE,
};

/* The task set's part of a task (scsi/taskset.c). */
struct task_order {
	struct taskset *set;		/* NULL: answered outside a set */
	struct list_node node;		/* the set's order of arrival */
	uint8_t attr;			/* effective attribute (barrier policy) */
	bool blocked;			/* enabled, waits on an overlapping task */
	bool barrier_flush;		/* flush before this ORDERED write */
	bool aborting;			/* aborted while running: counted in
					 * the set's n_aborting until done */
	bool abort_report;		/* ends with TASK ABORTED (TAS=1) */
};

/* The executors' part: backend I/O and progress of multi-step commands
 * (scsi/sbc*.c, scsi/xcopy.c). */
struct task_exec {
	struct bdev_io io;
	uint32_t pending;		/* sub-I/Os outstanding */
	int error;
	uint8_t step;			/* flush, then write; read, then write */
	void *buf;			/* scratch buffer (bufpool), or NULL */
	uint32_t buf_len;
	uint64_t pos;			/* progress of a chunked command */
	struct sbc_cut *cut;		/* a cut-through read's pieces
					 * (scsi/sbc_cut.c), or NULL */
	/* The step a backend completion or a range grant runs next
	 * (sbc_step, scsi/sbc_priv.h). */
	struct exec_rc (*next)(struct tcq_task *t);
};

/* An LBA range lock held or waited for (scsi/sbc_lock.c). */
struct task_lock {
	uint8_t mode;			/* LK_* (scsi/sbc_priv.h), 0: none */
	uint64_t lo, hi;		/* locked blocks [lo, hi) */
	struct list_node node;		/* held or waiting list of the LUN */
	struct reactor *r;		/* where a waiting task resumes */
	void (*resume)(struct tcq_task *t);
};

struct tcq_task {
	/* ---- in: the transport's, set before lun_task_arrive() ---- */
	struct lun *lun;		/* NULL: LUN not configured */
	uint64_t lun_nr;		/* as addressed, for sense/logs */
	void *nexus;			/* I_T nexus identity (session) */
	struct sdev *dev;		/* for REPORT LUNS when lun is NULL */
	bool map_ro;			/* the nexus' LUN map makes lun
					 * read-only (scsi/sdev.h) */
	uint8_t cdb[TASK_CDB_MAX];
	uint16_t cdb_len;
	uint8_t attr;			/* TASK_ATTR_*; untagged = SIMPLE */
	uint32_t tag;			/* ITT */
	uint64_t sn;			/* arrival order (CmdSN, widened) */
	uint32_t exp_len;		/* expected data transfer length */
	bool dir_in, dir_out;		/* R and W bits */
	/* Data-Out buffer, owned by the transport, filled before data_ready.
	 * For Data-In the device server allocates buf (bufpool) if NULL. */
	void *buf;
	uint32_t buf_len;		/* allocated bytes */
	bool data_ready;		/* all Data-Out received */
	void (*done)(struct tcq_task *t);
	/* Cut-through reads (scsi/sbc_cut.c): the device server calls
	 * data_in_ready while the task runs, each time more of buf is read
	 * and final in order: buf[0, bytes) may be sent; never with the
	 * whole answer (that comes with done()), never after an abort.
	 * NULL: the answer at done() only. cut_seg: the transport's Data-In
	 * segment (bytes; 0: none), which sizes the pieces. */
	void (*data_in_ready)(struct tcq_task *t, uint32_t bytes);
	uint32_t cut_seg;
	/* A task sampled for the path breakdown (stats_path_sampled): when
	 * the reactor pass that read its command began; 0: not sampled. */
	uint64_t t_rx_ns;

	/* ---- out: the answer, read by the transport in done() ---- */
	uint8_t status;
	uint8_t sense_len;
	uint8_t sense[SENSE_BUF_MAX];
	uint32_t data_in_len;		/* valid bytes in buf to send */
	uint32_t spdtl;			/* when non-zero: the Data-Out length
					 * the CDB asked for, before it was cut
					 * to the expected length (residual) */
	/* The task was aborted (TMF); if status is not TASK ABORTED the
	 * transport sends no response for it. */
	bool aborted;
	/* The piece size a cut-through read is read in (0: read whole),
	 * set before the first data_in_ready: its Data-In PDUs are at most
	 * this, so each piece completes its own (scsi/sbc_cut.c). */
	uint32_t cut_piece;

	/* ---- the device server's own: the transport never reads these */
	struct cdb_req req;		/* decoded CDB, its command table row */
	enum task_state state;
	bool buf_owned;			/* buf came from bufpool via device server */
	bool qos_held;			/* held by QoS before its task set
					 * (scsi/qos.c; order.node is in
					 * its nexus' queue then) */
	uint64_t t_arrive_ns;		/* for latency statistics */
	/* Path stamps of a sampled task (t_rx_ns set), 0 until reached:
	 * first backend I/O submitted, status final (the pass that reaped
	 * the last I/O is exec.io.end_ns). */
	uint64_t t_submit_ns, t_status_ns;
	struct task_order order;
	struct task_exec exec;
	struct task_lock lock;
	/* The crash lab's recorder (scsi/record.c): the task's number in
	 * its LUN's recording (0: not recorded), and in another LUN's that
	 * an EXTENDED COPY writes to. */
	uint64_t rec_task, rec_xtask;
	struct lun *rec_xlun;
	bool rec_armed;		/* arrived while its LUN recorded */
	/* The durability audit's (scsi/durability.c): the epochs a
	 * SYNCHRONIZE CACHE makes durable when it ends. */
	uint64_t durab_epoch;
};
#endif
