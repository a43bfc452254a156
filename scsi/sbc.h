/* SBC-3 block commands: capacity, READ/WRITE, VERIFY, SYNCHRONIZE CACHE,
 * PRE-FETCH, UNMAP. Media access goes to the LUN's backend queue of the
 * calling reactor; completion comes back on that thread. */
#ifndef TCQ_SBC_H
#define TCQ_SBC_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/task.h"

struct lun;

void sbc_read_capacity10(struct tcq_task *t);
void sbc_read_capacity16(struct tcq_task *t);
void sbc_get_lba_status(struct tcq_task *t);
void sbc_read(struct tcq_task *t);
void sbc_write(struct tcq_task *t);
void sbc_verify(struct tcq_task *t);
void sbc_sync_cache(struct tcq_task *t);
void sbc_prefetch(struct tcq_task *t);
void sbc_unmap(struct tcq_task *t);
/* scsi/sbc_rmw.c, sbc_ws.c */
void sbc_write_verify(struct tcq_task *t);
void sbc_orwrite(struct tcq_task *t);
void sbc_compare_and_write(struct tcq_task *t);
void sbc_write_atomic(struct tcq_task *t);
void sbc_write_same(struct tcq_task *t);
/* scsi/sbc_media.c */
void sbc_start_stop(struct tcq_task *t);
void sbc_prevent_allow(struct tcq_task *t);
void sbc_read_defect_data(struct tcq_task *t);
/* scsi/sbc_sanitize.c */
void sbc_sanitize(struct tcq_task *t);
/* A SANITIZE runs on l: true, with *progress in 1/65536ths. */
bool sbc_sanitize_progress(const struct lun *l, uint16_t *progress);
/* NOT READY with asc (from sbc_not_ready), with the SANITIZE progress
 * indication where it applies. */
void sbc_set_not_ready(struct tcq_task *t, uint16_t asc);
/* 0 when t may run, else the NOT READY ASC (medium ejected, SANITIZE in
 * progress). */
uint16_t sbc_not_ready(const struct tcq_task *t);
/* PREVENT ALLOW MEDIUM REMOVAL ends with the I_T nexus (lun_nexus_leave
 * calls this) and with a LUN reset (the TMF code should call
 * sbc_lun_reset for LOGICAL UNIT RESET and target resets). */
void sbc_nexus_gone(struct lun *l, void *nexus);
void sbc_lun_reset(struct lun *l);
/* Fills the SBC fields of a Block Limits VPD page (p: the whole page). */
void sbc_block_limits(const struct lun *l, uint8_t *p);
/* scsi/xcopy.c */
void sbc_extended_copy(struct tcq_task *t);
void sbc_receive_copy_results(struct tcq_task *t);
#endif
