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
#include "tcq/chap.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"

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

/* ---- CHAP (initiator side, on tcq/chap.h) --------------------------- */

#define NATIVE_CHAP_MAX_ALGS CHAP_ALG_COUNT
#define NATIVE_CHAP_CHALLENGE_LEN 32	/* our challenge for mutual CHAP */

/* Parses "SHA3-256,SHA-256,SHA-1,MD5" (names or numbers) into codes in
 * order of preference, dropping repeats; returns the count, or -1 for an
 * unknown or empty name. */
int native_chap_parse_algs(const char *s, int *algs, int max);

struct native_login_cfg;
/* The initiator's half of one exchange. */
struct native_chap {
	int alg;		/* the target's choice */
	/* mutual CHAP: our CHAP_I and CHAP_C */
	uint8_t id;
	uint8_t chal[NATIVE_CHAP_CHALLENGE_LEN];
};
/* Our CHAP_A: the configured algorithms as a comma list of numbers. */
void native_chap_offer(const struct native_login_cfg *cfg, char *out,
		       size_t outsz);
/*
 * The target chose CHAP_A=a and challenged with CHAP_I=i, CHAP_C=c (NULL
 * when missing): appends our CHAP_N and CHAP_R to kv, and for mutual CHAP
 * our own CHAP_I and CHAP_C. Returns 0, or -1 with err filled.
 */
int native_chap_answer(struct native_chap *ch,
		       const struct native_login_cfg *cfg, const char *a,
		       const char *i, const char *c, struct kvbuf *kv,
		       char *err, size_t errlen);
/* Mutual CHAP: the target's CHAP_N and CHAP_R (NULL when missing) to our
 * challenge. Returns 0, or -1 with err filled. */
int native_chap_check_target(const struct native_chap *ch,
			     const struct native_login_cfg *cfg,
			     const char *n, const char *r, char *err,
			     size_t errlen);

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
	struct login_params p;	/* results (starts at RFC defaults) */
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
	/* NULL: a fresh random ISID; else log in with this one (TSIH 0:
	 * session reinstatement, RFC 7143 6.3.5, after a lost connection) */
	const uint8_t *isid;
};

struct native_login_result {
	struct login_params p;
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
