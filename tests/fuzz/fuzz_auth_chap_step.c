/*
 * Fuzzer: the target's CHAP exchange (auth_chap_key and auth_chap_step,
 * target/auth.c; RFC 7143 12.1.3). Input: byte 0 = control, then up to
 * four login texts separated by 0xff bytes, each split into keys as the
 * login code does (kv_split) and its CHAP_* keys fed to the exchange, one
 * text a round. Control: bit 0, the harness answers the challenge
 * correctly (CHAP_N and the right CHAP_R go in before the text's keys),
 * so the fuzzer reaches the mutual part and the keys after success; bit
 * 1, mutual credentials configured; bits 2-3, our algorithm preference.
 * Checks: only the right response authenticates, our answers are
 * well-formed key=value text, and a failure names its reason.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/chap.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv.h"
#include "tcq/kv_value.h"
#include "target/auth.h"
#include "tests/fuzz/fuzz.h"

#define USER "iqn.2026-11.org.tcq:fuzzer"
#define SECRET "fuzz-secret-0123"
#define MUSER "iqn.2026-11.org.tcq:fuzz"
#define MSECRET "fuzz-mutual-4567"

static const uint8_t prefs[4][4] = {
	{ CHAP_ALG_SHA3_256, CHAP_ALG_SHA256, CHAP_ALG_SHA1, CHAP_ALG_MD5 },
	{ CHAP_ALG_MD5 },
	{ CHAP_ALG_SHA256, CHAP_ALG_SHA1 },
	{ CHAP_ALG_SHA1, CHAP_ALG_MD5, CHAP_ALG_SHA3_256 },
};
static const int nprefs[4] = { 4, 1, 2, 3 };

/* Fixed challenges: a failing input fails again when replayed. */
static int fixed_rand(uint8_t *buf, int n)
{
	for (int i = 0; i < n; i++)
		buf[i] = (uint8_t)(0x5a + 7 * i);
	return 0;
}

static int feed_key(void *arg, const char *key, const char *value)
{
	if (!strncmp(key, "CHAP_", 5))
		auth_chap_key(arg, key, value);
	return 0;
}

static int count_pair(void *arg, const char *key, const char *value)
{
	(void)arg;
	(void)value;
	if (!key[0] || strchr(key, '='))
		abort();	/* we produced a key we would refuse */
	return 0;
}

/* The right CHAP_N and CHAP_R for the challenge st holds. */
static void answer(struct auth_chap_state *st)
{
	uint8_t r[CHAP_DIGEST_MAX];
	char hex[2 * CHAP_DIGEST_MAX + 3];

	if (chap_response(st->alg, st->id, SECRET, strlen(SECRET), st->chal,
			  st->chal_len, r))
		abort();
	kv_encode_hex(r, chap_digest_len(st->alg), hex, sizeof(hex));
	auth_chap_key(st, "CHAP_N", USER);
	auth_chap_key(st, "CHAP_R", hex);
}

/* Whether the CHAP_N and CHAP_R the round carries are the right ones. */
static bool right_answer(const struct auth_chap_state *st)
{
	uint8_t r[CHAP_DIGEST_MAX];
	size_t dl = chap_digest_len(st->alg);

	if (!st->got_n || !st->got_r || strcmp(st->n, USER) ||
	    st->r_len != (long)dl)
		return false;
	if (chap_response(st->alg, st->id, SECRET, strlen(SECRET), st->chal,
			  st->chal_len, r))
		abort();
	return !memcmp(r, st->r, dl);
}

int FUZZ_ENTRY(auth_chap_step)(const uint8_t *data, size_t size)
{
	struct auth_chap_cfg cfg = { 0 };
	struct auth_chap_state st;
	struct kvbuf rsp;
	size_t pos = 1;
	uint8_t ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	auth_rand_bytes = fixed_rand;
	strcpy(cfg.chap.user, USER);
	strcpy(cfg.chap.secret, SECRET);
	if (ctl & 2) {
		strcpy(cfg.mutual.user, MUSER);
		strcpy(cfg.mutual.secret, MSECRET);
	}
	auth_chap_init(&st);
	kvbuf_init(&rsp);
	for (int round = 0; round < 4 && pos <= size; round++) {
		const uint8_t *end = memchr(data + pos, 0xff, size - pos);
		size_t len = end ? (size_t)(end - (data + pos)) : size - pos;
		const char *why = NULL;
		enum auth_chap_phase before = st.phase;
		bool right;
		int rc;

		if ((ctl & 1) && st.phase == CHAP_WAIT_R)
			answer(&st);
		(void)kv_split((const char *)data + pos, len, feed_key, &st,
			       &why);
		right = before == CHAP_WAIT_R && right_answer(&st);
		rc = auth_chap_step(&st, &cfg, prefs[(ctl >> 2) & 3],
				    nprefs[(ctl >> 2) & 3], &rsp);
		if (rc != 0 && rc != ISCSI_LS_AUTH_FAILED &&
		    rc != ISCSI_LS_OUT_OF_RESOURCES)
			abort();
		if (rc && !st.why)
			abort();	/* a failure without its reason */
		if (st.phase == CHAP_DONE && before != CHAP_DONE && !right)
			abort();	/* authenticated without the secret */
		if (rsp.len && kv_split(rsp.data, rsp.len, count_pair, NULL,
					&why) != 0)
			abort();
		kvbuf_reset(&rsp);
		pos += len + 1;
	}
	auth_chap_wipe(&st);
	kvbuf_free(&rsp);
	return 0;
}
