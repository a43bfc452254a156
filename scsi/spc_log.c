/*
 * LOG SENSE (SPC-4 6.6) and the log pages the device server keeps:
 *
 *   00h/00h  Supported Log Pages (SPC-4 7.3.18): 00h, and 0Ch on a LUN
 *            with provisioning counts (scsi/thin.h)
 *   00h/FFh  Supported Log Pages and Subpages (SPC-4 7.3.19)
 *   0Ch/00h  Logical Block Provisioning (SBC-3 6.4.x): parameters 0001h,
 *            Available LBA Mapping Resource Count, and 0002h, Used LBA
 *            Mapping Resource Count, in threshold sets of 2^THRESHOLD
 *            EXPONENT blocks (the exponent of the VPD page B2h)
 *
 * Every parameter is a binary format list parameter (DU 0, TSD 1: not
 * saved, ETC 0, TMC 00b, FORMAT AND LINKING 11b) counted from the backend
 * when asked; such parameters have no threshold or default values apart
 * from the current ones, so every PAGE CONTROL value returns them. SP
 * (saving) is refused by the decoder; nothing is resettable, there is no
 * LOG SELECT.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/thin.h"

#define LP_SUPPORTED 0x00
#define LP_LBP 0x0c
#define LP_ALL_SUBPAGES 0xff

/* Parameter control byte of a binary format list parameter. */
#define LP_CTL_BINARY_LIST 0x23	/* TSD, FORMAT AND LINKING 11b */
/* SCOPE of a resource count (SBC-3): 01b dedicated to this LUN, 10b
 * shared with others (a file system holds other files). */
#define SCOPE_DEDICATED 0x01
#define SCOPE_SHARED 0x02

/* One resource count parameter (12 bytes) at p. */
static uint32_t lbp_param(uint8_t *p, uint16_t code, uint32_t count,
			  uint8_t scope)
{
	memset(p, 0, 12);
	put_be16(p, code);
	p[2] = LP_CTL_BINARY_LIST;
	p[3] = 8;			/* PARAMETER LENGTH */
	put_be32(p + 4, count);		/* RESOURCE COUNT */
	p[8] = scope;
	return 12;
}

struct exec_rc spc_log_sense(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint8_t buf[64];
	uint8_t page = t->req.page, sub = t->req.subpage;
	uint16_t ptr = t->req.param_ptr;
	bool lbp = thin_supported(l);
	uint32_t n = 4;

	memset(buf, 0, sizeof(buf));
	if (page == LP_SUPPORTED && (sub == 0 || sub == LP_ALL_SUBPAGES)) {
		/* No parameters: any pointer is past the largest code. */
		if (ptr)
			return exec_cdb_field(5, -1);
		buf[1] = sub;
		if (sub == 0) {
			buf[n++] = LP_SUPPORTED;
			if (lbp)
				buf[n++] = LP_LBP;
		} else {
			buf[0] = 0x40;		/* SPF */
			buf[n++] = LP_SUPPORTED;
			buf[n++] = 0;
			buf[n++] = LP_SUPPORTED;
			buf[n++] = LP_ALL_SUBPAGES;
			if (lbp) {
				buf[n++] = LP_LBP;
				buf[n++] = 0;
			}
		}
	} else if (page == LP_LBP && lbp && sub == 0) {
		uint32_t used, avail;

		if (ptr > 2)
			return exec_cdb_field(5, -1);
		if (thin_counts(l, &used, &avail) < 0)
			return exec_target_failure();
		buf[0] = 0x80 | LP_LBP;		/* DS: not saved */
		/* Parameters from the one the pointer names, in order. */
		if (ptr <= 1)
			n += lbp_param(buf + n, 1, avail, SCOPE_SHARED);
		n += lbp_param(buf + n, 2, used, SCOPE_DEDICATED);
	} else if (page == LP_SUPPORTED || (page == LP_LBP && lbp)) {
		return exec_cdb_field(3, -1);	/* no such subpage */
	} else {
		return exec_cdb_field(2, 5);	/* no such page */
	}
	put_be16(buf + 2, (uint16_t)(n - 4));	/* PAGE LENGTH */
	return spc_reply(t, buf, n);
}
