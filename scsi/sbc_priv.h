/*
 * Shared between the SBC executors (scsi/sbc*.c, scsi/xcopy.c): LUN-wide
 * SBC state, the LBA range lock, and the steps of multi-step commands.
 */
#ifndef TCQ_SBC_PRIV_H
#define TCQ_SBC_PRIV_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "tcq/list.h"
#include "backend/bdev.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/task.h"

/* Limits reported in the Block Limits VPD page and enforced here. */
#define SBC_MAX_CAW_BLOCKS 255		/* MAXIMUM COMPARE AND WRITE LENGTH */
#define SBC_MAX_WS_BLOCKS 65535u	/* MAXIMUM WRITE SAME LENGTH */
#define SBC_MAX_ATOMIC_BLOCKS 2048u	/* MAXIMUM ATOMIC TRANSFER LENGTH */
#define SBC_ATOMIC_ALIGN 1u
#define SBC_ATOMIC_GRAN 1u
#define SBC_WS_CHUNK (1u << 20)		/* bytes written per WRITE SAME step */
#define SBC_XC_RESULTS 16		/* copy results held per LUN */

/* task_lock.mode values. */
enum { LK_NONE, LK_FAST, LK_SHARED, LK_EXCL };

/*
 * LUN-wide SBC state. LUNs are shared by every reactor thread, so the
 * lists are guarded by lun->lock; plain writes normally take no lock: they
 * count themselves in wr_fast and only look at the lists when an
 * exclusive holder exists (excl != 0).
 */
struct sbc_lun {
	_Atomic uint32_t wr_fast;	/* plain writes in flight, lock-free */
	_Atomic uint32_t excl;		/* exclusive holders and waiters */
	struct list_node held;		/* tasks holding a range */
	struct list_node waiting;	/* tasks waiting for a range */
	struct list_node draining;	/* exclusive holders waiting for
					 * wr_fast to drain */
	/* removable medium (guarded by lun->lock) */
	bool ejected;
	bool sanitizing;		/* SANITIZE running: NOT READY */
	/* The SANITIZE running in the background (scsi/sbc_sanitize.c):
	 * it belongs to the LUN, not to the task that started it, so it
	 * outlives an abort, a reset or the loss of the I_T nexus. */
	struct sbc_san {
		struct lun *l;
		struct tcq_task *t;	/* waits for the end (no IMMED) */
		struct bdev_io io;
		enum bdev_op op;
		unsigned passes_left;	/* OVERWRITE passes after this one */
		bool invert;		/* flip the pattern between passes */
		bool in_kick, again;	/* runs synchronous completions
					 * in a loop, not recursively */
		void *buf;		/* pattern chunk (OVERWRITE) */
		uint64_t chunk;		/* bytes per I/O */
		uint64_t off, end;	/* bytes, this pass */
		_Atomic uint64_t done, total;	/* progress, in bytes */
	} san;
	unsigned nprevent;		/* nexuses holding PREVENT */
	void **prevent;			/* those nexuses */
	unsigned prevent_cap;
	/* EXTENDED COPY results held for RECEIVE COPY RESULTS, per I_T
	 * nexus and list identifier (guarded by lun->lock) */
	struct sbc_xc_result {
		void *nexus;		/* NULL: slot free */
		uint8_t list_id;
		uint8_t status;		/* COPY MANAGER STATUS */
		uint16_t segs;		/* SEGMENTS PROCESSED */
		uint64_t bytes;		/* transferred */
	} xc[SBC_XC_RESULTS];
	unsigned xc_next;		/* slot to reuse next */
};

struct sbc_lun *sbc_lun_new(void);
void sbc_lun_free(struct sbc_lun *s);

/*
 * Range lock. Returns 0 when t holds [lba, lba+blocks) now, 1 when t was
 * queued: resume(t) then runs on t's reactor once granted. Plain writes
 * (excl false) only wait for exclusive holders; exclusive ones (COMPARE
 * AND WRITE, ORWRITE, WRITE ATOMIC) wait for every overlapping writer.
 */
int sbc_lock(struct tcq_task *t, uint64_t lba, uint64_t blocks, bool excl,
	     void (*resume)(struct tcq_task *t));
void sbc_unlock(struct tcq_task *t);

