/*
 * rbdcmd: the commands rbd.sh checks beyond libiscsi's suites, over one
 * libiscsi session, with the exact outcome of each (sense INFORMATION
 * included, which libiscsi does not parse).
 *
 *   rbdcmd URL CMD... with CMD one of
 *     write LBA N BYTE       WRITE(16) of N blocks filled with BYTE (hex)
 *     read LBA N BYTE        READ(16); checks all data equals BYTE
 *     caw LBA N OLD NEW [OFF]  COMPARE AND WRITE: compare with blocks of
 *                            OLD (byte OFF of the compare data flipped
 *                            when given), write blocks of NEW
 *     ws LBA N BYTE          WRITE SAME(16) of one block of BYTE
 *     limits                 "MAXCAW N": Block Limits VPD, MAXIMUM
 *                            COMPARE AND WRITE LENGTH
 *     wce                    "WCE N V_SUP N": caching mode page and the
 *                            Extended INQUIRY Data VPD page
 *
 * One line per command: "GOOD", "MISMATCH at byte N", or "CHECK CONDITION
 * key=0xK asc=0xAA ascq=0xQQ [info=N]". Exit 0 when every command ran,
 * 1 on transport errors, 2 on usage errors. Blocks are 512 bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

#define BS 512
#define MAXBLK 256

static int usage(void)
{
	fprintf(stderr, "usage: rbdcmd URL {write LBA N BYTE, read LBA N BYTE, "
			"caw LBA N OLD NEW [OFF], ws LBA N BYTE, limits, "
			"wce}...\n");
	return 2;
}

static int num(const char *s, unsigned long long *v, int base)
{
	char *end;

	*v = strtoull(s, &end, base);
	return (*s && !*end) ? 0 : -1;
}

/* INFORMATION from raw sense data (fixed or descriptor format); -1 when
 * it is absent. libiscsi keeps the sense after a 2-byte length. */
static long long sense_info(const struct scsi_task *t)
{
	const unsigned char *s = t->datain.data;
	int n = t->datain.size;

	if (!s || n < 2 + 8)
		return -1;
	s += 2;
	n -= 2;
	if ((s[0] & 0x7f) == 0x70 || (s[0] & 0x7f) == 0x71) {
		if (!(s[0] & 0x80))
			return -1;
		return (long long)((uint32_t)s[3] << 24 | (uint32_t)s[4] << 16 |
				   (uint32_t)s[5] << 8 | s[6]);
	}
	for (int off = 8; off + 2 <= n && off + 2 + s[off + 1] <= n;
	     off += 2 + s[off + 1]) {
		if (s[off] == 0x00 && s[off + 1] >= 10) {
			unsigned long long v = 0;

			for (int i = 0; i < 8; i++)
				v = v << 8 | s[off + 4 + i];
			return (long long)v;
		}
	}
	return -1;
}

static void print_status(struct scsi_task *t)
{
	long long info;

	if (t->status == SCSI_STATUS_GOOD) {
		printf("GOOD\n");
	} else if (t->status == SCSI_STATUS_CHECK_CONDITION) {
		ic_print_check(t);
		info = sense_info(t);
		if (info >= 0)
			printf(" info=%lld", info);
		printf("\n");
	} else {
		printf("STATUS 0x%02x\n", (unsigned)t->status);
	}
}

/* A UNIT ATTENTION (the session's first command) is an event: again. */
static int is_ua(const struct scsi_task *t)
{
	return t && t->status == SCSI_STATUS_CHECK_CONDITION &&
	       t->sense.key == SCSI_SENSE_UNIT_ATTENTION;
}

