/* SPC-4 primary commands, emulated: they complete before returning
 * (scsi/exec.h). */
#ifndef TCQ_SPC_H
#define TCQ_SPC_H
#include <stdint.h>
#include "scsi/exec.h"
#include "scsi/task.h"

struct exec_rc spc_test_unit_ready(struct tcq_task *t);
struct exec_rc spc_inquiry(struct tcq_task *t);
struct exec_rc spc_request_sense(struct tcq_task *t);
struct exec_rc spc_report_luns(struct tcq_task *t);
struct exec_rc spc_mode_sense(struct tcq_task *t);
struct exec_rc spc_mode_select(struct tcq_task *t);
/* LOG SENSE (scsi/spc_log.c). */
struct exec_rc spc_log_sense(struct tcq_task *t);

/*
 * Puts len bytes of parameter data in t: truncated to the allocation
 * length (which becomes req.data_in_len) and to exp_len; allocates t->buf
 * from the buffer pool when the transport left it NULL. EXEC_OK, or the
 * failure when there is no buffer.
 */
struct exec_rc spc_data_in(struct tcq_task *t, const void *data,
			   uint32_t len);
/* spc_data_in, then t completes with GOOD: an emulated command's end. */
struct exec_rc spc_reply(struct tcq_task *t, const void *data, uint32_t len);

/* Largest transfer a command to l may ask for, in blocks (0: no
 * limit): its device's max_xfer_len. */
uint32_t spc_max_xfer_blocks(const struct lun *l);
#endif
