/*
 * The key table (see login_keys.h), row by row from the key definitions
 * of RFC 7143 section 13 (12.1 and 12.1.3 for AuthMethod and the CHAP
 * keys) and RFC 7144 for iSCSIProtocolLevel.
 */
#include <string.h>
#include "tcq/kv_value.h"
#include "tcq/login_keys.h"

#define NUM_24BIT_MAX 16777215u		/* 2^24 - 1 */

#define ROW(id_, name_, kind_, rule_, scope_, use_, senders_, min_, max_, \
	    def_, irr_)							\
	[id_] = { .name = name_, .kind = LOGIN_KIND_##kind_,		\
		  .rule = LOGIN_RULE_##rule_, .scope = LOGIN_SCOPE_##scope_, \
		  .use = LOGIN_USE_##use_, .senders = LOGIN_SENT_BY_##senders_, \
		  .min = min_, .max = max_, .rfc_default = def_,	\
		  .irrelevant_in_discovery = irr_ }

static const struct login_key login_keys[LOGIN_KEY_COUNT] = {
	ROW(LOGIN_KEY_HEADER_DIGEST, "HeaderDigest", LIST, FIRST_MATCH,
	    CONNECTION, IO, BOTH, 0, 0, "None", false),
	ROW(LOGIN_KEY_DATA_DIGEST, "DataDigest", LIST, FIRST_MATCH,
	    CONNECTION, IO, BOTH, 0, 0, "None", false),
	ROW(LOGIN_KEY_MAX_CONNECTIONS, "MaxConnections", NUMBER, MIN,
	    SESSION, LO, BOTH, 1, 65535, "1", true),
	ROW(LOGIN_KEY_SEND_TARGETS, "SendTargets", STRING, DECLARATIVE,
	    SESSION, FFP, INITIATOR, 0, 0, NULL, false),
	/* Sent by a target only in a SendTargets answer. */
	ROW(LOGIN_KEY_TARGET_NAME, "TargetName", STRING, DECLARATIVE,
	    SESSION, IO, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_INITIATOR_NAME, "InitiatorName", STRING, DECLARATIVE,
	    SESSION, IO, INITIATOR, 0, 0, NULL, false),
	ROW(LOGIN_KEY_TARGET_ALIAS, "TargetAlias", STRING, DECLARATIVE,
	    SESSION, ALL, TARGET, 0, 0, NULL, false),
	ROW(LOGIN_KEY_INITIATOR_ALIAS, "InitiatorAlias", STRING, DECLARATIVE,
	    SESSION, ALL, INITIATOR, 0, 0, NULL, false),
	ROW(LOGIN_KEY_TARGET_ADDRESS, "TargetAddress", STRING, DECLARATIVE,
	    SESSION, ALL, TARGET, 0, 0, NULL, false),
	/* A 16-bit binary-value, written as a number. */
	ROW(LOGIN_KEY_TARGET_PORTAL_GROUP_TAG, "TargetPortalGroupTag", NUMBER,
	    DECLARATIVE, SESSION, IO, TARGET, 0, 65535, NULL, false),
	ROW(LOGIN_KEY_INITIAL_R2T, "InitialR2T", BOOLEAN, OR,
	    SESSION, LO, BOTH, 0, 0, "Yes", true),
	ROW(LOGIN_KEY_IMMEDIATE_DATA, "ImmediateData", BOOLEAN, AND,
	    SESSION, LO, BOTH, 0, 0, "Yes", true),
	ROW(LOGIN_KEY_MAX_RECV_DSL, "MaxRecvDataSegmentLength", NUMBER,
	    DECLARATIVE, CONNECTION, ALL, BOTH, 512, NUM_24BIT_MAX, "8192",
	    false),
	ROW(LOGIN_KEY_MAX_BURST, "MaxBurstLength", NUMBER, MIN,
	    SESSION, LO, BOTH, 512, NUM_24BIT_MAX, "262144", true),
	ROW(LOGIN_KEY_FIRST_BURST, "FirstBurstLength", NUMBER, MIN,
	    SESSION, LO, BOTH, 512, NUM_24BIT_MAX, "65536", true),
	ROW(LOGIN_KEY_TIME2WAIT, "DefaultTime2Wait", NUMBER, MAX,
	    SESSION, LO, BOTH, 0, 3600, "2", false),
	ROW(LOGIN_KEY_TIME2RETAIN, "DefaultTime2Retain", NUMBER, MIN,
	    SESSION, LO, BOTH, 0, 3600, "20", false),
	ROW(LOGIN_KEY_MAX_OUTSTANDING_R2T, "MaxOutstandingR2T", NUMBER, MIN,
	    SESSION, LO, BOTH, 1, 65535, "1", true),
	ROW(LOGIN_KEY_DATA_PDU_IN_ORDER, "DataPDUInOrder", BOOLEAN, OR,
	    SESSION, LO, BOTH, 0, 0, "Yes", true),
	ROW(LOGIN_KEY_DATA_SEQUENCE_IN_ORDER, "DataSequenceInOrder", BOOLEAN,
	    OR, SESSION, LO, BOTH, 0, 0, "Yes", true),
	ROW(LOGIN_KEY_ERROR_RECOVERY_LEVEL, "ErrorRecoveryLevel", NUMBER, MIN,
	    SESSION, LO, BOTH, 0, 2, "0", false),
	ROW(LOGIN_KEY_SESSION_TYPE, "SessionType", STRING, DECLARATIVE,
	    SESSION, LO, INITIATOR, 0, 0, "Normal", false),
	ROW(LOGIN_KEY_AUTH_METHOD, "AuthMethod", LIST, FIRST_MATCH,
	    CONNECTION, SECURITY, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_TASK_REPORTING, "TaskReporting", LIST, FIRST_MATCH,
	    SESSION, LO, BOTH, 0, 0, "RFC3720", true),
	/* Initialize-only as this target has always treated it. */
	ROW(LOGIN_KEY_PROTOCOL_LEVEL, "iSCSIProtocolLevel", NUMBER, MIN,
	    SESSION, IO, BOTH, 0, 31, "0", false),
	/* Markers were dropped by RFC 7143; a peer may still send them. */
	ROW(LOGIN_KEY_IF_MARKER, "IFMarker", BOOLEAN, OBSOLETE,
	    CONNECTION, IO, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_OF_MARKER, "OFMarker", BOOLEAN, OBSOLETE,
	    CONNECTION, IO, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_IF_MARK_INT, "IFMarkInt", NUMBER, OBSOLETE,
	    CONNECTION, IO, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_OF_MARK_INT, "OFMarkInt", NUMBER, OBSOLETE,
	    CONNECTION, IO, BOTH, 0, 0, NULL, false),
	/* CHAP (12.1.3): the initiator lists algorithms, the target picks
	 * one and challenges; either side may challenge the other. */
	ROW(LOGIN_KEY_CHAP_A, "CHAP_A", LIST, AUTH,
	    CONNECTION, SECURITY, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_CHAP_I, "CHAP_I", NUMBER, AUTH,
	    CONNECTION, SECURITY, BOTH, 0, 255, NULL, false),
	ROW(LOGIN_KEY_CHAP_C, "CHAP_C", BINARY, AUTH,
	    CONNECTION, SECURITY, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_CHAP_N, "CHAP_N", STRING, AUTH,
	    CONNECTION, SECURITY, BOTH, 0, 0, NULL, false),
	ROW(LOGIN_KEY_CHAP_R, "CHAP_R", BINARY, AUTH,
	    CONNECTION, SECURITY, BOTH, 0, 0, NULL, false),
};

