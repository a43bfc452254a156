/*
 * chapclient: logs in to a target with libiscsi, one-way or mutual CHAP
 * (iscsi_set_target_username_pwd: libiscsi checks the target's answer),
 * sends TEST UNIT READY to the LUN and logs out. For auth.sh.
 *
 *   chapclient [-i INITIATOR] [-u USER -s SECRET] [-U TUSER -S TSECRET] URL
 *
 * Exit status: 0 logged in and the command succeeded, 1 login or command
 * failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/iscsiclient.h"

static void usage(void)
{
	fprintf(stderr, "usage: chapclient [-i INITIATOR] [-u USER -s SECRET] "
			"[-U TUSER -S TSECRET] iscsi://HOST:PORT/IQN/LUN\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ic_opts o = {
		.prog = "chapclient",
		.default_initiator = "iqn.2026-11.org.tcq:chapclient",
		.set_header_digest = true,
		.header_digest = ISCSI_HEADER_DIGEST_NONE,
	};
	struct iscsi_context *iscsi;
	struct scsi_task *task;
	int ch, lun, rc;

	while ((ch = getopt(argc, argv, "i:u:s:U:S:")) != -1) {
		switch (ch) {
		case 'i': o.initiator = optarg; break;
		case 'u': o.chap_user = optarg; break;
		case 's': o.chap_secret = optarg; break;
		case 'U': o.target_user = optarg; break;
		case 'S': o.target_secret = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !o.chap_user != !o.chap_secret ||
	    !o.target_user != !o.target_secret)
		usage();
	rc = ic_connect(argv[optind], &o, &iscsi, &lun);
	if (rc)
		return rc;
	rc = 1;
	task = iscsi_testunitready_sync(iscsi, lun);
	if (!task || task->status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "chapclient: TEST UNIT READY failed: %s\n",
			iscsi_get_error(iscsi));
	} else {
		printf("chapclient: logged in%s, TEST UNIT READY good\n",
		       o.target_user ? " with mutual CHAP" : "");
		rc = 0;
	}
	if (task)
		scsi_free_scsi_task(task);
	ic_close(iscsi);
	return rc;
}
