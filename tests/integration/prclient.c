/*
 * prclient URL INITIATOR ACTION: persistent reservations through
 * libiscsi, for pr-aptpl.sh.
 *   set    register key 0x7c0ffee5 (REGISTER AND IGNORE, APTPL=1) and
 *          reserve Write Exclusive
 *   check  the key is registered and holds a Write Exclusive
 *          reservation (exit 1 otherwise)
 *   clear  CLEAR with that key
 * Prints what it sees; exit 0 when the action did what it should.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

#define KEY 0x7c0ffee5ull

static int prout(struct iscsi_context *iscsi, int lun, int sa, int type,
		 uint64_t rk, uint64_t sark, int aptpl)
{
	struct scsi_persistent_reserve_out_basic p = {
		.reservation_key = rk,
		.service_action_reservation_key = sark,
		.aptpl = (uint8_t)aptpl,
	};
	struct scsi_task *t = iscsi_persistent_reserve_out_sync(
		iscsi, lun, sa, SCSI_PERSISTENT_RESERVE_SCOPE_LU, type, &p);
	int st = t ? t->status : -1;

	if (st != SCSI_STATUS_GOOD)
		fprintf(stderr, "PROUT sa %d: status %d %s\n", sa, st,
			iscsi_get_error(iscsi));
	if (t)
		scsi_free_scsi_task(t);
	return st == SCSI_STATUS_GOOD ? 0 : -1;
}

static int check(struct iscsi_context *iscsi, int lun)
{
	struct scsi_task *t;
	int found = 0, ok = 0;

	t = iscsi_persistent_reserve_in_sync(iscsi, lun,
					     SCSI_PERSISTENT_RESERVE_READ_KEYS,
					     4096);
	if (t && t->status == SCSI_STATUS_GOOD) {
		struct scsi_persistent_reserve_in_read_keys *rk =
			scsi_datain_unmarshall(t);

		for (int i = 0; rk && i < rk->num_keys; i++) {
			printf("key 0x%" PRIx64 "\n", rk->keys[i]);
			found |= rk->keys[i] == KEY;
		}
	}
	if (t)
		scsi_free_scsi_task(t);
	t = iscsi_persistent_reserve_in_sync(
		iscsi, lun, SCSI_PERSISTENT_RESERVE_READ_RESERVATION, 4096);
	if (t && t->status == SCSI_STATUS_GOOD) {
		struct scsi_persistent_reserve_in_read_reservation *rr =
			scsi_datain_unmarshall(t);

		if (rr && rr->reserved) {
			printf("reserved by 0x%" PRIx64 " type %d\n",
			       rr->reservation_key, rr->pr_type);
			ok = rr->reservation_key == KEY &&
			     rr->pr_type == SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE;
		} else {
			printf("not reserved\n");
		}
	}
	if (t)
		scsi_free_scsi_task(t);
	return found && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	/* Registrations belong to the initiator port (name and ISID): a
	 * fixed ISID makes every run the same I_T nexus. */
	struct ic_opts o = { .prog = "prclient", .isid_qualifier = 1 };
	struct iscsi_context *iscsi;
	int lun, rc = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: prclient URL INITIATOR set|check|clear\n");
		return 2;
	}
	o.initiator = argv[2];
	if (ic_connect(argv[1], &o, &iscsi, &lun))
		return 1;
	if (!strcmp(argv[3], "set"))
		rc = prout(iscsi, lun,
			   SCSI_PERSISTENT_RESERVE_REGISTER_AND_IGNORE_EXISTING_KEY,
			   0, 0, KEY, 1) ||
		     prout(iscsi, lun, SCSI_PERSISTENT_RESERVE_RESERVE,
			   SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE, KEY, 0,
			   0) ? -1 : 0;
	else if (!strcmp(argv[3], "check"))
		rc = check(iscsi, lun);
	else if (!strcmp(argv[3], "clear"))
		rc = prout(iscsi, lun, SCSI_PERSISTENT_RESERVE_CLEAR, 0, KEY, 0,
			   0);
	ic_close(iscsi);
	return rc ? 1 : 0;
}
