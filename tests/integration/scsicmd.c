/*
 * scsicmd: runs a few SCSI commands over one libiscsi session and prints
 * the exact outcome of each, for integration tests that need the sense
 * data (faults.sh) or a precise write/flush sequence (durability.sh).
 *
 *   scsicmd URL CMD... with CMD one of
 *     read LBA N BYTE|-     READ(16); BYTE (hex): check all data equals it
 *     write LBA N BYTE fua|nofua   WRITE(16) of N blocks filled with BYTE
 *     sync                  SYNCHRONIZE CACHE(10) of the whole LUN
 *     readcap               READ CAPACITY(16): "CAPACITY N" blocks on GOOD
 *     waitfile PATH         no command: waits (up to 60 s) until PATH
 *                           exists, so a test can act mid-session
 *
 * One line per command: "GOOD", "MISMATCH at byte N", or
 * "CHECK CONDITION key=0xK asc=0xAA ascq=0xQQ"; other statuses by value.
 * Exit 0 when every command ran (whatever its status), 1 on transport
 * errors, 2 on usage errors. Blocks are 512 bytes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/iscsiclient.h"

#define BS 512

static int usage(void)
{
	fprintf(stderr, "usage: scsicmd URL {read LBA N BYTE|-, write LBA N "
			"BYTE fua|nofua, sync, readcap, waitfile PATH}...\n");
	return 2;
}

static int parse_u64(const char *s, unsigned long long *v, int base)
{
	char *end;

	*v = strtoull(s, &end, base);
	return (*s && !*end) ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct ic_opts o = {
		.prog = "scsicmd",
		.default_initiator = "iqn.2026-11.org.tcq:scsicmd",
		.set_header_digest = true,
		.header_digest = ISCSI_HEADER_DIGEST_NONE_CRC32C,
	};
	struct iscsi_context *iscsi;
	int rc, lun, i = 2;

	if (argc < 3)
		return usage();
	rc = ic_connect(argv[1], &o, &iscsi, &lun);
	if (rc)
		return rc;
	while (i < argc && rc == 0) {
		unsigned long long lba, n, byte;
		struct scsi_task *t = NULL;
		unsigned char *buf = NULL;

		if (!strcmp(argv[i], "read") && i + 3 < argc) {
			bool check = strcmp(argv[i + 3], "-") != 0;

			if (parse_u64(argv[i + 1], &lba, 0) ||
			    parse_u64(argv[i + 2], &n, 0) || n == 0 || n > 2048 ||
			    (check && (parse_u64(argv[i + 3], &byte, 16) ||
				       byte > 255))) {
				rc = usage();
				break;
			}
			t = iscsi_read16_sync(iscsi, lun, lba,
					      (uint32_t)(n * BS), BS, 0, 0, 0, 0,
					      0);
			i += 4;
			if (t && t->status == SCSI_STATUS_GOOD && check) {
				size_t k, len = (size_t)t->datain.size;

				for (k = 0; k < len; k++)
					if (t->datain.data[k] != byte)
						break;
				if (len != n * BS)
					printf("SHORT %zu bytes\n", len);
				else if (k < len)
					printf("MISMATCH at byte %zu: 0x%02x\n",
					       k, t->datain.data[k]);
				else
					printf("GOOD\n");
				scsi_free_scsi_task(t);
				continue;
			}
		} else if (!strcmp(argv[i], "write") && i + 4 < argc) {
			if (parse_u64(argv[i + 1], &lba, 0) ||
			    parse_u64(argv[i + 2], &n, 0) || n == 0 || n > 2048 ||
			    parse_u64(argv[i + 3], &byte, 16) || byte > 255 ||
			    (strcmp(argv[i + 4], "fua") &&
			     strcmp(argv[i + 4], "nofua"))) {
				rc = usage();
				break;
			}
			buf = malloc(n * BS);
			if (!buf) {
				rc = 1;
				break;
			}
			memset(buf, (int)byte, n * BS);
			t = iscsi_write16_sync(iscsi, lun, lba, buf,
					       (uint32_t)(n * BS), BS, 0, 0,
					       !strcmp(argv[i + 4], "fua"), 0, 0);
			free(buf);
			i += 5;
		} else if (!strcmp(argv[i], "readcap")) {
			struct scsi_readcapacity16 *rc16;

			t = iscsi_readcapacity16_sync(iscsi, lun);
			i += 1;
			if (t && t->status == SCSI_STATUS_GOOD) {
				rc16 = scsi_datain_unmarshall(t);
				if (rc16)
					printf("CAPACITY %llu\n",
					       (unsigned long long)
					       rc16->returned_lba + 1);
				else
					printf("CAPACITY unreadable\n");
				scsi_free_scsi_task(t);
				continue;
			}
		} else if (!strcmp(argv[i], "waitfile") && i + 1 < argc) {
			int w;

			fflush(stdout);	/* the test reads what came before */
			for (w = 0; w < 600 && access(argv[i + 1], F_OK); w++)
				usleep(100000);
			printf("%s\n", w < 600 ? "WAITED" : "WAIT TIMEOUT");
			i += 2;
			continue;
		} else if (!strcmp(argv[i], "sync")) {
			t = iscsi_synchronizecache10_sync(iscsi, lun, 0, 0,
							  0, 0);
			i += 1;
		} else {
			rc = usage();
			break;
		}
		if (!t) {
			fprintf(stderr, "scsicmd: %s\n", iscsi_get_error(iscsi));
			rc = 1;
			break;
		}
		ic_print_status(t);
		scsi_free_scsi_task(t);
	}
	fflush(stdout);
	ic_close(iscsi);
	return rc;
}
