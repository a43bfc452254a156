/*
 * CHAP, target side (see auth.h). The target picks the first algorithm of
 * its own preference list that the initiator offered, sends a random
 * identifier and a random challenge as long as the digest, and checks
 * CHAP_R = H(CHAP_I || secret || CHAP_C) in constant time. For mutual
 * CHAP it answers the initiator's challenge with the mutual secret, after
 * refusing a reflected challenge (equal to ours) and a mutual secret that
 * equals the initiator's one (either would let an attacker make the
 * target compute a valid response for it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/chap.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv_value.h"
#include "tcq/log.h"
#include "target/auth.h"
#include "target/conn.h"
#include "target/login_priv.h"
#include "target/negotiate.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "target/target.h"

/* ---- configuration -------------------------------------------------------- */

int auth_chap_algs_parse(const char *list, uint8_t *out, int max, char *err,
			 size_t errlen)
{
	char buf[128], *save = NULL;
	int n = 0;

	if (strlen(list) >= sizeof(buf)) {
		snprintf(err, errlen, "algorithm list too long");
		return -1;
	}
	memcpy(buf, list, strlen(list) + 1);
	for (char *t = strtok_r(buf, ", \t", &save); t;
	     t = strtok_r(NULL, ", \t", &save)) {
		int a = chap_alg_parse(t, strlen(t));

		if (a < 0) {
			snprintf(err, errlen,
				 "unknown CHAP algorithm '%s' (MD5, SHA-1, SHA-256, SHA3-256)",
				 t);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (out[i] == a) {
				snprintf(err, errlen, "'%s' listed twice", t);
				return -1;
			}
		}
		if (n == max) {
			snprintf(err, errlen, "too many algorithms");
			return -1;
		}
		out[n++] = (uint8_t)a;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty algorithm list");
		return -1;
	}
	return n;
}

int auth_cred_check(const struct auth_cred *c, const char *what, char *err,
		    size_t errlen)
{
	size_t sl = strlen(c->secret);

	if (!c->user[0]) {
		snprintf(err, errlen, "%s: no user name", what);
		return -1;
	}
	if (sl < AUTH_SECRET_MIN) {
		snprintf(err, errlen,
			 "%s: secret of %zu bytes is too short (at least %d)",
			 what, sl, AUTH_SECRET_MIN);
		return -1;
	}
	return 0;
}

int auth_cred_parse(const char *text, struct auth_cred *c, char *err,
		    size_t errlen)
{
	const char *colon = strrchr(text, ':');
	size_t ul;

	/* The user is often an IQN (it has colons); the secret follows the
	 * last one. */
	if (!colon || colon == text || !colon[1]) {
		snprintf(err, errlen, "expected USER:SECRET");
		return -1;
	}
	ul = (size_t)(colon - text);
	if (ul >= sizeof(c->user) || strlen(colon + 1) >= sizeof(c->secret)) {
		snprintf(err, errlen, "user or secret longer than %d bytes",
			 AUTH_USER_MAX - 1);
		return -1;
	}
	memset(c, 0, sizeof(*c));
	memcpy(c->user, text, ul);
	memcpy(c->secret, colon + 1, strlen(colon + 1) + 1);
	return auth_cred_check(c, "CHAP", err, errlen);
}

/* ---- the exchange --------------------------------------------------------- */

static int default_rand(uint8_t *buf, int n)
{
	return n < 0 ? -1 : chap_random(buf, (size_t)n);
}

int (*auth_rand_bytes)(uint8_t *buf, int n) = default_rand;

void auth_chap_init(struct auth_chap_state *st)
{
	memset(st, 0, sizeof(*st));
	st->phase = CHAP_WAIT_A;
}

void auth_chap_wipe(struct auth_chap_state *st)
{
	enum auth_chap_phase ph = st->phase;
	const char *why = st->why;
	uint8_t alg = st->alg;

	chap_wipe(st, sizeof(*st));
	st->phase = ph;
	st->why = why;
	st->alg = alg;
}

static void copy_str(char *dst, size_t sz, const char *v, bool *bad)
{
	size_t l = strlen(v);

	if (l >= sz) {
		*bad = true;
		return;
	}
	memcpy(dst, v, l + 1);
}

