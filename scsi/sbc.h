/* SBC-3 block commands: capacity, READ/WRITE, VERIFY, SYNCHRONIZE CACHE,
 * PRE-FETCH, UNMAP. Media access goes to the LUN's backend queue of the
 * calling reactor; completion comes back on that thread. The executors
 * keep scsi/exec.h's contract. */
#ifndef TCQ_SBC_H
#define TCQ_SBC_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/exec.h"
#include "scsi/task.h"

struct lun;

struct exec_rc sbc_read_capacity10(struct tcq_task *t);
struct exec_rc sbc_read_capacity16(struct tcq_task *t);
struct exec_rc sbc_get_lba_status(struct tcq_task *t);
struct exec_rc sbc_read(struct tcq_task *t);
struct exec_rc sbc_write(struct tcq_task *t);
struct exec_rc sbc_verify(struct tcq_task *t);
struct exec_rc sbc_sync_cache(struct tcq_task *t);
struct exec_rc sbc_prefetch(struct tcq_task *t);
struct exec_rc sbc_unmap(struct tcq_task *t);
/* scsi/sbc_rmw.c, sbc_ws.c */
struct exec_rc sbc_write_verify(struct tcq_task *t);
struct exec_rc sbc_orwrite(struct tcq_task *t);
struct exec_rc sbc_compare_and_write(struct tcq_task *t);
struct exec_rc sbc_write_atomic(struct tcq_task *t);
struct exec_rc sbc_write_same(struct tcq_task *t);
/* scsi/sbc_media.c */
struct exec_rc sbc_start_stop(struct tcq_task *t);
struct exec_rc sbc_prevent_allow(struct tcq_task *t);
struct exec_rc sbc_read_defect_data(struct tcq_task *t);
/* scsi/sbc_sanitize.c */
struct exec_rc sbc_sanitize(struct tcq_task *t);
/* A SANITIZE runs on l: true, with *progress in 1/65536ths. */
bool sbc_sanitize_progress(const struct lun *l, uint16_t *progress);
/* EXEC_OK when t may run, else NOT READY: medium ejected, or SANITIZE in
 * progress with its progress indication (the row's OPC_F_NO_MEDIUM,
 * OPC_F_SANITIZING let it through). */
struct exec_rc sbc_ready(const struct tcq_task *t);
/* PREVENT ALLOW MEDIUM REMOVAL ends with the I_T nexus (lun_nexus_leave
 * calls this) and with a LUN reset (the TMF code should call
 * sbc_lun_reset for LOGICAL UNIT RESET and target resets). */
void sbc_nexus_gone(struct lun *l, void *nexus);
void sbc_lun_reset(struct lun *l);
/* Fills the SBC fields of a Block Limits VPD page (p: the whole page). */
void sbc_block_limits(const struct lun *l, uint8_t *p);
/* scsi/xcopy.c */
struct exec_rc sbc_extended_copy(struct tcq_task *t);
struct exec_rc sbc_receive_copy_results(struct tcq_task *t);
#endif
