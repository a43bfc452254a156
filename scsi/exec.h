/*
 * The executors' contract (the command table's exec, scsi/opcodes.h), as
 * LIO's executors return a sense_reason_t and its core completes the
 * command with it.
 *
 * An executor returns a struct exec_rc by value:
 *  - EXEC_OK: accepted. The task is the executor's: it has completed it
 *    (exec_good) or will, from a backend completion, a range lock grant
 *    or the reservation store's worker. It must not touch t after it let
 *    go of it, nor return anything but EXEC_OK then.
 *  - a failure (exec_failed): the task is not completed; lun_execute
 *    completes it once, with that status and sense (exec_fail), releasing
 *    the range lock and scratch buffer the executor may have taken.
 * The steps that run later (after a backend I/O or a lock grant) keep
 * the same contract: they return their failure and the one place that
 * called them (sbc_continue, scsi/sbc.c) completes it with exec_fail.
 * Work that ends on its own later (the SANITIZE a LUN runs, PR IN after
 * the reservation store's worker) completes the task the same way; only
 * the worker, off the task's reactor, leaves its answer in the task
 * (exec_set) for the reactor to complete (exec_finish).
 */
#ifndef TCQ_EXEC_H
#define TCQ_EXEC_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/scsi_proto.h"
#include "scsi/sense.h"

struct tcq_task;

struct exec_rc {
	/* SAM_STAT_GOOD: no failure (EXEC_OK). Else the status the task
	 * fails with: CHECK CONDITION with si, or RESERVATION CONFLICT
	 * (no sense data). */
	uint8_t status;
	struct sense_info si;
};

#define EXEC_OK ((struct exec_rc){ .status = SAM_STAT_GOOD })

static inline bool exec_failed(struct exec_rc rc)
{
	return rc.status != SAM_STAT_GOOD;
}

/* CHECK CONDITION with sense key and ASC/ASCQ (asc: ASC << 8 | ASCQ). */
static inline struct exec_rc exec_sense(uint8_t key, uint16_t asc)
{
	return (struct exec_rc){ .status = SAM_STAT_CHECK_CONDITION,
				 .si = { .key = key, .asc = asc, .bit = -1 } };
}

/* ... with the INFORMATION field (the LBA or offset SBC asks for). */
static inline struct exec_rc exec_sense_info(uint8_t key, uint16_t asc,
					     uint64_t info)
{
	struct exec_rc rc = exec_sense(key, asc);

	rc.si.info_valid = true;
	rc.si.info = info;
	return rc;
}

/* ILLEGAL REQUEST with asc and a field pointer into the CDB (cdb) or the
 * parameter list, at byte and bit (bit < 0: the whole byte). */
static inline struct exec_rc exec_field(uint16_t asc, bool cdb,
					uint16_t byte, int bit)
{
	struct exec_rc rc = { .status = SAM_STAT_CHECK_CONDITION };

	sense_field_info(&rc.si, asc, cdb, byte, bit);
	return rc;
}

/* INVALID FIELD IN CDB, INVALID FIELD IN PARAMETER LIST at byte, bit. */
static inline struct exec_rc exec_cdb_field(uint16_t byte, int bit)
{
	return exec_field(ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

static inline struct exec_rc exec_param_field(uint16_t byte, int bit)
{
	return exec_field(ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte,
			  bit);
}

/* The sense a check reported in a struct sense_info (cdb_check_range,
 * opc_encode_one, ...). */
static inline struct exec_rc exec_si(const struct sense_info *si)
{
	return (struct exec_rc){ .status = SAM_STAT_CHECK_CONDITION,
				 .si = *si };
}

/* HARDWARE ERROR, INTERNAL TARGET FAILURE: out of memory, no queue. */
static inline struct exec_rc exec_target_failure(void)
{
	return exec_sense(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
}

/* RESERVATION CONFLICT status. */
static inline struct exec_rc exec_conflict(void)
{
	return (struct exec_rc){ .status = SAM_STAT_RESERVATION_CONFLICT };
}

/* Completes t with the status it holds, after releasing its range lock
 * and scratch buffer (struct task_lock, task_exec.buf). */
void exec_finish(struct tcq_task *t);
/* Completes t with GOOD status; returns EXEC_OK, for "return
 * exec_good(t);" at the end of an executor or step. */
struct exec_rc exec_good(struct tcq_task *t);
/* Puts rc's failure (status, sense data in the LUN's format) in t
 * without completing it: for an answer made off t's reactor, completed
 * there later with exec_finish (the reservation store's worker). */
void exec_set(struct tcq_task *t, struct exec_rc rc);
/* The one way a failure completes a task: exec_set, then exec_finish.
 * lun_execute calls it for what an executor returns; asynchronous steps
 * for what they return (sbc_continue). */
void exec_fail(struct tcq_task *t, struct exec_rc rc);
#endif
