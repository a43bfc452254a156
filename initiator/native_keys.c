/*
 * Operational keys from the initiator's side (RFC 7143 section 13): what
 * we offer, and how each answer of the target is judged by its row in the
 * key table (tcq/login_keys.h). A min/max key's answer must be what the
 * result function gives for our offer, a boolean's follows its AND/OR
 * rule, a list answer must be one we offered; the declarative
 * MaxRecvDataSegmentLength is taken as the target's own limit.
 * NotUnderstood, Irrelevant and Reject leave the RFC default in force.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/native.h"
#include "tcq/kv_value.h"
#include "tcq/log.h"

/* The keys we offer, in the order they go on the wire. */
static const enum login_key_id offered[] = {
	LOGIN_KEY_HEADER_DIGEST, LOGIN_KEY_DATA_DIGEST,
	LOGIN_KEY_MAX_RECV_DSL, LOGIN_KEY_MAX_BURST, LOGIN_KEY_FIRST_BURST,
	LOGIN_KEY_IMMEDIATE_DATA, LOGIN_KEY_INITIAL_R2T,
	LOGIN_KEY_MAX_OUTSTANDING_R2T, LOGIN_KEY_MAX_CONNECTIONS,
	LOGIN_KEY_ERROR_RECOVERY_LEVEL, LOGIN_KEY_TIME2WAIT,
	LOGIN_KEY_TIME2RETAIN, LOGIN_KEY_DATA_PDU_IN_ORDER,
	LOGIN_KEY_DATA_SEQUENCE_IN_ORDER,
};
#define N_OFFERED (sizeof(offered) / sizeof(offered[0]))

void native_offer_defaults(struct native_offer *o)
{
	memset(o, 0, sizeof(*o));
	o->max_recv_dsl = 262144;
	o->max_burst = 16776192;
	o->first_burst = 1048576;
	o->max_outstanding_r2t = 4;
	o->default_time2wait = 0;
	o->default_time2retain = 0;
}

/* Our value of an offered key: a number, a boolean as 0/1, or for a
 * digest whether we offer CRC32C. */
static uint32_t our_value(const struct native_offer *o, enum login_key_id id)
{
	switch (id) {
	case LOGIN_KEY_HEADER_DIGEST: return o->header_digest;
	case LOGIN_KEY_DATA_DIGEST: return o->data_digest;
	case LOGIN_KEY_MAX_RECV_DSL: return o->max_recv_dsl;
	case LOGIN_KEY_MAX_BURST: return o->max_burst;
	case LOGIN_KEY_FIRST_BURST: return o->first_burst;
	case LOGIN_KEY_MAX_OUTSTANDING_R2T: return o->max_outstanding_r2t;
	case LOGIN_KEY_TIME2WAIT: return o->default_time2wait;
	case LOGIN_KEY_TIME2RETAIN: return o->default_time2retain;
	case LOGIN_KEY_MAX_CONNECTIONS: return 1;	/* one connection */
	case LOGIN_KEY_ERROR_RECOVERY_LEVEL: return 0;
	case LOGIN_KEY_INITIAL_R2T: return 0;	/* unsolicited data: No */
	default: return 1;	/* ImmediateData and both InOrder keys: Yes */
	}
}

int native_offer_add(const struct native_offer *o, struct kvbuf *b)
{
	for (size_t i = 0; i < N_OFFERED; i++) {
		const struct login_key *k = login_key(offered[i]);
		uint32_t v = our_value(o, offered[i]);
		int rc;

		if (k->kind == LOGIN_KIND_LIST)
			rc = kvbuf_add(b, k->name, v ? "CRC32C,None" : "None");
		else if (k->kind == LOGIN_KIND_BOOLEAN)
			rc = kvbuf_add(b, k->name, kv_bool_text(v));
		else
			rc = kvbuf_addf(b, k->name, "%u", v);
		if (rc)
			return -1;
	}
	return 0;
}