/* A write of t goes with FUA: the CDB asks for it (unless fua = ignore:
 * a device that lies), or the write cache is off. */
static inline bool sbc_fua(const struct tcq_task *t)
{
	return (t->req.fua && !lun_get_fua_ignore(t->lun)) ||
	       !lun_get_write_cache(t->lun);
}
/*
 * The steps of a multi-step command (after a backend I/O, once a range
 * is granted) run on t's reactor and keep the executors' contract
 * (scsi/exec.h): EXEC_OK when they have t (completed, or handed to the
 * next step), else the failure sbc_continue completes t with. They are
 * called in place when nothing has to wait, so a step's answer may also
 * be its executor's.
 */
typedef struct exec_rc sbc_step(struct tcq_task *t);

/* Takes [lba, lba+blocks) (sbc_lock) and runs run(t): now, returning its
 * answer, or once granted (EXEC_OK now). */
struct exec_rc sbc_lock_then(struct tcq_task *t, uint64_t lba,
			     uint64_t blocks, bool excl, sbc_step *run);

/* The shared start of the writing commands: access checks, zero blocks
 * answered GOOD, the Data-Out buffer present, the range lock taken
 * (excl: COMPARE AND WRITE-like), then run(t), now or once granted. */
struct exec_rc sbc_write_run(struct tcq_task *t, bool excl, sbc_step *run);

/* Common checks of media access commands: write protect, transfer
 * length limit (pointing at the row's length field), LBA range. */
struct exec_rc sbc_check_access(const struct tcq_task *t, bool write);
/* Every I/O a task sends starts here, so none forgets a field a layer
 * below reads (a cut READ's pieces once lost their submitter, and cfq
 * its queues): io becomes op over [off, off+len) with buf, completing t
 * through sbc_io_done, flags 0, sent by t's I_T nexus, a whole command.
 * The caller then sets what differs: flags, the optional operations'
 * operands, a piece's own done, ctx and command. */
void sbc_io_prepare(struct bdev_io *io, struct tcq_task *t, enum bdev_op op,
		    uint64_t off, uint64_t len, void *buf);
/* One backend I/O through t->exec.io; done(t) runs once it completed
 * (t->exec.io holds the result). A failure: nothing was submitted. */
struct exec_rc sbc_submit(struct tcq_task *t, enum bdev_op op,
			  unsigned flags, uint64_t off, uint64_t len,
			  void *buf, sbc_step *done);
/* The backend completion of t->exec.io (io->ctx: t): runs the step in
 * t->exec.next (scsi/xcopy.c submits its I/O to other LUNs itself). */
void sbc_io_done(struct bdev_io *io);
/* Cut-through reads (scsi/sbc_cut.c): the piece size a READ of len
 * bytes into its own buffer is read in, max(min(the transport's segment,
 * len / 2), 64K) in blocks, or 0 when it is read whole (no transport
 * callback, cut_through = off, fewer than two pieces). */
uint32_t sbc_cut_piece(const struct tcq_task *t, uint64_t len);
/* Reads [off, off+len) into t->buf as pieces of piece bytes, all
 * submitted now, offering the transport each gain of bytes read in order;
 * t completes after the last with want bytes of Data-In, or MEDIUM ERROR
 * at the first failed piece. A failure: nothing was submitted. */
struct exec_rc sbc_read_cut(struct tcq_task *t, uint32_t piece, uint64_t off,
			    uint64_t len, uint32_t want);
/* A scratch buffer of len bytes in t->exec.buf; the failure if none
 * (exec_finish frees it). */
struct exec_rc sbc_xbuf(struct tcq_task *t, uint64_t len);
/* Thin provisioned: UNMAP and WRITE SAME with UNMAP deallocate. */
bool sbc_thin(const struct tcq_task *t);
/* COMPARE AND WRITE: whether the backend runs it as one atomic operation
 * of its own (atomic for every gateway of a shared medium: rbd), and the
 * MAXIMUM COMPARE AND WRITE LENGTH the LUN reports (then the backend's
 * limit, else SBC_MAX_CAW_BLOCKS under the LUN's range lock). */
bool sbc_caw_native(const struct lun *l);
uint32_t sbc_caw_max_blocks(const struct lun *l);
#endif