void auth_chap_key(struct auth_chap_state *st, const char *key,
		   const char *value)
{
	uint64_t v;

	/* A key twice in one exchange is malformed. */
	if (!strcmp(key, "CHAP_A")) {
		st->bad |= st->got_a;
		st->got_a = true;
		copy_str(st->a, sizeof(st->a), value, &st->bad);
	} else if (!strcmp(key, "CHAP_N")) {
		st->bad |= st->got_n;
		st->got_n = true;
		copy_str(st->n, sizeof(st->n), value, &st->bad);
	} else if (!strcmp(key, "CHAP_R")) {
		st->bad |= st->got_r;
		st->got_r = true;
		st->r_len = kv_decode_binary(value, st->r, sizeof(st->r));
	} else if (!strcmp(key, "CHAP_I")) {
		st->bad |= st->got_i;
		st->got_i = true;
		if (kv_parse_number(value, &v) || v > 255)
			st->bad = true;
		else
			st->ii = (uint8_t)v;
	} else if (!strcmp(key, "CHAP_C")) {
		st->bad |= st->got_c;
		st->got_c = true;
		st->ic_len = kv_decode_binary(value, st->ic, sizeof(st->ic));
	} else {
		st->bad = true;		/* an unknown CHAP_ key */
	}
}

static void keys_reset(struct auth_chap_state *st)
{
	st->got_a = st->got_n = st->got_r = st->got_i = st->got_c = false;
	st->bad = false;
}

static int chap_fail(struct auth_chap_state *st, const char *why)
{
	st->phase = CHAP_FAILED;
	st->why = why;
	keys_reset(st);
	return ISCSI_LS_AUTH_FAILED;
}

/* CHAP_A: the first of our algorithms that the initiator lists. */
static int pick_alg(const char *list, const uint8_t *algs, int nalgs)
{
	for (int i = 0; i < nalgs; i++) {
		const char *p = list;

		while (*p) {
			char *end;
			unsigned long v = strtoul(p, &end, 10);

			if (end != p && (*end == ',' || !*end) && v == algs[i])
				return algs[i];
			p = strchr(p, ',');
			if (!p)
				break;
			p++;
		}
	}
	return -1;
}

static int send_challenge(struct auth_chap_state *st, const uint8_t *algs,
			  int nalgs, struct kvbuf *rsp)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	int alg = pick_alg(st->a, algs, nalgs);

	if (alg < 0) {
		kvbuf_add(rsp, "CHAP_A", "Reject");
		return chap_fail(st, "no common CHAP algorithm");
	}
	st->alg = (uint8_t)alg;
	st->chal_len = chap_digest_len(alg);
	if (auth_rand_bytes(&st->id, 1) ||
	    auth_rand_bytes(st->chal, (int)st->chal_len))
		return chap_fail(st, "no random bytes for the challenge");
	kv_encode_hex(st->chal, st->chal_len, hex, sizeof(hex));
	if (kvbuf_addf(rsp, "CHAP_A", "%d", alg) ||
	    kvbuf_addf(rsp, "CHAP_I", "%u", st->id) ||
	    kvbuf_add(rsp, "CHAP_C", hex)) {
		st->why = "out of memory";
		return ISCSI_LS_OUT_OF_RESOURCES;
	}
	st->phase = CHAP_WAIT_R;
	keys_reset(st);
	return 0;
}

static int check_response(struct auth_chap_state *st,
			  const struct auth_chap_cfg *cfg, struct kvbuf *rsp)
{
	const struct auth_cred *ic = &cfg->chap, *mc = &cfg->mutual;
	size_t dl = chap_digest_len(st->alg);
	uint8_t want[CHAP_DIGEST_MAX];
	bool user_ok, resp_ok;

	if (!st->got_n || !st->got_r)
		return chap_fail(st, "CHAP_N or CHAP_R missing");
	if (st->got_i != st->got_c)
		return chap_fail(st, "CHAP_I without CHAP_C or the reverse");
	/* Compute even for a wrong user, so the time taken tells nothing. */
	if (chap_response(st->alg, st->id, ic->secret, strlen(ic->secret),
			       st->chal, st->chal_len, want))
		return chap_fail(st, "digest failed");
	user_ok = strcmp(st->n, ic->user) == 0;
	resp_ok = st->r_len == (long)dl && chap_equal(want, st->r, dl);
	chap_wipe(want, sizeof(want));
	if (!user_ok)
		return chap_fail(st, "unknown CHAP user");
	if (!resp_ok)
		return chap_fail(st, "wrong CHAP response");
	if (st->got_c) {
		char hex[2 * CHAP_DIGEST_MAX + 3];
		uint8_t mine[CHAP_DIGEST_MAX];

		if (!mc->user[0])
			return chap_fail(st, "mutual CHAP asked but not configured");
		if (st->ic_len <= 0)
			return chap_fail(st, "malformed CHAP_C");
		if ((size_t)st->ic_len == st->chal_len &&
		    chap_equal(st->ic, st->chal, st->chal_len))
			return chap_fail(st, "reflected CHAP challenge");
		if (!strcmp(mc->secret, ic->secret))
			return chap_fail(st, "mutual secret equals the initiator's");
		if (chap_response(st->alg, st->ii, mc->secret,
				       strlen(mc->secret), st->ic,
				       (size_t)st->ic_len, mine))
			return chap_fail(st, "digest failed");
		kv_encode_hex(mine, dl, hex, sizeof(hex));
		chap_wipe(mine, sizeof(mine));
		if (kvbuf_add(rsp, "CHAP_N", mc->user) ||
		    kvbuf_add(rsp, "CHAP_R", hex)) {
			st->why = "out of memory";
			return ISCSI_LS_OUT_OF_RESOURCES;
		}
	}
	st->phase = CHAP_DONE;
	keys_reset(st);
	auth_chap_wipe(st);
	return 0;
}

