/* SBC-3 block commands: capacity, READ/WRITE, VERIFY, SYNCHRONIZE CACHE,
 * PRE-FETCH, UNMAP. Media access goes to the LUN's backend queue of the
 * calling reactor; completion comes back on that thread. */
#ifndef TCQ_SBC_H
#define TCQ_SBC_H
#include "scsi/task.h"

void sbc_read_capacity10(struct tcq_task *t);
void sbc_read_capacity16(struct tcq_task *t);
void sbc_get_lba_status(struct tcq_task *t);
void sbc_read(struct tcq_task *t);
void sbc_write(struct tcq_task *t);
void sbc_verify(struct tcq_task *t);
void sbc_sync_cache(struct tcq_task *t);
void sbc_prefetch(struct tcq_task *t);
void sbc_unmap(struct tcq_task *t);
#endif
