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
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

static void usage(void)
{
	fprintf(stderr, "usage: chapclient [-i INITIATOR] [-u USER -s SECRET] "
			"[-U TUSER -S TSECRET] iscsi://HOST:PORT/IQN/LUN\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *initiator = "iqn.2026-11.org.tcq:chapclient";
	const char *user = NULL, *secret = NULL, *tuser = NULL, *tsecret = NULL;
	struct iscsi_context *iscsi;
	struct iscsi_url *url;
	struct scsi_task *task;
	int ch, rc = 1;

	while ((ch = getopt(argc, argv, "i:u:s:U:S:")) != -1) {
		switch (ch) {
		case 'i': initiator = optarg; break;
		case 'u': user = optarg; break;
		case 's': secret = optarg; break;
		case 'U': tuser = optarg; break;
		case 'S': tsecret = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !user != !secret || !tuser != !tsecret)
		usage();
	iscsi = iscsi_create_context(initiator);
	if (!iscsi) {
		fprintf(stderr, "chapclient: cannot create a libiscsi context\n");
		return 1;
	}
	url = iscsi_parse_full_url(iscsi, argv[optind]);
	if (!url) {
		fprintf(stderr, "chapclient: bad URL: %s\n", iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return 2;
	}
	iscsi_set_targetname(iscsi, url->target);
	iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE);
	if (user && iscsi_set_initiator_username_pwd(iscsi, user, secret)) {
		fprintf(stderr, "chapclient: %s\n", iscsi_get_error(iscsi));
		goto out;
	}
	if (tuser && iscsi_set_target_username_pwd(iscsi, tuser, tsecret)) {
		fprintf(stderr, "chapclient: %s\n", iscsi_get_error(iscsi));
		goto out;
	}
	if (iscsi_full_connect_sync(iscsi, url->portal, url->lun)) {
		fprintf(stderr, "chapclient: login failed: %s\n",
			iscsi_get_error(iscsi));
		goto out;
	}
	task = iscsi_testunitready_sync(iscsi, url->lun);
	if (!task || task->status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "chapclient: TEST UNIT READY failed: %s\n",
			iscsi_get_error(iscsi));
	} else {
		printf("chapclient: logged in%s, TEST UNIT READY good\n",
		       tuser ? " with mutual CHAP" : "");
		rc = 0;
	}
	if (task)
		scsi_free_scsi_task(task);
	iscsi_logout_sync(iscsi);
out:
	iscsi_destroy_url(url);
	iscsi_destroy_context(iscsi);
	return rc;
}
