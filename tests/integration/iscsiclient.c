/*
 * iscsiclient: one libiscsi session for a client program (see
 * iscsiclient.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

int ic_connect(const char *url, const struct ic_opts *o,
	       struct iscsi_context **out, int *lun)
{
	const char *env = getenv("INITIATOR");
	const char *name = o->initiator ? o->initiator :
			   env && *env ? env : o->default_initiator;
	struct iscsi_context *iscsi = iscsi_create_context(name);
	struct iscsi_url *u;
	int rc = 1;

	if (!iscsi) {
		fprintf(stderr, "%s: cannot create a libiscsi context\n", o->prog);
		return 1;
	}
	if (o->isid_qualifier)
		iscsi_set_isid_oui(iscsi, 0xacde48, o->isid_qualifier);
	u = iscsi_parse_full_url(iscsi, url);
	if (!u) {
		fprintf(stderr, "%s: bad URL: %s\n", o->prog,
			iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return 2;
	}
	iscsi_set_targetname(iscsi, u->target);
	iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
	if (o->set_header_digest)
		iscsi_set_header_digest(iscsi, o->header_digest);
	if ((o->chap_user &&
	     iscsi_set_initiator_username_pwd(iscsi, o->chap_user,
					      o->chap_secret)) ||
	    (o->target_user &&
	     iscsi_set_target_username_pwd(iscsi, o->target_user,
					   o->target_secret))) {
		fprintf(stderr, "%s: %s\n", o->prog, iscsi_get_error(iscsi));
		goto fail;
	}
	if (o->login_only ?
	    iscsi_connect_sync(iscsi, u->portal) != 0 ||
	    iscsi_login_sync(iscsi) != 0 :
	    iscsi_full_connect_sync(iscsi, u->portal, u->lun) != 0) {
		fprintf(stderr, "%s: login failed: %s\n", o->prog,
			iscsi_get_error(iscsi));
		goto fail;
	}
	*lun = u->lun;
	iscsi_destroy_url(u);
	*out = iscsi;
	return 0;
fail:
	iscsi_destroy_url(u);
	iscsi_destroy_context(iscsi);
	return rc;
}

void ic_close(struct iscsi_context *iscsi)
{
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
}

void ic_print_check(const struct scsi_task *t)
{
	printf("CHECK CONDITION key=0x%x asc=0x%02x ascq=0x%02x",
	       (unsigned)t->sense.key, (unsigned)(t->sense.ascq >> 8),
	       (unsigned)(t->sense.ascq & 0xff));
}

void ic_print_status(const struct scsi_task *t)
{
	if (t->status == SCSI_STATUS_GOOD) {
		printf("GOOD\n");
	} else if (t->status == SCSI_STATUS_CHECK_CONDITION) {
		ic_print_check(t);
		printf("\n");
	} else {
		printf("STATUS 0x%02x\n", (unsigned)t->status);
	}
}

void ic_print_result(const struct scsi_task *t)
{
	if (t->status != SCSI_STATUS_GOOD) {
		ic_print_status(t);
		return;
	}
	printf("GOOD ");
	for (int k = 0; k < t->datain.size; k++)
		printf("%02x", t->datain.data[k]);
	printf("%s\n", t->datain.size > 0 ? "" : "-");
}

int ic_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct scsi_task *ic_run_cdb(struct iscsi_context *iscsi, int lun,
			     const unsigned char *cdb, int len,
			     unsigned long alloc)
{
	struct scsi_task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	memcpy(t->cdb, cdb, (size_t)len);
	t->cdb_size = len;
	t->xfer_dir = alloc ? SCSI_XFER_READ : SCSI_XFER_NONE;
	t->expxferlen = (int)alloc;
	if (!iscsi_scsi_command_sync(iscsi, lun, t, NULL)) {
		scsi_free_scsi_task(t);
		return NULL;
	}
	return t;
}
