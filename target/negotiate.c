/*
 * Key negotiation (RFC 7143 section 6.2 and the key definitions of section
 * 13, plus iSCSIProtocolLevel from RFC 7144). The target is the responder
 * for the initiator's offers and the originator of its own few offers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/kv_value.h"
#include "tcq/log.h"
#include "target/negotiate.h"

#define NUM_24BIT_MAX 16777215u
#define OUR_PROTOCOL_LEVEL 1

enum key_id {
	K_HEADER_DIGEST, K_DATA_DIGEST, K_MAX_CONNECTIONS, K_SEND_TARGETS,
	K_TARGET_NAME, K_INITIATOR_NAME, K_TARGET_ALIAS, K_INITIATOR_ALIAS,
	K_TARGET_ADDRESS, K_TPGT, K_INITIAL_R2T, K_IMMEDIATE_DATA, K_MRDSL,
	K_MAX_BURST, K_FIRST_BURST, K_TIME2WAIT, K_TIME2RETAIN, K_MAX_OUT_R2T,
	K_DATA_PDU_IN_ORDER, K_DATA_SEQ_IN_ORDER, K_ERL, K_SESSION_TYPE,
	K_AUTH_METHOD, K_TASK_REPORTING, K_PROTOCOL_LEVEL, K_IFMARKER,
	K_OFMARKER, K_IFMARKINT, K_OFMARKINT,
	K_COUNT
};

enum key_kind {
	KK_LIST,	/* pick the first of the offer we support */
	KK_BOOL_AND, KK_BOOL_OR,
	KK_NUM_MIN, KK_NUM_MAX,
	KK_NUM_DECL,	/* declarative number (MaxRecvDataSegmentLength) */
	KK_STR_DECL,	/* declarative string */
	KK_SPECIAL,	/* handled case by case */
};

enum key_use {
	KU_IO,		/* login only, any connection (initialize only) */
	KU_LO,		/* login only, leading connection */
	KU_ALL,		/* login and full feature phase */
	KU_FFP,		/* full feature phase only */
	KU_SEC,		/* security stage only */
};

struct keydef {
	const char *name;
	enum key_kind kind;
	enum key_use use;
	uint32_t min, max;
	bool irrelevant_in_discovery;
};

static const struct keydef keys[K_COUNT] = {
	[K_HEADER_DIGEST] = { "HeaderDigest", KK_LIST, KU_IO, 0, 0, false },
	[K_DATA_DIGEST] = { "DataDigest", KK_LIST, KU_IO, 0, 0, false },
	[K_MAX_CONNECTIONS] = { "MaxConnections", KK_NUM_MIN, KU_LO, 1, 65535, true },
	[K_SEND_TARGETS] = { "SendTargets", KK_SPECIAL, KU_FFP, 0, 0, false },
	[K_TARGET_NAME] = { "TargetName", KK_STR_DECL, KU_IO, 0, 0, false },
	[K_INITIATOR_NAME] = { "InitiatorName", KK_STR_DECL, KU_IO, 0, 0, false },
	[K_TARGET_ALIAS] = { "TargetAlias", KK_SPECIAL, KU_ALL, 0, 0, false },
	[K_INITIATOR_ALIAS] = { "InitiatorAlias", KK_STR_DECL, KU_ALL, 0, 0, false },
	[K_TARGET_ADDRESS] = { "TargetAddress", KK_SPECIAL, KU_ALL, 0, 0, false },
	[K_TPGT] = { "TargetPortalGroupTag", KK_SPECIAL, KU_IO, 0, 0, false },
	[K_INITIAL_R2T] = { "InitialR2T", KK_BOOL_OR, KU_LO, 0, 0, true },
	[K_IMMEDIATE_DATA] = { "ImmediateData", KK_BOOL_AND, KU_LO, 0, 0, true },
	[K_MRDSL] = { "MaxRecvDataSegmentLength", KK_NUM_DECL, KU_ALL, 512, NUM_24BIT_MAX, false },
	[K_MAX_BURST] = { "MaxBurstLength", KK_NUM_MIN, KU_LO, 512, NUM_24BIT_MAX, true },
	[K_FIRST_BURST] = { "FirstBurstLength", KK_NUM_MIN, KU_LO, 512, NUM_24BIT_MAX, true },
	[K_TIME2WAIT] = { "DefaultTime2Wait", KK_NUM_MAX, KU_LO, 0, 3600, false },
	[K_TIME2RETAIN] = { "DefaultTime2Retain", KK_NUM_MIN, KU_LO, 0, 3600, false },
	[K_MAX_OUT_R2T] = { "MaxOutstandingR2T", KK_NUM_MIN, KU_LO, 1, 65535, true },
	[K_DATA_PDU_IN_ORDER] = { "DataPDUInOrder", KK_BOOL_OR, KU_LO, 0, 0, true },
	[K_DATA_SEQ_IN_ORDER] = { "DataSequenceInOrder", KK_BOOL_OR, KU_LO, 0, 0, true },
	[K_ERL] = { "ErrorRecoveryLevel", KK_NUM_MIN, KU_LO, 0, 2, false },
	[K_SESSION_TYPE] = { "SessionType", KK_SPECIAL, KU_LO, 0, 0, false },
	[K_AUTH_METHOD] = { "AuthMethod", KK_LIST, KU_SEC, 0, 0, false },
	[K_TASK_REPORTING] = { "TaskReporting", KK_LIST, KU_LO, 0, 0, true },
	[K_PROTOCOL_LEVEL] = { "iSCSIProtocolLevel", KK_NUM_MIN, KU_IO, 0, 31, false },
	[K_IFMARKER] = { "IFMarker", KK_SPECIAL, KU_IO, 0, 0, false },
	[K_OFMARKER] = { "OFMarker", KK_SPECIAL, KU_IO, 0, 0, false },
	[K_IFMARKINT] = { "IFMarkInt", KK_SPECIAL, KU_IO, 0, 0, false },
	[K_OFMARKINT] = { "OFMarkInt", KK_SPECIAL, KU_IO, 0, 0, false },
};

