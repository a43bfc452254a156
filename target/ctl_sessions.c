/*
 * tcqctl sessions (ctl_priv.h): every live session, its nexus and what it
 * negotiated.
 */
#include <stdio.h>
#include <stdlib.h>
#include "target/conn.h"	/* struct cmd, for session.h */
#include "target/ctl_priv.h"
#include "target/session.h"

#define CTL_MAX_SESSIONS 4096	/* listed per request */

static json_object *params_json(const struct login_params *p)
{
	json_object *o = json_object_new_object();

	ctl_add_str(o, "HeaderDigest", p->header_digest ? "CRC32C" : "None");
	ctl_add_str(o, "DataDigest", p->data_digest ? "CRC32C" : "None");
	ctl_add_u64(o, "MaxRecvDataSegmentLength", p->max_recv_dsl);
	ctl_add_u64(o, "MaxXmitDataSegmentLength", p->max_send_dsl);
	ctl_add_u64(o, "MaxConnections", p->max_connections);
	ctl_add_bool(o, "InitialR2T", p->initial_r2t);
	ctl_add_bool(o, "ImmediateData", p->immediate_data);
	ctl_add_u64(o, "MaxBurstLength", p->max_burst);
	ctl_add_u64(o, "FirstBurstLength", p->first_burst);
	ctl_add_u64(o, "DefaultTime2Wait", p->default_time2wait);
	ctl_add_u64(o, "DefaultTime2Retain", p->default_time2retain);
	ctl_add_u64(o, "MaxOutstandingR2T", p->max_outstanding_r2t);
	ctl_add_bool(o, "DataPDUInOrder", p->data_pdu_in_order);
	ctl_add_bool(o, "DataSequenceInOrder", p->data_sequence_in_order);
	ctl_add_u64(o, "ErrorRecoveryLevel", p->erl);
	return o;
}

json_object *ctl_cmd_sessions(struct ctl_conn *cc, char **argv, int argc)
{
	struct sess_info *si = calloc(CTL_MAX_SESSIONS, sizeof(*si));
	json_object *r, *arr;
	unsigned n;

	if (!si)
		return ctl_reply_err("out of memory");
	n = sess_list(si, CTL_MAX_SESSIONS);
	r = ctl_reply_ok();
	arr = json_object_new_array();
	for (unsigned i = 0; i < n && i < CTL_MAX_SESSIONS; i++) {
		json_object *o = json_object_new_object();
		char isid[13];

		snprintf(isid, sizeof(isid), "%02x%02x%02x%02x%02x%02x",
			 si[i].isid[0], si[i].isid[1], si[i].isid[2],
			 si[i].isid[3], si[i].isid[4], si[i].isid[5]);
		ctl_add_u64(o, "tsih", si[i].tsih);
		ctl_add_str(o, "type",
			    si[i].discovery ? "discovery" : "normal");
		ctl_add_str(o, "initiator", si[i].initiator);
		ctl_add_str(o, "isid", isid);
		ctl_add_str(o, "target", si[i].target);
		ctl_add_str(o, "peer", si[i].peer);
		json_object_object_add(o, "reactor",
				       json_object_new_int(si[i].reactor));
		json_object_object_add(o, "params", params_json(&si[i].params));
		json_object_array_add(arr, o);
	}
	ctl_add_u64(r, "count", n);
	json_object_object_add(r, "sessions", arr);
	free(si);
	return r;
}
