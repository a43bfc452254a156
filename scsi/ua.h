/*
 * Unit attention conditions (SAM-5 5.14, SPC-4 4.5.6), per I_T nexus per
 * LUN. Each nexus (its task set) keeps a small FIFO of pending additional
 * sense codes under lun->lock, mirrored by an atomic flag so that the
 * common case (nothing pending) costs one load at command arrival.
 *
 * Reporting: the rows of the command table with OPC_F_UA_OK run
 * normally: INQUIRY and REPORT LUNS leave the UA, REQUEST SENSE returns
 * it as its parameter data and clears it; any other command ends in
 * CHECK CONDITION, UNIT ATTENTION and clears it.
 */
#ifndef TCQ_UA_H
#define TCQ_UA_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/sense.h"
#include "scsi/taskset.h"

struct lun;
struct tcq_task;

#define UA_QUEUE_MAX 8	/* sizeof(taskset.ua_q) / 2 */

/* A new nexus joined the LUN (lun_nexus_join, lun->lock held): queues
 * POWER ON, RESET (its first command reports it). ua_detach_locked drops
 * what is pending when it leaves. */
void ua_attach_locked(struct taskset *ts);
void ua_detach_locked(struct taskset *ts);

static inline bool ua_pending(const struct taskset *ts)
{
	return __atomic_load_n(&ts->ua_pending, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Arrival check for t (call only when ua_pending(ts)), after its CDB was
 * decoded: when t's row (or its opcode's, for a CDB that did not decode)
 * lacks OPC_F_UA_OK, puts t in CHECK CONDITION with the oldest UA, clears
 * it and returns true.
 */
bool ua_check(struct taskset *ts, struct tcq_task *t);

/* Takes the oldest pending UA into *si (REQUEST SENSE); false: none. */
bool ua_take(struct taskset *ts, struct sense_info *si);

/* Queues asc (ASC << 8 | ASCQ) for one nexus. The _locked forms expect
 * lun->lock held. A code already queued is not queued twice. */
void ua_establish(struct taskset *ts, uint16_t asc);
void ua_establish_locked(struct taskset *ts, uint16_t asc);

/*
 * Queues asc for every nexus of l (LUN RESET: ASC_BUS_DEVICE_RESET,
 * CAPACITY DATA HAS CHANGED, ...). A reset code (ASC 29h) also releases
 * an SPC-2 RESERVE(6/10) reservation, as a reset does (SPC-4 5.13.1), and
 * first drops what is pending, which the reset supersedes.
 */
void ua_establish_all(struct lun *l, uint16_t asc);
/* ... for every nexus except the one given (MODE PARAMETERS CHANGED). */
void ua_establish_others(struct lun *l, const void *nexus, uint16_t asc);

/* For PR: visits every nexus of l under lun->lock (held by the caller). */
typedef bool (*ua_match_fn)(const struct taskset *ts, void *arg);
void ua_establish_match_locked(struct lun *l, ua_match_fn match, void *arg,
			       uint16_t asc);
/* Drops the pending unit attentions asc of nexus on l (REPORT LUNS
 * clears REPORTED LUNS DATA HAS CHANGED). */
void ua_clear_nexus(struct lun *l, const void *nexus, uint16_t asc);
#endif