static int key_lookup(const char *name)
{
	for (int i = 0; i < K_COUNT; i++)
		if (strcmp(keys[i].name, name) == 0)
			return i;
	return -1;
}

#define BIT(k) (1ULL << (k))

void neg_init(struct neg *n, const struct tcq_settings *set,
	      const struct iscsi_params *start, bool leading)
{
	memset(n, 0, sizeof(*n));
	n->set = set;
	n->leading = leading;
	if (start)
		n->p = *start;
	else
		param_defaults(&n->p);
	n->p.max_recv_dsl = set->max_recv_dsl;
	n->auth_accept = "None";
}

static int answer(struct kvbuf *rsp, const char *key, const char *value)
{
	return kvbuf_add(rsp, key, value) ? NEG_ERR_NOMEM : NEG_OK;
}

static int answer_num(struct kvbuf *rsp, const char *key, uint64_t v)
{
	return kvbuf_addf(rsp, key, "%llu", (unsigned long long)v) ?
		NEG_ERR_NOMEM : NEG_OK;
}

static uint32_t our_num(const struct neg *n, int k)
{
	switch (k) {
	case K_MAX_CONNECTIONS: return 1;
	case K_MAX_BURST: return n->set->max_burst;
	case K_FIRST_BURST:
		return n->set->first_burst < n->set->max_burst ?
			n->set->first_burst : n->set->max_burst;
	case K_TIME2WAIT: return 2;
	case K_TIME2RETAIN: return 20;
	case K_MAX_OUT_R2T: return n->set->max_outstanding_r2t;
	case K_ERL: return 0;
	case K_PROTOCOL_LEVEL: return OUR_PROTOCOL_LEVEL;
	default: return 0;
	}
}

static bool our_bool(const struct neg *n, int k)
{
	switch (k) {
	case K_INITIAL_R2T: return n->set->initial_r2t;
	case K_IMMEDIATE_DATA: return n->set->immediate_data;
	default: return true;	/* DataPDUInOrder, DataSequenceInOrder */
	}
}

