/*
 * Operational keys from the initiator's side (RFC 7143 section 13): what
 * we offer, and how each answer of the target is judged. A min/max key's
 * answer must lie on the right side of our offer, a boolean's follows its
 * AND/OR rule, a list answer must be one we offered; declarative keys are
 * taken as the target's own limits. NotUnderstood, Irrelevant and Reject
 * leave the RFC default in force.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/native.h"
#include "tcq/kv_value.h"
#include "tcq/log.h"

#define DSL_MIN 512u
#define DSL_MAX 16777215u

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

int native_offer_add(const struct native_offer *o, struct kvbuf *b)
{
	const char *hd = o->header_digest ? "CRC32C,None" : "None";
	const char *dd = o->data_digest ? "CRC32C,None" : "None";

	if (kvbuf_add(b, "HeaderDigest", hd) ||
	    kvbuf_add(b, "DataDigest", dd) ||
	    kvbuf_addf(b, "MaxRecvDataSegmentLength", "%u", o->max_recv_dsl) ||
	    kvbuf_addf(b, "MaxBurstLength", "%u", o->max_burst) ||
	    kvbuf_addf(b, "FirstBurstLength", "%u", o->first_burst) ||
	    kvbuf_add(b, "ImmediateData", "Yes") ||
	    kvbuf_add(b, "InitialR2T", "No") ||
	    kvbuf_addf(b, "MaxOutstandingR2T", "%u", o->max_outstanding_r2t) ||
	    kvbuf_add(b, "MaxConnections", "1") ||
	    kvbuf_add(b, "ErrorRecoveryLevel", "0") ||
	    kvbuf_addf(b, "DefaultTime2Wait", "%u", o->default_time2wait) ||
	    kvbuf_addf(b, "DefaultTime2Retain", "%u", o->default_time2retain) ||
	    kvbuf_add(b, "DataPDUInOrder", "Yes") ||
	    kvbuf_add(b, "DataSequenceInOrder", "Yes"))
		return -1;
	return 0;
}

void native_neg_init(struct native_neg *n, const struct native_offer *o)
{
	memset(n, 0, sizeof(*n));
	n->offer = *o;
	param_defaults(&n->p);
	n->p.max_recv_dsl = o->max_recv_dsl;	/* our declaration holds */
	kvbuf_init(&n->reply);
}

void native_neg_free(struct native_neg *n)
{
	kvbuf_free(&n->reply);
}

enum key_kind { K_DIGEST, K_DECL_DSL, K_MIN, K_MAX, K_AND, K_OR };

struct key_rule {
	const char *name;
	enum key_kind kind;
	uint32_t lo, hi;
};

static const struct key_rule key_rules[] = {
	{ "HeaderDigest", K_DIGEST, 0, 0 },
	{ "DataDigest", K_DIGEST, 0, 0 },
	{ "MaxRecvDataSegmentLength", K_DECL_DSL, DSL_MIN, DSL_MAX },
	{ "MaxBurstLength", K_MIN, DSL_MIN, DSL_MAX },
	{ "FirstBurstLength", K_MIN, DSL_MIN, DSL_MAX },
	{ "MaxOutstandingR2T", K_MIN, 1, 65535 },
	{ "MaxConnections", K_MIN, 1, 65535 },
	{ "ErrorRecoveryLevel", K_MIN, 0, 2 },
	{ "DefaultTime2Wait", K_MAX, 0, 3600 },
	{ "DefaultTime2Retain", K_MIN, 0, 3600 },
	{ "ImmediateData", K_AND, 0, 0 },
	{ "InitialR2T", K_OR, 0, 0 },
	{ "DataPDUInOrder", K_OR, 0, 0 },
	{ "DataSequenceInOrder", K_OR, 0, 0 },
};

/* Keys the target declares for information only. */
static const char *const info_keys[] = {
	"TargetAlias", "TargetPortalGroupTag", "TargetAddress",
};

static int neg_fail(struct native_neg *n, const char *key, const char *value,
		    const char *why)
{
	snprintf(n->err, sizeof(n->err), "target answered %s=%s: %s",
		 key, value, why);
	return -1;
}

