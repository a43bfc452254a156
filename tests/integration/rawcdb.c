/*
 * rawcdb: sends CDBs as given (hex) over one libiscsi session and prints
 * each outcome with the Data-In bytes, for tests of commands libiscsi has
 * no helper for (REPORT TARGET PORT GROUPS in alua.sh, the ODX commands
 * in odx.sh).
 *
 *   rawcdb URL CDB[:ALLOC]...   CDB in hex (6..16 bytes), ALLOC the
 *                               expected Data-In length (default 0)
 *   rawcdb URL CDB=DATA...      DATA (hex) sent as the Data-Out
 *
 * One line per CDB: "GOOD HEX..." (the Data-In, "-" when none), or
 * "CHECK CONDITION key=0xK asc=0xAA ascq=0xQQ", or "STATUS 0xSS". A UNIT
 * ATTENTION (the session's first command) is retried, not printed. Exit 0
 * when every CDB ran, 1 on transport errors, 2 on usage errors.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

static int usage(void)
{
	fprintf(stderr, "usage: rawcdb URL CDBHEX[:ALLOC|=DATAHEX]...\n");
	return 2;
}

/* n hex digits of s into out; -1 when one is not a hex digit. */
static int unhex(const char *s, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i += 2) {
		int hi = ic_hexval(s[i]), lo = ic_hexval(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* The Data-Out of "CDB=DATA" (malloc'd, its length in *len), or NULL
 * with *len 0 when there is none; *bad on a malformed one. */
static unsigned char *parse_out(const char *s, size_t *len, bool *bad)
{
	const char *eq = strchr(s, '=');
	size_t n = eq ? strlen(eq + 1) : 0;
	unsigned char *d;

	*len = 0;
	*bad = false;
	if (!eq)
		return NULL;
	d = malloc(n / 2 + 1);
	if (!d || n % 2 || n == 0 || unhex(eq + 1, n, d) < 0) {
		free(d);
		*bad = true;
		return NULL;
	}
	*len = n / 2;
	return d;
}

/* "12000000600" style hex into cdb; returns its length or -1. */
static int parse_cdb(const char *s, unsigned char *cdb, unsigned long *alloc)
{
	const char *colon = strchr(s, ':');
	const char *eq = strchr(s, '=');
	size_t n = colon ? (size_t)(colon - s) :
		eq ? (size_t)(eq - s) : strlen(s);
	char *end;

	if (n % 2 || n < 12 || n > 32 || unhex(s, n, cdb) < 0)
		return -1;
	*alloc = 0;
	if (colon) {
		*alloc = strtoul(colon + 1, &end, 0);
		if (!colon[1] || *end || *alloc > 1u << 20)
			return -1;
	}
	return (int)(n / 2);
}

/* Runs the CDB with len bytes of Data-Out: the task, or NULL. */
static struct scsi_task *run_out(struct iscsi_context *iscsi, int lun,
				 const unsigned char *cdb, int clen,
				 unsigned char *data, size_t len)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	struct iscsi_data d = { .size = len, .data = data };

	if (!t)
		return NULL;
	memcpy(t->cdb, cdb, (size_t)clen);
	t->cdb_size = clen;
	t->xfer_dir = SCSI_XFER_WRITE;
	t->expxferlen = (int)len;
	if (!iscsi_scsi_command_sync(iscsi, lun, t, &d)) {
		scsi_free_scsi_task(t);
		return NULL;
	}
	return t;
}

int main(int argc, char **argv)
{
	/* Login only: the TEST UNIT READY of a full connect fails through
	 * a standby port. */
	static const struct ic_opts o = {
		.prog = "rawcdb",
		.default_initiator = "iqn.2026-11.org.tcq:rawcdb",
		.set_header_digest = true,
		.header_digest = ISCSI_HEADER_DIGEST_NONE_CRC32C,
		.login_only = true,
	};
	struct iscsi_context *iscsi;
	int rc, lun;

	if (argc < 3)
		return usage();
	rc = ic_connect(argv[1], &o, &iscsi, &lun);
	if (rc)
		return rc;
	for (int i = 2; i < argc && rc == 0; i++) {
		unsigned char cdb[16];
		unsigned long alloc;
		struct scsi_task *t = NULL;
		int len = parse_cdb(argv[i], cdb, &alloc);
		size_t olen;
		bool bad;
		unsigned char *out = parse_out(argv[i], &olen, &bad);

		if (len < 0 || bad) {
			rc = usage();
			break;
		}
		for (int tries = 0; tries < 4; tries++) {
			if (t)
				scsi_free_scsi_task(t);
			t = out ? run_out(iscsi, lun, cdb, len, out, olen) :
				ic_run_cdb(iscsi, lun, cdb, len, alloc);
			if (!t || t->status != SCSI_STATUS_CHECK_CONDITION ||
			    t->sense.key != SCSI_SENSE_UNIT_ATTENTION)
				break;
		}
		free(out);
		if (!t) {
			fprintf(stderr, "rawcdb: %s\n", iscsi_get_error(iscsi));
			rc = 1;
			break;
		}
		ic_print_result(t);
		scsi_free_scsi_task(t);
	}
	fflush(stdout);
	ic_close(iscsi);
	return rc;
}
