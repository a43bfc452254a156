/*
 * iscsiclient: the libiscsi session the client programs of the
 * integration tests open (scsicmd, rawcdb, rbdcmd, chapclient, prclient,
 * prgw), and the one way they print a command's outcome.
 */
#ifndef TCQ_TESTS_ISCSICLIENT_H
#define TCQ_TESTS_ISCSICLIENT_H
#include <stdbool.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

struct ic_opts {
	const char *prog;		/* prefix of error messages */
	/* InitiatorName: initiator if set, else $INITIATOR if set, else
	 * default_initiator. */
	const char *initiator, *default_initiator;
	/* A fixed ISID (OUI format, OUI 0xacde48, this qualifier) when
	 * non-zero: every run is the same initiator port. */
	unsigned isid_qualifier;
	bool set_header_digest;		/* else libiscsi's default */
	enum iscsi_header_digest header_digest;
	/* Log in only: no TEST UNIT READY (that fails through a standby
	 * port) as iscsi_full_connect_sync sends. */
	bool login_only;
	/* CHAP: the initiator's name and secret (besides any in the URL),
	 * and the target's for mutual CHAP. */
	const char *chap_user, *chap_secret;
	const char *target_user, *target_secret;
};

/* Opens a session to the LU of url. Returns 0 (*out, *lun set), 1 when
 * the login failed, 2 for a bad URL; the reason went to stderr. */
int ic_connect(const char *url, const struct ic_opts *o,
	       struct iscsi_context **out, int *lun);
/* Logs out and frees the context. */
void ic_close(struct iscsi_context *iscsi);

/* "CHECK CONDITION key=0xK asc=0xAA ascq=0xQQ" without a newline. */
void ic_print_check(const struct scsi_task *t);
/* One line for t: "GOOD", the CHECK CONDITION above, or "STATUS 0xSS". */
void ic_print_status(const struct scsi_task *t);
/* The same, but a GOOD line carries the Data-In: "GOOD HEX..." ("-" when
 * none). */
void ic_print_result(const struct scsi_task *t);

/* One hex digit's value, or -1. */
int ic_hexval(char c);
/* Runs the CDB (len bytes) on lun, reading alloc bytes of Data-In (0:
 * none): the task, or NULL on a transport error (iscsi_get_error says). */
struct scsi_task *ic_run_cdb(struct iscsi_context *iscsi, int lun,
			     const unsigned char *cdb, int len,
			     unsigned long alloc);
#endif