static void store_num(struct neg *n, int k, uint32_t v)
{
	switch (k) {
	case K_MAX_CONNECTIONS: n->p.max_connections = v; break;
	case K_MRDSL: n->p.max_send_dsl = v; break;
	case K_MAX_BURST: n->p.max_burst = v; break;
	case K_FIRST_BURST: n->p.first_burst = v; break;
	case K_TIME2WAIT: n->p.default_time2wait = v; break;
	case K_TIME2RETAIN: n->p.default_time2retain = v; break;
	case K_MAX_OUT_R2T: n->p.max_outstanding_r2t = v; break;
	case K_ERL: n->p.erl = (uint8_t)v; break;
	default: break;
	}
}

static void store_bool(struct neg *n, int k, bool v)
{
	switch (k) {
	case K_INITIAL_R2T: n->p.initial_r2t = v; break;
	case K_IMMEDIATE_DATA: n->p.immediate_data = v; break;
	case K_DATA_PDU_IN_ORDER: n->p.data_pdu_in_order = v; break;
	case K_DATA_SEQ_IN_ORDER: n->p.data_sequence_in_order = v; break;
	default: break;
	}
}

static const char *digest_accept(const struct neg *n, int k)
{
	bool allowed = k == K_HEADER_DIGEST ? n->set->header_digest_allowed :
					      n->set->data_digest_allowed;
	return allowed ? "CRC32C,None" : "None";
}

/* The initiator's answer to one of our offers: apply the same function. */
static int take_answer(struct neg *n, int k, const char *value)
{
	const struct keydef *d = &keys[k];
	uint64_t v;
	bool b;

	n->answered |= BIT(k);
	if (kv_is_refusal(value)) {
		log_debug("initiator answered %s=%s; default applies",
			  d->name, value);
		return NEG_OK;
	}
	switch (d->kind) {
	case KK_NUM_MIN:
	case KK_NUM_MAX:
		if (kv_parse_number(value, &v) || v < d->min || v > d->max)
			goto bad;
		if (d->kind == KK_NUM_MIN)
			v = v < our_num(n, k) ? v : our_num(n, k);
		else
			v = v > our_num(n, k) ? v : our_num(n, k);
		store_num(n, k, (uint32_t)v);
		return NEG_OK;
	case KK_BOOL_AND:
	case KK_BOOL_OR:
		if (kv_parse_bool(value, &b))
			goto bad;
		store_bool(n, k, d->kind == KK_BOOL_AND ? (b && our_bool(n, k)) :
							 (b || our_bool(n, k)));
		return NEG_OK;
	default:
		return NEG_OK;
	}
bad:
	n->why = "bad answer to a target offer";
	return NEG_ERR_PROTOCOL;
}

struct neg_ctx {
	struct neg *n;
	enum neg_stage st;
	struct kvbuf *rsp;
};

static int copy_name(char *dst, const char *v)
{
	size_t l = strlen(v);

	if (l == 0 || l >= TCQ_NAME_MAX)
		return -1;
	memcpy(dst, v, l + 1);
	return 0;
}

static void copy_trunc(char *dst, size_t dstsz, const char *v)
{
	size_t l = strnlen(v, dstsz - 1);

	memcpy(dst, v, l);
	dst[l] = '\0';
}

