/*
 * Key negotiation, target side (RFC 7143 section 6.2). What a key is,
 * where it may appear, its range and result function come from the key
 * table (tcq/login_keys.h); this file adds what the target wants (its
 * settings) and how it answers. The target is the responder for the
 * initiator's offers and the originator of its own few offers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/kv_value.h"
#include "tcq/log.h"
#include "target/negotiate.h"

#define OUR_PROTOCOL_LEVEL 1

_Static_assert(LOGIN_KEY_COUNT <= 64, "struct neg keeps key ids in 64 bits");
#define BIT(k) (1ULL << (k))

void neg_init(struct neg *n, const struct tcq_settings *set,
	      const struct login_params *start, bool leading)
{
	memset(n, 0, sizeof(*n));
	n->set = set;
	n->leading = leading;
	if (start)
		n->p = *start;
	else
		login_params_defaults(&n->p);
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

/* What the target offers or accepts for a number, from its settings. */
static uint32_t our_num(const struct neg *n, int k)
{
	switch (k) {
	case LOGIN_KEY_MAX_CONNECTIONS: return 1;
	case LOGIN_KEY_MAX_BURST: return n->set->max_burst;
	case LOGIN_KEY_FIRST_BURST:
		return n->set->first_burst < n->set->max_burst ?
			n->set->first_burst : n->set->max_burst;
	case LOGIN_KEY_TIME2WAIT: return 2;
	case LOGIN_KEY_TIME2RETAIN: return 20;
	case LOGIN_KEY_MAX_OUTSTANDING_R2T: return n->set->max_outstanding_r2t;
	case LOGIN_KEY_ERROR_RECOVERY_LEVEL: return 0;
	case LOGIN_KEY_PROTOCOL_LEVEL: return OUR_PROTOCOL_LEVEL;
	default: return 0;
	}
}

static bool our_bool(const struct neg *n, int k)
{
	switch (k) {
	case LOGIN_KEY_INITIAL_R2T: return n->set->initial_r2t;
	case LOGIN_KEY_IMMEDIATE_DATA: return n->set->immediate_data;
	default: return true;	/* DataPDUInOrder, DataSequenceInOrder */
	}
}

/* The values a list key accepts, preferred first. */
static const char *our_list(const struct neg *n, int k)
{
	bool allowed;

	switch (k) {
	case LOGIN_KEY_AUTH_METHOD: return n->auth_accept;
	case LOGIN_KEY_TASK_REPORTING: return "RFC3720";
	case LOGIN_KEY_HEADER_DIGEST:
		allowed = n->set->header_digest_allowed;
		break;
	default:
		allowed = n->set->data_digest_allowed;
		break;
	}
	return allowed ? "CRC32C,None" : "None";
}