int auth_chap_step(struct auth_chap_state *st,
		   const struct auth_chap_cfg *cfg, const uint8_t *algs,
		   int nalgs, struct kvbuf *rsp)
{
	bool any = st->got_a || st->got_n || st->got_r || st->got_i ||
		   st->got_c;

	if (st->phase == CHAP_FAILED)
		return ISCSI_LS_AUTH_FAILED;
	if (!any)
		return 0;	/* e.g. the text that chose AuthMethod */
	if (st->bad)
		return chap_fail(st, "malformed CHAP key");
	switch (st->phase) {
	case CHAP_WAIT_A:
		if (!st->got_a || st->got_n || st->got_r || st->got_i ||
		    st->got_c)
			return chap_fail(st, "CHAP keys out of order");
		return send_challenge(st, algs, nalgs, rsp);
	case CHAP_WAIT_R:
		if (st->got_a)
			return chap_fail(st, "CHAP_A repeated");
		return check_response(st, cfg, rsp);
	case CHAP_DONE:
	case CHAP_FAILED:
		break;
	}
	return chap_fail(st, "CHAP keys after authentication");
}

/* ---- login glue ----------------------------------------------------------- */

static const struct auth_chap_cfg *conn_chap_cfg(struct conn *c)
{
	return &c->login->chap_cfg;	/* copied by login_auth_policy */
}

static int chap_key(void *arg, const char *key, const char *value,
		    struct kvbuf *rsp)
{
	struct conn *c = arg;

	auth_chap_key(&c->login->chap, key, value);
	return NEG_OK;
}

static int chap_end(struct conn *c, struct kvbuf *rsp)
{
	struct login_state *l = c->login;
	int rc;

	/* CHAP keys before AuthMethod=CHAP was agreed are out of place. */
	if (strcmp(l->neg.auth_method, "CHAP") &&
	    (l->chap.got_a || l->chap.got_n || l->chap.got_r ||
	     l->chap.got_i || l->chap.got_c)) {
		l->chap.why = "CHAP keys without AuthMethod=CHAP";
		l->chap.phase = CHAP_FAILED;
		return ISCSI_LS_AUTH_FAILED;
	}
	rc = auth_chap_step(&l->chap, conn_chap_cfg(c), tcqd->set.chap_algs,
			    tcqd->set.nchap_algs, rsp);
	if (!rc && l->chap.phase == CHAP_DONE && !l->chap_logged) {
		l->chap_logged = true;
		log_info("%s: %s authenticated by CHAP %s", c->peer_text,
			 l->neg.initiator_name, chap_alg_name(l->chap.alg));
	}
	if (rc == ISCSI_LS_AUTH_FAILED)
		log_warn("%s: CHAP authentication of %s failed: %s",
			 c->peer_text,
			 l->neg.initiator_name[0] ? l->neg.initiator_name : "?",
			 l->chap.why ? l->chap.why : "?");
	return rc;
}

static bool chap_done(struct conn *c, const char *method)
{
	return !strcmp(method, "CHAP") && c->login->chap.phase == CHAP_DONE;
}

static bool chap_busy(struct conn *c, const char *method)
{
	enum auth_chap_phase ph = c->login->chap.phase;

	return !strcmp(method, "CHAP") &&
	       (ph == CHAP_WAIT_A || ph == CHAP_WAIT_R);
}

static const struct login_auth chap_policy = {
	.methods = "CHAP",
	.key = chap_key,
	.done = chap_done,
	.end = chap_end,
	.busy = chap_busy,
};

const struct login_auth *auth_login_policy(const struct auth_chap_cfg *cfg)
{
	return cfg && cfg->chap.user[0] ? &chap_policy : NULL;
}
