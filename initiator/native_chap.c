/*
 * CHAP for the initiator (RFC 7143 12.1.3): answer the target's
 * challenge with R = H(CHAP_I || secret || CHAP_C), and for mutual CHAP
 * challenge the target in turn and check its answer. The algorithms,
 * digests and encodings are the shared ones (tcq/chap.h,
 * tcq/kv_value.h), so both sides compute CHAP the same way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "initiator/native.h"
#include "tcq/kv_value.h"

int native_chap_parse_algs(const char *s, int *algs, int max)
{
	int n = 0;

	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int alg = chap_alg_parse(s, len);
		bool dup = false;

		if (alg < 0)
			return -1;
		for (int i = 0; i < n; i++)
			dup |= algs[i] == alg;
		if (!dup) {
			if (n == max)
				return -1;
			algs[n++] = alg;
		}
		s = end ? end + 1 : NULL;
	}
	return n;
}

void native_chap_offer(const struct native_login_cfg *cfg, char *out,
		       size_t outsz)
{
	out[0] = '\0';
	for (int i = 0; i < cfg->n_chap_algs; i++)
		snprintf(out + strlen(out), outsz - strlen(out), "%s%d",
			 i ? "," : "", cfg->chap_algs[i]);
}

static int chap_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int chap_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Our challenge for the target: random, and never the target's own. */
static int make_challenge(struct native_chap *ch, const uint8_t *theirs,
			  size_t their_len)
{
	do {
		if (chap_random(ch->chal, sizeof(ch->chal)) ||
		    chap_random(&ch->id, 1))
			return -1;
	} while (their_len == sizeof(ch->chal) &&
		 !memcmp(theirs, ch->chal, sizeof(ch->chal)));
	return 0;
}

int native_chap_answer(struct native_chap *ch,
		       const struct native_login_cfg *cfg, const char *a,
		       const char *i, const char *c, struct kvbuf *kv,
		       char *err, size_t errlen)
{
	uint8_t chal[CHAP_BINARY_MAX], digest[CHAP_DIGEST_MAX];
	char hex[2 + 2 * CHAP_BINARY_MAX + 1], list[32];
	uint64_t alg, id;
	bool ok_alg = false;
	long clen;

	native_chap_offer(cfg, list, sizeof(list));
	if (!a || !i || !c)
		return chap_err(err, errlen,
				"target did not send CHAP_A, CHAP_I and CHAP_C");
	if (kv_parse_number_in(a, 0, 255, &alg))
		return chap_err(err, errlen,
				"target answered CHAP_A=%s (we offered %s)", a,
				list);
	for (int k = 0; k < cfg->n_chap_algs; k++)
		ok_alg |= cfg->chap_algs[k] == (int)alg;
	if (!ok_alg)
		return chap_err(err, errlen,
				"target chose CHAP_A=%s, not among %s", a, list);
	ch->alg = (int)alg;
	if (kv_parse_number_in(i, 0, 255, &id))
		return chap_err(err, errlen, "bad CHAP_I=%s", i);
	clen = kv_decode_binary(c, chal, sizeof(chal));
	if (clen <= 0)
		return chap_err(err, errlen, "bad CHAP_C from target");
	if (chap_response(ch->alg, (uint8_t)id, cfg->chap_secret,
			  strlen(cfg->chap_secret), chal, (size_t)clen, digest))
		return chap_err(err, errlen, "CHAP digest %d failed (OpenSSL)",
				ch->alg);

	kvbuf_reset(kv);
	kv_encode_hex(digest, chap_digest_len(ch->alg), hex, sizeof(hex));
	if (kvbuf_add(kv, "CHAP_N", cfg->chap_user) ||
	    kvbuf_add(kv, "CHAP_R", hex))
		return chap_err(err, errlen, "out of memory");
	if (!cfg->mutual_secret || !*cfg->mutual_secret)
		return 0;
	if (make_challenge(ch, chal, (size_t)clen))
		return chap_err(err, errlen, "no random bytes for CHAP");
	kv_encode_hex(ch->chal, sizeof(ch->chal), hex, sizeof(hex));
	if (kvbuf_addf(kv, "CHAP_I", "%u", ch->id) ||
	    kvbuf_add(kv, "CHAP_C", hex))
		return chap_err(err, errlen, "out of memory");
	return 0;
}

int native_chap_check_target(const struct native_chap *ch,
			     const struct native_login_cfg *cfg,
			     const char *n, const char *r, char *err,
			     size_t errlen)
{
	uint8_t want[CHAP_DIGEST_MAX], got[CHAP_DIGEST_MAX];
	size_t wl = chap_digest_len(ch->alg);
	long gl;

	if (!n || !r)
		return chap_err(err, errlen,
				"mutual CHAP: target sent no CHAP_N/CHAP_R");
	if (cfg->mutual_user && *cfg->mutual_user &&
	    strcmp(n, cfg->mutual_user))
		return chap_err(err, errlen,
				"mutual CHAP: target name %s, expected %s", n,
				cfg->mutual_user);
	gl = kv_decode_binary(r, got, sizeof(got));
	if (chap_response(ch->alg, ch->id, cfg->mutual_secret,
			  strlen(cfg->mutual_secret), ch->chal,
			  sizeof(ch->chal), want) ||
	    gl != (long)wl || !chap_equal(want, got, wl))
		return chap_err(err, errlen,
				"mutual CHAP: the target's response is wrong");
	return 0;
}