/* One key=value from the initiator. */
static int neg_key(void *arg, const char *key, const char *value)
{
	struct neg_ctx *x = arg;
	struct neg *n = x->n;
	struct kvbuf *rsp = x->rsp;
	const struct keydef *d;
	int k = key_lookup(key);
	uint64_t v;
	bool b;
	char pick[NEG_AUTH_MAX];

	if (k < 0) {
		/* CHAP and other security keys belong to the auth module. */
		if (x->st == NEG_SECURITY && n->auth_key &&
		    strncmp(key, "CHAP_", 5) == 0)
			return n->auth_key(n->auth_arg, key, value, rsp);
		/* X-, X# private keys and anything else unknown. */
		return answer(rsp, key, "NotUnderstood");
	}
	d = &keys[k];
	if (n->seen & BIT(k)) {
		n->why = "key negotiated twice";
		return NEG_ERR_PROTOCOL;
	}
	n->seen |= BIT(k);

	if (strlen(value) > KV_VALUE_STD_MAX)
		return answer(rsp, key, "Reject");

	/* Where may this key appear? */
	if (x->st == NEG_FFP) {
		if (d->use != KU_ALL && d->use != KU_FFP)
			return answer(rsp, key, "Reject");
	} else {
		if (d->use == KU_FFP)
			return answer(rsp, key, "Irrelevant");
		if (d->use == KU_SEC && x->st != NEG_SECURITY) {
			n->why = "security key in the operational stage";
			return NEG_ERR_PROTOCOL;
		}
		if (d->use == KU_LO && !n->leading)
			return answer(rsp, key, "Reject");
	}

	/* The initiator answering one of our offers. */
	if (n->offered & BIT(k))
		return take_answer(n, k, value);

	if (d->irrelevant_in_discovery &&
	    n->session_type == NEG_SESS_DISCOVERY)
		return answer(rsp, key, "Irrelevant");

	switch (d->kind) {
	case KK_NUM_MIN:
	case KK_NUM_MAX:
		if (kv_parse_number(value, &v) || v < d->min || v > d->max)
			return answer(rsp, key, "Reject");
		if (d->kind == KK_NUM_MIN)
			v = v < our_num(n, k) ? v : our_num(n, k);
		else
			v = v > our_num(n, k) ? v : our_num(n, k);
		store_num(n, k, (uint32_t)v);
		return answer_num(rsp, key, v);
	case KK_NUM_DECL:
		if (kv_parse_number(value, &v) || v < d->min || v > d->max)
			return answer(rsp, key, "Reject");
		store_num(n, k, (uint32_t)v);
		if (x->st == NEG_FFP)
			n->mrdsl_changed = true;
		return NEG_OK;
	case KK_BOOL_AND:
	case KK_BOOL_OR:
		if (kv_parse_bool(value, &b))
			return answer(rsp, key, "Reject");
		b = d->kind == KK_BOOL_AND ? (b && our_bool(n, k)) :
					     (b || our_bool(n, k));
		store_bool(n, k, b);
		return answer(rsp, key, b ? "Yes" : "No");
	case KK_LIST: {
		const char *accept;

		if (k == K_AUTH_METHOD)
			accept = n->auth_accept;
		else if (k == K_TASK_REPORTING)
			accept = "RFC3720";
		else
			accept = digest_accept(n, k);
		if (!kv_list_pick(value, accept, pick, sizeof(pick))) {
			if (k == K_AUTH_METHOD)
				n->auth_rejected = true;
			return answer(rsp, key, "Reject");
		}
		if (k == K_HEADER_DIGEST)
			n->p.header_digest = !strcmp(pick, "CRC32C");
		else if (k == K_DATA_DIGEST)
			n->p.data_digest = !strcmp(pick, "CRC32C");
		else if (k == K_AUTH_METHOD)
			memcpy(n->auth_method, pick, strlen(pick) + 1);
		return answer(rsp, key, pick);
	}
	case KK_STR_DECL:
		if (k == K_INITIATOR_NAME) {
			if (copy_name(n->initiator_name, value))
				return answer(rsp, key, "Reject");
			n->have_initiator_name = true;
		} else if (k == K_TARGET_NAME) {
			if (copy_name(n->target_name, value))
				return answer(rsp, key, "Reject");
			n->have_target_name = true;
		} else if (k == K_INITIATOR_ALIAS) {
			copy_trunc(n->initiator_alias,
				   sizeof(n->initiator_alias), value);
		}
		return NEG_OK;
	case KK_SPECIAL:
		break;
	}

	switch (k) {
	case K_SESSION_TYPE:
		if (!strcmp(value, "Normal"))
			n->session_type = NEG_SESS_NORMAL;
		else if (!strcmp(value, "Discovery"))
			n->session_type = NEG_SESS_DISCOVERY;
		else
			return answer(rsp, key, "Reject");
		return NEG_OK;
	case K_SEND_TARGETS:
		if (strlen(value) >= sizeof(n->send_targets_val))
			return answer(rsp, key, "Reject");
		n->send_targets = true;
		copy_trunc(n->send_targets_val, sizeof(n->send_targets_val),
			   value);
		return NEG_OK;
	case K_TARGET_ALIAS:
		/* Sent by targets only. */
		return answer(rsp, key, "Irrelevant");
	case K_TARGET_ADDRESS:
	case K_TPGT:
		return answer(rsp, key, "Reject");
	case K_IFMARKER:
	case K_OFMARKER:
	case K_IFMARKINT:
	case K_OFMARKINT:
		/* RFC 7143 13.26: obsolete keys are answered with Reject. */
		return answer(rsp, key, "Reject");
	}
	return answer(rsp, key, "NotUnderstood");
}