static int run(struct iscsi_context *is, int lun, char **a, int n, int *used)
{
	static unsigned char buf[2 * MAXBLK * BS];
	unsigned long long lba = 0, cnt = 0, x = 0, y = 0, y2, off = 0;
	struct scsi_task *t = NULL;
	const char *cmd = a[0];
	int tries = 0;

	*used = 1;
	if (!strcmp(cmd, "limits") || !strcmp(cmd, "wce")) {
		/* no operands */
	} else if (n < 4 || num(a[1], &lba, 0) || num(a[2], &cnt, 0) ||
		   !cnt || cnt > (strcmp(cmd, "ws") ? MAXBLK : 65535) ||
		   num(a[3], &x, 16) || x > 255) {
		return -2;
	} else {
		*used = 4;
	}
	if (!strcmp(cmd, "caw")) {
		if (n < 5 || num(a[4], &y, 16) || y > 255)
			return -2;
		*used = 5;
		off = ~0ull;
		if (n > 5 && num(a[5], &y2, 0) == 0) {
			if (y2 >= cnt * BS)
				return -2;
			off = y2;
			*used = 6;
		}
	}
again:
	if (t)
		scsi_free_scsi_task(t);
	if (!strcmp(cmd, "write")) {
		memset(buf, (int)x, cnt * BS);
		t = iscsi_write16_sync(is, lun, lba, buf, cnt * BS, BS, 0, 0, 0,
				       0, 0);
	} else if (!strcmp(cmd, "read")) {
		t = iscsi_read16_sync(is, lun, lba, cnt * BS, BS, 0, 0, 0, 0,
				      0);
	} else if (!strcmp(cmd, "caw")) {
		memset(buf, (int)x, cnt * BS);
		memset(buf + cnt * BS, (int)y, cnt * BS);
		if (off != ~0ull)
			buf[off] ^= 0xff;
		t = iscsi_compareandwrite_sync(is, lun, lba, buf, 2 * cnt * BS,
					       BS, 0, 0, 0, 0, 0);
	} else if (!strcmp(cmd, "ws")) {
		memset(buf, (int)x, BS);
		t = iscsi_writesame16_sync(is, lun, lba, buf, BS,
					   (uint32_t)cnt, 0, 0, 0, 0);
	} else if (!strcmp(cmd, "limits")) {
		t = iscsi_inquiry_sync(is, lun, 1, 0xb0, 64);
	} else if (!strcmp(cmd, "wce")) {
		t = iscsi_modesense6_sync(is, lun, 1, SCSI_MODESENSE_PC_CURRENT,
					  0x08, 0, 255);
	} else {
		return -2;
	}
	if (!t) {
		fprintf(stderr, "rbdcmd: %s: %s\n", cmd, iscsi_get_error(is));
		return -1;
	}
	if (is_ua(t) && ++tries < 4)
		goto again;
	if (t->status != SCSI_STATUS_GOOD) {
		print_status(t);
	} else if (!strcmp(cmd, "read")) {
		unsigned long long i;

		for (i = 0; i < cnt * BS; i++)
			if ((int)i >= t->datain.size || t->datain.data[i] != x)
				break;
		if (i < cnt * BS)
			printf("MISMATCH at byte %llu\n", i);
		else
			printf("GOOD\n");
	} else if (!strcmp(cmd, "limits")) {
		printf("MAXCAW %d\n", t->datain.size > 5 ? t->datain.data[5]
							 : -1);
	} else if (!strcmp(cmd, "wce")) {
		/* header 4 + block descriptors, then the caching page */
		int p = t->datain.size > 3 ? 4 + t->datain.data[3] : 0;
		int wce = p + 2 < t->datain.size ?
			  !!(t->datain.data[p + 2] & 0x04) : -1;

		scsi_free_scsi_task(t);
		t = iscsi_inquiry_sync(is, lun, 1, 0x86, 64);
		if (!t) {
			fprintf(stderr, "rbdcmd: inquiry: %s\n",
				iscsi_get_error(is));
			return -1;
		}
		printf("WCE %d V_SUP %d\n", wce, t->status == 0 &&
		       t->datain.size > 6 ? t->datain.data[6] & 1 : -1);
	} else {
		printf("GOOD\n");
	}
	scsi_free_scsi_task(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ic_opts o = {
		.prog = "rbdcmd",
		.default_initiator = "iqn.2026-11.org.tcq:rbdcmd",
	};
	struct iscsi_context *is;
	int rc, lun, i = 2;

	if (argc < 3)
		return usage();
	rc = ic_connect(argv[1], &o, &is, &lun);
	if (rc)
		return rc;
	while (i < argc) {
		int used, r = run(is, lun, argv + i, argc - i, &used);

		if (r == -2) {
			rc = usage();
			break;
		}
		if (r < 0) {
			rc = 1;
			break;
		}
		fflush(stdout);
		i += used;
	}
	ic_close(is);
	return rc;
}
