/*
 * livecdb: one libiscsi session held open while a test changes tcqd live;
 * CDBs come one per line on stdin, so the test decides when each is sent
 * (between tcqctl commands) and sees every unit attention as it comes.
 *
 *   livecdb URL          then on stdin:  LUN CDBHEX[:ALLOC]   or   quit
 *
 * "&LUN CDBHEX[:ALLOC]" sends the command without waiting ("SENT"); one
 * such may be out at a time. "pending" serves the session for 0.2 s and
 * prints "PENDING" while it has no answer, else "ASYNC " and the answer
 * (once). A later command's wait serves it too.
 *
 * One line out per line in, flushed: "GOOD HEX..." (the Data-In, "-"
 * when none), "CHECK CONDITION key=0xK asc=0xAA ascq=0xQQ", "STATUS 0xSS",
 * or "ERROR message" when the session failed (the client then stops
 * with status 1). Unlike rawcdb, a UNIT ATTENTION is printed, not
 * retried. Exit 0 at the end of input or "quit".
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

/* "LUN CDBHEX[:ALLOC]": 0 or -1. */
static int parse_line(const char *s, int *lun, unsigned char *cdb, int *len,
		      unsigned long *alloc)
{
	char hex[40];
	int n = 0;

	*alloc = 0;
	if (sscanf(s, "%d %39[0-9a-fA-F]%n", lun, hex, &n) < 2 || *lun < 0 ||
	    *lun > 255)
		return -1;
	if (s[n] == ':') {
		char *end;

		*alloc = strtoul(s + n + 1, &end, 0);
		if (end == s + n + 1 || *alloc > 1u << 20)
			return -1;
	}
	*len = (int)strlen(hex) / 2;
	if (strlen(hex) % 2 || *len < 6 || *len > 16)
		return -1;
	for (int i = 0; i < *len; i++)
		cdb[i] = (unsigned char)(ic_hexval(hex[2 * i]) << 4 |
					 ic_hexval(hex[2 * i + 1]));
	return 0;
}

/* The command sent with "&": out, answered, or none. */
static struct {
	bool out, answered;
	struct scsi_task *t;
} async;

static void async_done(struct iscsi_context *iscsi, int status, void *data,
		       void *priv)
{
	(void)iscsi; (void)status; (void)data; (void)priv;
	async.answered = true;	/* async.t holds the outcome */
}

/* Serves the session for ms milliseconds; -1 when it failed. */
static int serve(struct iscsi_context *iscsi, int ms)
{
	struct pollfd pfd = { .fd = iscsi_get_fd(iscsi) };

	pfd.events = (short)iscsi_which_events(iscsi);
	if (poll(&pfd, 1, ms) < 0)
		return -1;
	return pfd.revents && iscsi_service(iscsi, pfd.revents) < 0 ? -1 : 0;
}

static int send_async(struct iscsi_context *iscsi, int lun,
		      const unsigned char *cdb, int len, unsigned long alloc)
{
	struct scsi_task *t;

	if (async.out)
		return -1;
	if (!(t = calloc(1, sizeof(*t))))
		return -1;
	memcpy(t->cdb, cdb, (size_t)len);
	t->cdb_size = len;
	t->xfer_dir = alloc ? SCSI_XFER_READ : SCSI_XFER_NONE;
	t->expxferlen = (int)alloc;
	if (iscsi_scsi_command_async(iscsi, lun, t, async_done, NULL, NULL)) {
		scsi_free_scsi_task(t);
		return -1;
	}
	async.out = true;
	async.answered = false;
	async.t = t;
	/* Out on the wire before the answer "SENT". */
	for (int i = 0; i < 20 && iscsi_which_events(iscsi) & POLLOUT; i++)
		if (serve(iscsi, 50) < 0)
			return -1;
	return 0;
}

static void print_pending(struct iscsi_context *iscsi)
{
	for (int i = 0; i < 4 && async.out && !async.answered; i++)
		if (serve(iscsi, 50) < 0)
			break;
	if (!async.out || !async.answered) {
		printf("PENDING\n");
		return;
	}
	printf("ASYNC ");
	ic_print_result(async.t);
	scsi_free_scsi_task(async.t);
	async.out = false;
	async.t = NULL;
}

int main(int argc, char **argv)
{
	static const struct ic_opts o = {
		.prog = "livecdb",
		.default_initiator = "iqn.2026-11.org.tcq:livecdb",
		.login_only = true,
	};
	struct iscsi_context *iscsi;
	char line[256];
	int rc, url_lun;

	if (argc != 2) {
		fprintf(stderr, "usage: livecdb URL < LUN CDBHEX[:ALLOC] lines\n");
		return 2;
	}
	rc = ic_connect(argv[1], &o, &iscsi, &url_lun);
	if (rc)
		return rc;
	printf("READY\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned char cdb[16];
		unsigned long alloc;
		struct scsi_task *t;
		int lun, len;

		if (!strncmp(line, "quit", 4))
			break;
		if (!strncmp(line, "pending", 7)) {
			print_pending(iscsi);
			fflush(stdout);
			continue;
		}
		if (line[0] == '&') {
			bool sent = parse_line(line + 1, &lun, cdb, &len,
					       &alloc) == 0 &&
				    send_async(iscsi, lun, cdb, len, alloc) == 0;

			printf(sent ? "SENT\n" : "ERROR cannot send\n");
			fflush(stdout);
			continue;
		}
		if (parse_line(line, &lun, cdb, &len, &alloc) < 0) {
			printf("ERROR bad line\n");
			fflush(stdout);
			continue;
		}
		t = ic_run_cdb(iscsi, lun, cdb, len, alloc);
		if (!t) {
			printf("ERROR %s\n", iscsi_get_error(iscsi));
			fflush(stdout);
			rc = 1;
			break;
		}
		ic_print_result(t);
		fflush(stdout);
		scsi_free_scsi_task(t);
	}
	ic_close(iscsi);
	return rc;
}