const struct login_key *login_key(enum login_key_id id)
{
	return &login_keys[id];
}

int login_key_lookup(const char *name)
{
	for (int i = 0; i < LOGIN_KEY_COUNT; i++)
		if (strcmp(login_keys[i].name, name) == 0)
			return i;
	return -1;
}

uint32_t login_key_default(enum login_key_id id)
{
	const struct login_key *k = &login_keys[id];
	uint64_t v;
	bool b;

	if (!k->rfc_default)
		return 0;
	if (k->kind == LOGIN_KIND_NUMBER &&
	    !kv_parse_number(k->rfc_default, &v))
		return (uint32_t)v;
	if (k->kind == LOGIN_KIND_BOOLEAN && !kv_parse_bool(k->rfc_default, &b))
		return b;
	return 0;
}

uint64_t login_key_result_number(enum login_key_rule rule, uint64_t a,
				 uint64_t b)
{
	if (rule == LOGIN_RULE_MAX)
		return a > b ? a : b;
	return a < b ? a : b;
}

bool login_key_result_bool(enum login_key_rule rule, bool a, bool b)
{
	return rule == LOGIN_RULE_OR ? (a || b) : (a && b);
}

bool login_params_store(struct login_params *p, enum login_key_id id,
			uint32_t v)
{
	switch (id) {
	case LOGIN_KEY_HEADER_DIGEST: p->header_digest = v != 0; break;
	case LOGIN_KEY_DATA_DIGEST: p->data_digest = v != 0; break;
	case LOGIN_KEY_MAX_CONNECTIONS: p->max_connections = v; break;
	case LOGIN_KEY_INITIAL_R2T: p->initial_r2t = v != 0; break;
	case LOGIN_KEY_IMMEDIATE_DATA: p->immediate_data = v != 0; break;
	case LOGIN_KEY_MAX_RECV_DSL: p->max_send_dsl = v; break;
	case LOGIN_KEY_MAX_BURST: p->max_burst = v; break;
	case LOGIN_KEY_FIRST_BURST: p->first_burst = v; break;
	case LOGIN_KEY_TIME2WAIT: p->default_time2wait = v; break;
	case LOGIN_KEY_TIME2RETAIN: p->default_time2retain = v; break;
	case LOGIN_KEY_MAX_OUTSTANDING_R2T: p->max_outstanding_r2t = v; break;
	case LOGIN_KEY_DATA_PDU_IN_ORDER: p->data_pdu_in_order = v != 0; break;
	case LOGIN_KEY_DATA_SEQUENCE_IN_ORDER:
		p->data_sequence_in_order = v != 0;
		break;
	case LOGIN_KEY_ERROR_RECOVERY_LEVEL: p->erl = (uint8_t)v; break;
	default:
		return false;
	}
	return true;
}

void login_params_defaults(struct login_params *p)
{
	/* Both digests default to None: false. */
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < LOGIN_KEY_COUNT; i++) {
		enum login_key_id id = (enum login_key_id)i;
		const struct login_key *k = &login_keys[id];

		if (k->rfc_default && (k->kind == LOGIN_KIND_NUMBER ||
				       k->kind == LOGIN_KIND_BOOLEAN))
			login_params_store(p, id, login_key_default(id));
	}
	/* Until declared, each side may receive the default length. */
	p->max_recv_dsl = p->max_send_dsl;
}