void native_neg_init(struct native_neg *n, const struct native_offer *o)
{
	memset(n, 0, sizeof(*n));
	n->offer = *o;
	login_params_defaults(&n->p);
	n->p.max_recv_dsl = o->max_recv_dsl;	/* our declaration holds */
	kvbuf_init(&n->reply);
}

void native_neg_free(struct native_neg *n)
{
	kvbuf_free(&n->reply);
}

static bool we_offer(int id)
{
	for (size_t i = 0; i < N_OFFERED; i++)
		if ((int)offered[i] == id)
			return true;
	return false;
}

static int neg_fail(struct native_neg *n, const char *key, const char *value,
		    const char *why)
{
	snprintf(n->err, sizeof(n->err), "target answered %s=%s: %s",
		 key, value, why);
	return -1;
}

static int judge_digest(struct native_neg *n, enum login_key_id id,
			const char *value)
{
	const char *key = login_key(id)->name;

	if (!strcmp(value, "None"))
		login_params_store(&n->p, id, 0);
	else if (!strcmp(value, "CRC32C") && our_value(&n->offer, id))
		login_params_store(&n->p, id, 1);
	else
		return neg_fail(n, key, value, "not a value we offered");
	return 0;
}

static int judge_number(struct native_neg *n, enum login_key_id id,
			const char *value)
{
	const struct login_key *k = login_key(id);
	uint32_t offer = our_value(&n->offer, id);
	uint64_t v;

	if (k->rule == LOGIN_RULE_DECLARATIVE) {
		if (kv_parse_number_in(value, k->min, k->max, &v))
			return neg_fail(n, k->name, value,
					"out of range 512..16777215");
	} else {
		if (kv_parse_number_in(value, k->min, k->max, &v))
			return neg_fail(n, k->name, value,
					"not a number in range");
		if (login_key_result_number(k->rule, offer, v) != v)
			return neg_fail(n, k->name, value,
					k->rule == LOGIN_RULE_MIN ?
					"above our offer (result is the minimum)" :
					"below our offer (result is the maximum)");
	}
	login_params_store(&n->p, id, (uint32_t)v);
	return 0;
}

static int judge_bool(struct native_neg *n, enum login_key_id id,
		      const char *value)
{
	const struct login_key *k = login_key(id);
	bool offer = our_value(&n->offer, id), v;

	if (kv_parse_bool(value, &v))
		return neg_fail(n, k->name, value, "not Yes or No");
	/* AND with our No, or OR with our Yes, leaves no choice. */
	if (login_key_result_bool(k->rule, offer, v) != v)
		return neg_fail(n, k->name, value,
				k->rule == LOGIN_RULE_AND ?
				"AND with our No is No" : "OR with our Yes is Yes");
	login_params_store(&n->p, id, v);
	return 0;
}

int native_neg_answer(struct native_neg *n, const char *key,
		      const char *value)
{
	int id = login_key_lookup(key);

	/* What only targets declare (alias, address, portal group tag) is
	 * for information. */
	if (id >= 0 && login_key(id)->senders == LOGIN_SENT_BY_TARGET)
		return 0;
	if (id < 0 || !we_offer(id)) {
		/* A key we never offered is the target's proposal: answer. */
		log_debug("native: target proposed unknown key %s=%s", key, value);
		if (kvbuf_add(&n->reply, key, "NotUnderstood"))
			return neg_fail(n, key, value, "out of memory");
		return 0;
	}
	if (kv_is_refusal(value)) {
		/* The RFC default stays in force (login_params_defaults). */
		log_info("native: target answered %s=%s, using the default",
			 key, value);
		return 0;
	}
	switch (login_key(id)->kind) {
	case LOGIN_KIND_LIST:
		return judge_digest(n, id, value);
	case LOGIN_KIND_BOOLEAN:
		return judge_bool(n, id, value);
	default:
		return judge_number(n, id, value);
	}
}

void native_neg_finish(struct native_neg *n)
{
	struct login_params *p = &n->p;

	if (p->first_burst > p->max_burst)
		p->first_burst = p->max_burst;
	if (p->max_outstanding_r2t == 0)
		p->max_outstanding_r2t = 1;
}