/* Our offer for a numeric key, and where its result goes. */
static uint32_t *num_slot(struct native_neg *n, const char *key,
			  uint32_t *offer, uint32_t *erl_tmp)
{
	struct iscsi_params *p = &n->p;
	const struct native_offer *o = &n->offer;

	if (!strcmp(key, "MaxBurstLength")) {
		*offer = o->max_burst;
		return &p->max_burst;
	}
	if (!strcmp(key, "FirstBurstLength")) {
		*offer = o->first_burst;
		return &p->first_burst;
	}
	if (!strcmp(key, "MaxOutstandingR2T")) {
		*offer = o->max_outstanding_r2t;
		return &p->max_outstanding_r2t;
	}
	if (!strcmp(key, "MaxConnections")) {
		*offer = 1;
		return &p->max_connections;
	}
	if (!strcmp(key, "DefaultTime2Wait")) {
		*offer = o->default_time2wait;
		return &p->default_time2wait;
	}
	if (!strcmp(key, "DefaultTime2Retain")) {
		*offer = o->default_time2retain;
		return &p->default_time2retain;
	}
	/* ErrorRecoveryLevel is a uint8_t in iscsi_params. */
	*offer = 0;
	return erl_tmp;
}

static bool *bool_slot(struct native_neg *n, const char *key, bool *offer)
{
	struct iscsi_params *p = &n->p;

	if (!strcmp(key, "ImmediateData")) {
		*offer = true;
		return &p->immediate_data;
	}
	if (!strcmp(key, "InitialR2T")) {
		*offer = false;
		return &p->initial_r2t;
	}
	if (!strcmp(key, "DataPDUInOrder")) {
		*offer = true;
		return &p->data_pdu_in_order;
	}
	*offer = true;
	return &p->data_sequence_in_order;
}

int native_neg_answer(struct native_neg *n, const char *key,
		      const char *value)
{
	const struct key_rule *r = NULL;

	for (size_t i = 0; i < sizeof(key_rules) / sizeof(key_rules[0]); i++)
		if (!strcmp(key_rules[i].name, key))
			r = &key_rules[i];
	if (!r) {
		for (size_t i = 0; i < sizeof(info_keys) / sizeof(info_keys[0]); i++)
			if (!strcmp(info_keys[i], key))
				return 0;
		/* A key we never offered is the target's proposal: answer. */
		log_debug("native: target proposed unknown key %s=%s", key, value);
		if (kvbuf_add(&n->reply, key, "NotUnderstood"))
			return neg_fail(n, key, value, "out of memory");
		return 0;
	}
	if (kv_is_refusal(value)) {
		/* The RFC default stays in force (param_defaults). */
		log_info("native: target answered %s=%s, using the default",
			 key, value);
		return 0;
	}

	switch (r->kind) {
	case K_DIGEST: {
		bool offered = !strcmp(key, "HeaderDigest") ?
			n->offer.header_digest : n->offer.data_digest;
		bool *res = !strcmp(key, "HeaderDigest") ?
			&n->p.header_digest : &n->p.data_digest;

		if (!strcmp(value, "None"))
			*res = false;
		else if (!strcmp(value, "CRC32C") && offered)
			*res = true;
		else
			return neg_fail(n, key, value, "not a value we offered");
		return 0;
	}
	case K_DECL_DSL: {
		uint64_t v;

		if (kv_parse_number_in(value, r->lo, r->hi, &v))
			return neg_fail(n, key, value, "out of range 512..16777215");
		n->p.max_send_dsl = (uint32_t)v;
		return 0;
	}
	case K_MIN:
	case K_MAX: {
		uint32_t offer, erl_tmp = n->p.erl, *slot;
		uint64_t v;

		if (kv_parse_number_in(value, r->lo, r->hi, &v))
			return neg_fail(n, key, value, "not a number in range");
		slot = num_slot(n, key, &offer, &erl_tmp);
		if (r->kind == K_MIN && v > offer)
			return neg_fail(n, key, value,
					"above our offer (result is the minimum)");
		if (r->kind == K_MAX && v < offer)
			return neg_fail(n, key, value,
					"below our offer (result is the maximum)");
		*slot = (uint32_t)v;
		if (slot == &erl_tmp)
			n->p.erl = (uint8_t)erl_tmp;
		return 0;
	}
	case K_AND:
	case K_OR: {
		bool offer, v, *slot = bool_slot(n, key, &offer);

		if (!strcmp(value, "Yes"))
			v = true;
		else if (!strcmp(value, "No"))
			v = false;
		else
			return neg_fail(n, key, value, "not Yes or No");
		/* AND with our No, or OR with our Yes, leaves no choice. */
		if (r->kind == K_AND && !offer && v)
			return neg_fail(n, key, value, "AND with our No is No");
		if (r->kind == K_OR && offer && !v)
			return neg_fail(n, key, value, "OR with our Yes is Yes");
		*slot = v;
		return 0;
	}
	}
	return 0;
}

void native_neg_finish(struct native_neg *n)
{
	struct iscsi_params *p = &n->p;

	if (p->first_burst > p->max_burst)
		p->first_burst = p->max_burst;
	if (p->max_outstanding_r2t == 0)
		p->max_outstanding_r2t = 1;
}