/* SessionType steers the rest, so it is looked up before the other keys. */
static int pre_session_type(void *arg, const char *key, const char *value)
{
	struct neg *n = arg;

	if (strcmp(key, "SessionType") == 0 &&
	    n->session_type == NEG_SESS_UNSET) {
		if (!strcmp(value, "Discovery"))
			n->session_type = NEG_SESS_DISCOVERY;
		else if (!strcmp(value, "Normal"))
			n->session_type = NEG_SESS_NORMAL;
	}
	return 0;
}

int neg_process(struct neg *n, enum neg_stage st, const char *text,
		size_t len, struct kvbuf *rsp)
{
	struct neg_ctx x = { n, st, rsp };
	const char *why = NULL;
	int rc;

	n->why = NULL;
	if (st != NEG_FFP && kv_split(text, len, pre_session_type, n, &why)) {
		n->why = why;
		return NEG_ERR_PROTOCOL;
	}
	rc = kv_split(text, len, neg_key, &x, &why);
	if (rc == -1 && why) {
		n->why = why;
		return NEG_ERR_PROTOCOL;
	}
	return rc;
}

/* RFC 7143 default of an offerable key. */
static uint32_t def_num(int k)
{
	switch (k) {
	case K_MAX_BURST: return 262144;
	case K_FIRST_BURST: return 65536;
	case K_MAX_OUT_R2T: return 1;
	case K_INITIAL_R2T: return 1;
	case K_IMMEDIATE_DATA: return 1;
	default: return 0;
	}
}

/* Offers a key the initiator has not sent, if ours is not the default. */
static int offer(struct neg *n, int k, struct kvbuf *rsp)
{
	const struct keydef *d = &keys[k];
	bool is_num = d->kind == KK_NUM_MIN;
	uint32_t ours = is_num ? our_num(n, k) : our_bool(n, k);
	uint32_t def = def_num(k);
	int rc;

	if ((n->seen & BIT(k)) || ours == def)
		return NEG_OK;
	if (is_num)
		rc = answer_num(rsp, d->name, ours);
	else
		rc = answer(rsp, d->name, ours ? "Yes" : "No");
	if (rc)
		return rc;
	n->offered |= BIT(k);
	/* Provisional result until the answer comes: the key's function
	 * applied to our value and the default. */
	if (is_num)
		store_num(n, k, ours < def ? ours : def);
	else if (d->kind == KK_BOOL_OR)
		store_bool(n, k, ours || def);
	else
		store_bool(n, k, ours && def);
	return NEG_OK;
}

int neg_add_offers(struct neg *n, enum neg_stage st, struct kvbuf *rsp)
{
	static const int offerable[] = { K_MAX_BURST, K_FIRST_BURST,
		K_MAX_OUT_R2T, K_INITIAL_R2T, K_IMMEDIATE_DATA };
	int rc;

	if (!n->mrdsl_declared) {
		rc = answer_num(rsp, "MaxRecvDataSegmentLength",
				n->set->max_recv_dsl);
		if (rc)
			return rc;
		n->mrdsl_declared = true;
	}
	if (n->offers_made || st != NEG_OPERATIONAL || !n->leading ||
	    n->session_type == NEG_SESS_DISCOVERY)
		return NEG_OK;
	n->offers_made = true;
	for (size_t i = 0; i < sizeof(offerable) / sizeof(offerable[0]); i++) {
		rc = offer(n, offerable[i], rsp);
		if (rc)
			return rc;
	}
	return NEG_OK;
}

bool neg_pending(const struct neg *n)
{
	return (n->offered & ~n->answered) != 0;
}

void neg_result(const struct neg *n, struct iscsi_params *out)
{
	*out = n->p;
	if (out->first_burst > out->max_burst)
		out->first_burst = out->max_burst;
}