/* The initiator's answer to one of our offers: apply the same function. */
static int take_answer(struct neg *n, int k, const char *value)
{
	const struct login_key *d = login_key(k);
	uint64_t v;
	bool b;

	n->answered |= BIT(k);
	if (kv_is_refusal(value)) {
		log_debug("initiator answered %s=%s; default applies",
			  d->name, value);
		return NEG_OK;
	}
	switch (d->rule) {
	case LOGIN_RULE_MIN:
	case LOGIN_RULE_MAX:
		if (kv_parse_number_in(value, d->min, d->max, &v))
			goto bad;
		v = login_key_result_number(d->rule, v, our_num(n, k));
		login_params_store(&n->p, k, (uint32_t)v);
		return NEG_OK;
	case LOGIN_RULE_OR:
	case LOGIN_RULE_AND:
		if (kv_parse_bool(value, &b))
			goto bad;
		b = login_key_result_bool(d->rule, b, our_bool(n, k));
		login_params_store(&n->p, k, b);
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

static int negotiate_number(struct neg *n, int k, const char *value,
			    struct kvbuf *rsp)
{
	const struct login_key *d = login_key(k);
	uint64_t v;

	if (kv_parse_number_in(value, d->min, d->max, &v))
		return answer(rsp, d->name, "Reject");
	v = login_key_result_number(d->rule, v, our_num(n, k));
	login_params_store(&n->p, k, (uint32_t)v);
	return answer_num(rsp, d->name, v);
}

static int negotiate_bool(struct neg *n, int k, const char *value,
			  struct kvbuf *rsp)
{
	const struct login_key *d = login_key(k);
	bool b;

	if (kv_parse_bool(value, &b))
		return answer(rsp, d->name, "Reject");
	b = login_key_result_bool(d->rule, b, our_bool(n, k));
	login_params_store(&n->p, k, b);
	return answer(rsp, d->name, kv_bool_text(b));
}

static int negotiate_list(struct neg *n, int k, const char *value,
			  struct kvbuf *rsp)
{
	const char *key = login_key(k)->name;
	char pick[NEG_AUTH_MAX];

	if (!kv_list_pick(value, our_list(n, k), pick, sizeof(pick))) {
		if (k == LOGIN_KEY_AUTH_METHOD)
			n->auth_rejected = true;
		return answer(rsp, key, "Reject");
	}
	if (k == LOGIN_KEY_HEADER_DIGEST || k == LOGIN_KEY_DATA_DIGEST)
		login_params_store(&n->p, k, !strcmp(pick, "CRC32C"));
	else if (k == LOGIN_KEY_AUTH_METHOD)
		memcpy(n->auth_method, pick, strlen(pick) + 1);
	return answer(rsp, key, pick);
}

/* An initiator's declaration: kept, never answered (unless refused). */
static int take_declaration(struct neg *n, enum neg_stage st, int k,
			    const char *value, struct kvbuf *rsp)
{
	const struct login_key *d = login_key(k);
	uint64_t v;

	switch (k) {
	case LOGIN_KEY_MAX_RECV_DSL:
		if (kv_parse_number_in(value, d->min, d->max, &v))
			return answer(rsp, d->name, "Reject");
		login_params_store(&n->p, k, (uint32_t)v);
		if (st == NEG_FFP)
			n->mrdsl_changed = true;
		return NEG_OK;
	case LOGIN_KEY_INITIATOR_NAME:
		if (copy_name(n->initiator_name, value))
			return answer(rsp, d->name, "Reject");
		n->have_initiator_name = true;
		return NEG_OK;
	case LOGIN_KEY_TARGET_NAME:
		if (copy_name(n->target_name, value))
			return answer(rsp, d->name, "Reject");
		n->have_target_name = true;
		return NEG_OK;
	case LOGIN_KEY_INITIATOR_ALIAS:
		copy_trunc(n->initiator_alias, sizeof(n->initiator_alias),
			   value);
		return NEG_OK;
	case LOGIN_KEY_SESSION_TYPE:
		if (!strcmp(value, "Normal"))
			n->session_type = NEG_SESS_NORMAL;
		else if (!strcmp(value, "Discovery"))
			n->session_type = NEG_SESS_DISCOVERY;
		else
			return answer(rsp, d->name, "Reject");
		return NEG_OK;
	case LOGIN_KEY_SEND_TARGETS:
		if (strlen(value) >= sizeof(n->send_targets_val))
			return answer(rsp, d->name, "Reject");
		n->send_targets = true;
		copy_trunc(n->send_targets_val, sizeof(n->send_targets_val),
			   value);
		return NEG_OK;
	}
	return answer(rsp, d->name, "NotUnderstood");
}

/*
 * Why this key may not appear here: NULL when it may, else the answer
 * that refuses it. A security key outside its stage sets *fatal instead.
 */
static const char *misplaced(const struct neg *n, enum neg_stage st,
			     const struct login_key *d, bool *fatal)
{
	*fatal = false;
	if (st == NEG_FFP)
		return d->use == LOGIN_USE_ALL || d->use == LOGIN_USE_FFP ?
			NULL : "Reject";
	if (d->use == LOGIN_USE_FFP)
		return "Irrelevant";
	if (d->use == LOGIN_USE_SECURITY && st != NEG_SECURITY)
		*fatal = true;
	else if (d->use == LOGIN_USE_LO && !n->leading)
		return "Reject";
	return NULL;
}

/* One key=value from the initiator. */
static int neg_key(void *arg, const char *key, const char *value)
{
	struct neg_ctx *x = arg;
	struct neg *n = x->n;
	struct kvbuf *rsp = x->rsp;
	const struct login_key *d;
	const char *refusal;
	bool fatal;
	int k;

	/* CHAP keys belong to the auth module, in the security stage. */
	if (strncmp(key, "CHAP_", 5) == 0) {
		if (x->st == NEG_SECURITY && n->auth_key)
			return n->auth_key(n->auth_arg, key, value, rsp);
		return answer(rsp, key, "NotUnderstood");
	}
	k = login_key_lookup(key);
	if (k < 0)	/* X-, X# private keys and anything else unknown */
		return answer(rsp, key, "NotUnderstood");
	d = login_key(k);
	if (n->seen & BIT(k)) {
		n->why = "key negotiated twice";
		return NEG_ERR_PROTOCOL;
	}
	n->seen |= BIT(k);

	if (strlen(value) > KV_VALUE_STD_MAX)
		return answer(rsp, key, "Reject");
	refusal = misplaced(n, x->st, d, &fatal);
	if (fatal) {
		n->why = "security key in the operational stage";
		return NEG_ERR_PROTOCOL;
	}
	if (refusal)
		return answer(rsp, key, refusal);

	/* The initiator answering one of our offers. */
	if (n->offered & BIT(k))
		return take_answer(n, k, value);

	if (d->irrelevant_in_discovery &&
	    n->session_type == NEG_SESS_DISCOVERY)
		return answer(rsp, key, "Irrelevant");
	/* RFC 7143 13.26: obsolete keys are answered with Reject. */
	if (d->rule == LOGIN_RULE_OBSOLETE)
		return answer(rsp, key, "Reject");
	/* Keys only targets send: an alias is irrelevant to us, an
	 * address or a portal group tag from the initiator is wrong. */
	if (!(d->senders & LOGIN_SENT_BY_INITIATOR))
		return answer(rsp, key, k == LOGIN_KEY_TARGET_ALIAS ?
				  "Irrelevant" : "Reject");

	switch (d->rule) {
	case LOGIN_RULE_MIN:
	case LOGIN_RULE_MAX:
		return negotiate_number(n, k, value, rsp);
	case LOGIN_RULE_OR:
	case LOGIN_RULE_AND:
		return negotiate_bool(n, k, value, rsp);
	case LOGIN_RULE_FIRST_MATCH:
		return negotiate_list(n, k, value, rsp);
	case LOGIN_RULE_DECLARATIVE:
		return take_declaration(n, x->st, k, value, rsp);
	default:
		return answer(rsp, key, "NotUnderstood");
	}
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

/* Offers a key the initiator has not sent, if ours is not the default. */
static int offer(struct neg *n, int k, struct kvbuf *rsp)
{
	const struct login_key *d = login_key(k);
	bool is_num = d->kind == LOGIN_KIND_NUMBER;
	uint32_t ours = is_num ? our_num(n, k) : our_bool(n, k);
	uint32_t def = login_key_default(k);
	int rc;

	if ((n->seen & BIT(k)) || ours == def)
		return NEG_OK;
	if (is_num)
		rc = answer_num(rsp, d->name, ours);
	else
		rc = answer(rsp, d->name, kv_bool_text(ours));
	if (rc)
		return rc;
	n->offered |= BIT(k);
	/* Provisional result until the answer comes: the key's function
	 * applied to our value and the default. */
	if (is_num)
		login_params_store(&n->p, k, (uint32_t)login_key_result_number(
					   d->rule, ours, def));
	else
		login_params_store(&n->p, k,
				   login_key_result_bool(d->rule, ours, def));
	return NEG_OK;
}

int neg_add_offers(struct neg *n, enum neg_stage st, struct kvbuf *rsp)
{
	static const int offerable[] = { LOGIN_KEY_MAX_BURST,
		LOGIN_KEY_FIRST_BURST, LOGIN_KEY_MAX_OUTSTANDING_R2T,
		LOGIN_KEY_INITIAL_R2T, LOGIN_KEY_IMMEDIATE_DATA };
	int rc;

	if (!n->mrdsl_declared) {
		rc = answer_num(rsp, login_key(LOGIN_KEY_MAX_RECV_DSL)->name,
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

void neg_result(const struct neg *n, struct login_params *out)
{
	*out = n->p;
	if (out->first_burst > out->max_burst)
		out->first_burst = out->max_burst;
}
