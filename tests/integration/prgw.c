/*
 * prgw URL INITIATOR CMD...: persistent reservation commands over one
 * libiscsi session with a fixed ISID (the same initiator port every run),
 * printing each outcome exactly, unit attentions included (nothing is
 * retried), for rbd-gateways.sh.
 *
 *   tur                    TEST UNIT READY
 *   register SARK          REGISTER AND IGNORE EXISTING KEY
 *   reserve KEY TYPE       PR OUT RESERVE (TYPE 1 WE, 3 EA, ...)
 *   preempt KEY SARK TYPE  PR OUT PREEMPT
 *   clear KEY              PR OUT CLEAR
 *   keys                   "KEYS k1 k2 ..." (hex) on GOOD
 *   resv                   "RESV KEY TYPE" or "RESV none" on GOOD
 *   write                  WRITE(10) of block 0
 *   lunreset               LOGICAL UNIT RESET: "GOOD" on Function
 *                          complete, else "TMF RESPONSE n"
 *   waitfile PATH          no command: waits (up to 60 s) for PATH
 *
 * One line per command: "GOOD" (or the KEYS / RESV line), "CONFLICT",
 * "CHECK CONDITION key=0xK asc=0xAA ascq=0xQQ", or "STATUS 0xSS". Exit 0
 * when every command ran, 1 on transport errors, 2 on usage errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/iscsiclient.h"

static int usage(void)
{
	fprintf(stderr, "usage: prgw URL INITIATOR {tur, register SARK, "
		"reserve KEY TYPE, preempt KEY SARK TYPE, clear KEY, keys, "
		"resv, write, lunreset, waitfile PATH}...\n");
	return 2;
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* Prints the outcome; returns 0 when the task came back at all. */
static int show(struct iscsi_context *iscsi, struct scsi_task *t)
{
	if (!t) {
		fprintf(stderr, "transport: %s\n", iscsi_get_error(iscsi));
		return -1;
	}
	switch (t->status) {
	case SCSI_STATUS_GOOD:
		break;
	case SCSI_STATUS_RESERVATION_CONFLICT:
		printf("CONFLICT\n");
		break;
	case SCSI_STATUS_CHECK_CONDITION:
		ic_print_check(t);
		printf("\n");
		break;
	default:
		printf("STATUS 0x%02x\n", t->status);
		break;
	}
	return 0;
}

static int prout(struct iscsi_context *iscsi, int lun, int sa, int type,
		 uint64_t rk, uint64_t sark)
{
	struct scsi_persistent_reserve_out_basic p = {
		.reservation_key = rk,
		.service_action_reservation_key = sark,
	};
	struct scsi_task *t = iscsi_persistent_reserve_out_sync(
		iscsi, lun, sa, SCSI_PERSISTENT_RESERVE_SCOPE_LU, type, &p);

	if (show(iscsi, t) < 0)
		return -1;
	if (t->status == SCSI_STATUS_GOOD)
		printf("GOOD\n");
	scsi_free_scsi_task(t);
	return 0;
}

static int prin(struct iscsi_context *iscsi, int lun, int sa)
{
	struct scsi_task *t = iscsi_persistent_reserve_in_sync(iscsi, lun, sa,
							       4096);

	if (show(iscsi, t) < 0)
		return -1;
	if (t->status == SCSI_STATUS_GOOD) {
		void *d = scsi_datain_unmarshall(t);

		if (!d) {
			printf("GOOD (unparsable)\n");
		} else if (sa == SCSI_PERSISTENT_RESERVE_READ_KEYS) {
			struct scsi_persistent_reserve_in_read_keys *k = d;

			printf("KEYS");
			for (int i = 0; i < k->num_keys; i++)
				printf(" %" PRIx64, k->keys[i]);
			printf("\n");
		} else {
			struct scsi_persistent_reserve_in_read_reservation *r = d;

			if (r->reserved)
				printf("RESV %" PRIx64 " %d\n",
				       r->reservation_key, r->pr_type);
			else
				printf("RESV none\n");
		}
	}
	scsi_free_scsi_task(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct ic_opts o = { .prog = "prgw", .isid_qualifier = 7 };
	struct iscsi_context *iscsi;
	int lun, rc;

	if (argc < 4)
		return usage();
	o.initiator = argv[2];
	rc = ic_connect(argv[1], &o, &iscsi, &lun);
	if (rc)
		return rc;
	for (int i = 3; i < argc && rc == 0; i++) {
		const char *c = argv[i];

		if (!strcmp(c, "tur")) {
			struct scsi_task *t = iscsi_testunitready_sync(iscsi,
								       lun);
			rc = show(iscsi, t);
			if (t && t->status == SCSI_STATUS_GOOD)
				printf("GOOD\n");
			if (t)
				scsi_free_scsi_task(t);
		} else if (!strcmp(c, "register") && i + 1 < argc) {
			rc = prout(iscsi, lun,
				   SCSI_PERSISTENT_RESERVE_REGISTER_AND_IGNORE_EXISTING_KEY,
				   0, 0, num(argv[i + 1]));
			i += 1;
		} else if (!strcmp(c, "reserve") && i + 2 < argc) {
			rc = prout(iscsi, lun, SCSI_PERSISTENT_RESERVE_RESERVE,
				   (int)num(argv[i + 2]), num(argv[i + 1]), 0);
			i += 2;
		} else if (!strcmp(c, "preempt") && i + 3 < argc) {
			rc = prout(iscsi, lun, SCSI_PERSISTENT_RESERVE_PREEMPT,
				   (int)num(argv[i + 3]), num(argv[i + 1]),
				   num(argv[i + 2]));
			i += 3;
		} else if (!strcmp(c, "clear") && i + 1 < argc) {
			rc = prout(iscsi, lun, SCSI_PERSISTENT_RESERVE_CLEAR,
				   0, num(argv[i + 1]), 0);
			i += 1;
		} else if (!strcmp(c, "keys")) {
			rc = prin(iscsi, lun, SCSI_PERSISTENT_RESERVE_READ_KEYS);
		} else if (!strcmp(c, "resv")) {
			rc = prin(iscsi, lun,
				  SCSI_PERSISTENT_RESERVE_READ_RESERVATION);
		} else if (!strcmp(c, "write")) {
			static unsigned char blk[512];
			struct scsi_task *t = iscsi_write10_sync(
				iscsi, lun, 0, blk, sizeof(blk), 512, 0, 0, 0,
				0, 0);
			rc = show(iscsi, t);
			if (t && t->status == SCSI_STATUS_GOOD)
				printf("GOOD\n");
			if (t)
				scsi_free_scsi_task(t);
		} else if (!strcmp(c, "lunreset")) {
			int r = iscsi_task_mgmt_lun_reset_sync(iscsi, lun);

			if (r < 0) {
				fprintf(stderr, "transport: %s\n",
					iscsi_get_error(iscsi));
				rc = 1;
			} else if (r == 0) {
				printf("GOOD\n");
			} else {
				printf("TMF RESPONSE %d\n", r);
			}
		} else if (!strcmp(c, "waitfile") && i + 1 < argc) {
			int n;

			for (n = 0; n < 600 && access(argv[i + 1], F_OK); n++)
				usleep(100000);
			i += 1;
		} else {
			return usage();
		}
		fflush(stdout);
	}
	ic_close(iscsi);
	return rc ? 1 : 0;
}
