/* SPC-4 primary commands, emulated: they complete before returning. */
#ifndef TCQ_SPC_H
#define TCQ_SPC_H
#include <stdint.h>
#include "scsi/task.h"

void spc_test_unit_ready(struct tcq_task *t);
void spc_inquiry(struct tcq_task *t);
void spc_request_sense(struct tcq_task *t);
void spc_report_luns(struct tcq_task *t);
void spc_mode_sense(struct tcq_task *t);
void spc_mode_select(struct tcq_task *t);
/* LOG SENSE (scsi/spc_log.c). */
void spc_log_sense(struct tcq_task *t);
void spc_good(struct tcq_task *t);	/* START STOP UNIT, PREVENT ALLOW */

/*
 * Returns len bytes of parameter data: truncated to the allocation length
 * (which becomes req.data_in_len) and to exp_len; allocates t->buf from
 * the buffer pool when the transport left it NULL. 0, or -1 (sense set).
 */
int spc_data_in(struct tcq_task *t, const void *data, uint32_t len);

/* Largest transfer a command to l may ask for, in blocks (0: no
 * limit): its device's max_xfer_len. */
uint32_t spc_max_xfer_blocks(const struct lun *l);
#endif
