/*
 * The native iSCSI initiator behind engine_native: URL parsing, CHAP
 * (initiator side), login key offers and answer parsing, and the
 * full-feature data path. Internal to tcq-bench; the pure pieces (URL,
 * keys, CHAP) are exposed for the unit tests.
 */
#ifndef TCQ_NATIVE_H
#define TCQ_NATIVE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/param.h"

/* ---- URL: iscsi://[user%secret@]host[:port]/iqn/lun ------------------- */

struct native_url {
	char user[256], secret[256];
	char host[256];		/* without the [] of an IPv6 literal */
	uint16_t port;
	char target[224];	/* iSCSI names are at most 223 bytes */
	uint64_t lun;
};
/* Returns 0, or -1 with err filled. */
int native_url_parse(const char *url, struct native_url *u,
		     char *err, size_t errlen);

/* ---- CHAP ------------------------------------------------------------- */

#define NATIVE_CHAP_MAX_DIGEST 32
#define NATIVE_CHAP_MAX_CHALLENGE 1024
#define NATIVE_CHAP_MAX_ALGS 4

/* CHAP_A codes (RFC 7143 12.1.3, RFC 9653 for SHA-*). */
enum native_chap_alg {
	NATIVE_CHAP_MD5 = 5,
	NATIVE_CHAP_SHA1 = 6,
	NATIVE_CHAP_SHA256 = 7,
	NATIVE_CHAP_SHA3_256 = 8,
};
/* Digest length of an algorithm; 0 when unknown. */
size_t native_chap_digest_len(int alg);
/* Parses "SHA3-256,SHA-256,SHA-1,MD5" (names or numbers) into codes in
 * order of preference; returns the count, or -1 for an unknown name. */
int native_chap_parse_algs(const char *s, int *algs, int max);
/* out = H(id || secret || challenge); returns the digest length, or -1. */
int native_chap_response(int alg, uint8_t id, const char *secret,
			 const uint8_t *chal, size_t chal_len, uint8_t *out);

/* ---- operational keys -------------------------------------------------- */

/* What we offer in the operational stage. */
struct native_offer {
	bool header_digest, data_digest;	/* offer CRC32C,None */
	uint32_t max_recv_dsl;
	uint32_t max_burst, first_burst;
	uint32_t max_outstanding_r2t;
	uint32_t default_time2wait, default_time2retain;
};
void native_offer_defaults(struct native_offer *o);
/* Appends the operational keys of the offer to b. */
int native_offer_add(const struct native_offer *o, struct kvbuf *b);

/* Negotiation state while answers arrive. */
struct native_neg {
	struct native_offer offer;
	struct iscsi_params p;	/* results (starts at RFC defaults) */
	/* keys the target proposed that we must answer (NotUnderstood or a
	 * value), sent in the next login request */
	struct kvbuf reply;
	char err[256];
};
void native_neg_init(struct native_neg *n, const struct native_offer *o);
void native_neg_free(struct native_neg *n);
/*
 * Applies one key=value of a login response in the operational stage.
 * Returns 0, or -1 with n->err set when the answer breaks the RFC rules
 * (value out of range, not one of what we offered, ...).
 */
int native_neg_answer(struct native_neg *n, const char *key,
		      const char *value);
/* Fixes dependent values once all answers are in (FirstBurstLength
 * bounded by MaxBurstLength, ...). */
void native_neg_finish(struct native_neg *n);

/* ---- login ------------------------------------------------------------- */

struct native_login_cfg {
	const char *initiator_name;
	const char *target_name;
	const char *chap_user, *chap_secret;
	const char *mutual_user, *mutual_secret;
	int chap_algs[NATIVE_CHAP_MAX_ALGS];
	int n_chap_algs;
	struct native_offer offer;
	int timeout_ms;
};

struct native_login_result {
	struct iscsi_params p;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t cmdsn, exp_statsn, exp_cmdsn, max_cmdsn;
};

/* Runs the whole login on a connected socket (blocking with poll and a
 * timeout). Returns 0, or -1 with err filled. */
int native_login(int fd, const struct native_login_cfg *cfg,
		 struct native_login_result *res, char *err, size_t errlen);
/* Text for a login status (class << 8 | detail). */
const char *native_login_status_str(uint16_t status);

#endif
