/*
 * Fuzzer 2: the login and text key parser and the negotiation engine.
 * Input: one control byte (stage, leading connection, settings variant)
 * then up to four texts separated by 0xff bytes, fed to one negotiation
 * in turn as successive login rounds would be. Checks what must hold for
 * any input: kv_split agrees with itself, our answers are always
 * well-formed key=value text, and the outcome stays within RFC 7143's
 * ranges.
 */
#include <stdlib.h>
#include <string.h>
#include "target/negotiate.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "target/target.h"
#include "tests/fuzz/fuzz.h"

static int count_pair(void *arg, const char *key, const char *value)
{
	size_t *n = arg;

	if (!key[0] || strlen(key) > 63 || strchr(key, '='))
		abort();	/* kv_split promised a valid key */
	(void)value;
	(*n)++;
	return 0;
}

static int auth_hook(void *arg, const char *key, const char *value,
		     struct kvbuf *rsp)
{
	/* Stands in for CHAP: answer something so the path is exercised. */
	(void)arg;
	(void)value;
	return kvbuf_add(rsp, key, "Reject") ? NEG_ERR_NOMEM : NEG_OK;
}

static void check_rsp(const struct kvbuf *rsp)
{
	size_t n = 0;
	const char *why = NULL;

	if (rsp->len && kv_split(rsp->data, rsp->len, count_pair, &n,
				 &why) != 0)
		abort();	/* we produced text we would refuse */
}

static void check_params(const struct login_params *p)
{
	if (p->first_burst > p->max_burst)
		abort();
	if (p->max_burst < 512 || p->max_burst > 16777215)
		abort();
	if (p->max_send_dsl && (p->max_send_dsl < 512 ||
				p->max_send_dsl > 16777215))
		abort();
	if (p->erl > 2 || p->max_outstanding_r2t < 1 ||
	    p->max_outstanding_r2t > 65535)
		abort();
}

int FUZZ_ENTRY(param)(const uint8_t *data, size_t size)
{
	static const enum neg_stage stages[] = { NEG_SECURITY,
		NEG_OPERATIONAL, NEG_FFP, NEG_OPERATIONAL };
	struct tcq_settings set;
	struct login_params start, out;
	struct kvbuf rsp;
	struct neg n;
	uint8_t ctl;
	size_t pos = 1;
	int round = 0;

	if (size < 1)
		return 0;
	ctl = data[0];
	tcq_settings_default(&set);
	if (ctl & 0x10) {
		/* Non-default limits make the engine offer its own values. */
		set.max_burst = 65536;
		set.first_burst = 8192;
		set.max_recv_dsl = 8192;
		set.initial_r2t = true;
		set.immediate_data = false;
		set.max_outstanding_r2t = 4;
	}
	login_params_defaults(&start);
	neg_init(&n, &set, (ctl & 0x20) ? &start : NULL, !(ctl & 0x40));
	if (ctl & 0x80) {
		n.auth_accept = "CHAP,None";
		n.auth_key = auth_hook;
	}
	kvbuf_init(&rsp);
	while (pos <= size && round < 4) {
		const uint8_t *end = memchr(data + pos, 0xff, size - pos);
		size_t len = end ? (size_t)(end - (data + pos)) : size - pos;
		enum neg_stage st = stages[(ctl + round) & 3];
		size_t pairs = 0;
		const char *why = NULL;
		int rc;

		/* The splitter alone, then the engine on the same text. */
		rc = kv_split((const char *)data + pos, len, count_pair,
			      &pairs, &why);
		if (rc == -1 && !why)
			abort();
		rc = neg_process(&n, st, (const char *)data + pos, len, &rsp);
		if (rc == NEG_ERR_PROTOCOL && !n.why)
			abort();
		if (rc == NEG_OK)
			rc = neg_add_offers(&n, st, &rsp);
		check_rsp(&rsp);
		(void)neg_pending(&n);
		neg_result(&n, &out);
		check_params(&out);
		kvbuf_reset(&rsp);
		pos += len + 1;
		round++;
		if (rc != NEG_OK)
			break;
	}
	kvbuf_free(&rsp);
	return 0;
}
