/*
 * Logical block provisioning: resource counts and the soft threshold of a
 * thin LUN (SBC-3 4.7.3.7, 6.4.x Logical Block Provisioning log page,
 * 6.5.x Logical Block Provisioning mode page, 6.6.4 Logical Block
 * Provisioning VPD page).
 *
 * A thin LUN whose backend reports its allocation (bdev_space) counts LBA
 * mapping resources in threshold sets of 2^exponent blocks: the smallest
 * exponent (at least 1) that makes the whole LUN at most 65536 sets, so
 * every count fits the log page's 32-bit RESOURCE COUNT.
 *
 * thin_threshold = P (tcqd.conf) adds one soft threshold: an armed
 * increasing threshold on the used LBA mapping resources (resource 02h,
 * type 000b, arming 001b) whose THRESHOLD COUNT is P% of the capacity in
 * sets, rounded up. When the allocation reaches it, every I_T nexus of
 * the LUN gets THIN PROVISIONING SOFT THRESHOLD REACHED (38h/07h) once,
 * with INFORMATION the offset of the threshold descriptor in the mode
 * page (THIN_UA_INFO); the threshold re-arms once the allocation falls
 * below the bottom of its range (one set under the count), e.g. after
 * UNMAP. Such a LUN also has the Read-Write Error Recovery mode page with
 * LBPERE (SBC-3 6.5.10): 1 by default, MODE SELECT of 0 turns the
 * notification off.
 *
 * Cost: no stat() per write. A write-class command that completes arms
 * one per-LUN timer on its reactor, if none is armed; 100 ms later
 * (THIN_CHECK_MS) the timer reads the allocation once (fstat, fstatvfs)
 * and evaluates the threshold. So the backend is asked at most ten times
 * a second per LUN, only while it is written, and never more than 100 ms
 * after the last write. LOG SENSE reads it too (and evaluates).
 */
#ifndef TCQ_THIN_H
#define TCQ_THIN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scsi/cdb.h"
#include "scsi/lun.h"

struct thin_lun;
struct reactor;

#define THIN_CHECK_MS 100
/* The delay of the check after a write, THIN_CHECK_MS (the unit tests
 * lengthen it where they must act before it). */
extern unsigned thin_check_ms;
#define THIN_MAX_SETS 65536u
/* The Logical Block Provisioning mode page (1Ch/02h): 16 bytes of header,
 * then the one threshold descriptor. */
#define THIN_MODE_PAGE 0x1c
#define THIN_MODE_SUBPAGE 0x02
#define THIN_MODE_PAGE_LEN 24
#define THIN_UA_INFO 16

/*
 * Sets up provisioning for l (call once its backend's thin flag is
 * final): resource counts when the backend is thin and reports its
 * allocation; the soft threshold at pct% (0: none). Returns 0, or -1 with
 * err saying why pct cannot be had (not thin; allocation unknown).
 */
int thin_lun_setup(struct lun *l, unsigned pct, char *err, size_t errlen);
/* lun_destroy: cancels a pending check (reactors stopped, or the caller's
 * own) and frees the state. */
void thin_lun_free(struct lun *l);
/* On r's thread, once no task of l is left on r (a LUN removed live):
 * a check pending on r is cancelled, so that thin_lun_free, later on
 * another thread, finds none armed. */
void thin_lun_quiesce(struct lun *l, struct reactor *r);
/* LOGICAL UNIT RESET: the threshold notifies again at the next check if
 * it is still reached (SBC-3 4.7.3.7.6, "since the last logical unit
 * reset"). */
void thin_lun_reset(struct lun *l);

/* Resource counts are available (the log page and the mode page exist). */
static inline bool thin_supported(const struct lun *l)
{
	return l->thin != NULL;
}
/* THRESHOLD EXPONENT (0: no thresholds, no counts). */
uint8_t thin_exponent(const struct lun *l);
/* The configured threshold, percent (0: none). */
unsigned thin_threshold_pct(const struct lun *l);

/*
 * Reads the allocation now and evaluates the threshold: the used and
 * available LBA mapping resources in threshold sets (used rounded up,
 * available down and at most what the LUN could still map). 0, or a
 * -errno from the backend.
 */
int thin_counts(struct lun *l, uint32_t *used, uint32_t *available);

/* The Logical Block Provisioning mode page for page control pc (0
 * current, 1 changeable, 2 default) into p; its length, or 0 when the
 * LUN has no such page. */
uint32_t thin_mode_page(const struct lun *l, int pc, uint8_t *p);

/* A write-class command completed on the calling reactor (taskset). */
void thin_write_done(struct lun *l);
/* One load on the completion path of every task; the rest only where a
 * threshold is set. */
static inline void thin_note_write(struct lun *l, const struct cdb_req *req)
{
	if (l && l->thin_warn && cdb_access(req) == CDB_ACCESS_WRITE)
		thin_write_done(l);
}
#endif
