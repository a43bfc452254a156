/*
 * Login from the initiator's side (RFC 7143 sections 6, 11.12, 11.13):
 * an optional security stage with CHAP (one-way or mutual), then the
 * operational stage and the jump to full feature phase. Login happens once
 * per session in engine open, so it runs synchronously: poll() with a
 * deadline on the non-blocking socket.
 */
#include <errno.h>
#include <sys/socket.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/rand.h>
#include "initiator/native.h"
#include "tcq/log.h"
#include "tcq/pdu.h"

/* Both sides may send login PDUs of 8192 bytes until they declare more;
 * we split our text at that size (C bit). */
#define LOGIN_SEG 8192
#define LOGIN_MAX_RSP (1u << 20)	/* sanity cap on continued text */
#define LOGIN_ITT 0x4c4f4731u		/* any value; one login task */

struct login_ctx {
	int fd;
	const struct native_login_cfg *cfg;
	struct native_login_result *res;
	int64_t deadline;
	uint16_t tsih;
	uint32_t cmdsn, exp_statsn;
	struct pdu_login_rsp rsp;
	char *text;			/* response text, all continuations */
	size_t text_len, text_cap;
	char *err;
	size_t errlen;
};

const char *native_login_status_str(uint16_t st)
{
	switch (st) {
	case ISCSI_LS_SUCCESS: return "success";
	case ISCSI_LS_TARGET_MOVED_TEMP: return "target moved temporarily";
	case ISCSI_LS_TARGET_MOVED_PERM: return "target moved permanently";
	case ISCSI_LS_INIT_ERR: return "initiator error";
	case ISCSI_LS_AUTH_FAILED: return "authentication failed";
	case ISCSI_LS_AUTHZ_FAILED: return "authorization failure";
	case ISCSI_LS_TARGET_NOT_FOUND: return "target not found";
	case ISCSI_LS_TARGET_REMOVED: return "target removed";
	case ISCSI_LS_UNSUPPORTED_VERSION: return "unsupported version";
	case ISCSI_LS_TOO_MANY_CONNS: return "too many connections";
	case ISCSI_LS_MISSING_PARAM: return "missing parameter";
	case ISCSI_LS_NO_SESSION_SPANNING: return "cannot include in session";
	case ISCSI_LS_SESSION_TYPE_UNSUPPORTED: return "session type not supported";
	case ISCSI_LS_SESSION_NOT_EXIST: return "session does not exist";
	case ISCSI_LS_INVALID_DURING_LOGIN: return "invalid request during login";
	case ISCSI_LS_TARGET_ERROR: return "target error";
	case ISCSI_LS_SERVICE_UNAVAILABLE: return "service unavailable";
	case ISCSI_LS_OUT_OF_RESOURCES: return "out of resources";
	}
	switch (st >> 8) {
	case 1: return "redirection";
	case 2: return "initiator error";
	case 3: return "target error";
	default: return "unknown status class";
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int lerr(struct login_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int lerr(struct login_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int wait_fd(struct login_ctx *c, short ev)
{
	struct pollfd pfd = { .fd = c->fd, .events = ev };
	int64_t left = c->deadline - now_ms();
	int rc;

	if (left <= 0)
		return lerr(c, "login timed out");
	rc = poll(&pfd, 1, (int)left);
	if (rc < 0 && errno != EINTR)
		return lerr(c, "poll: %s", strerror(errno));
	if (rc == 0)
		return lerr(c, "login timed out");
	return 0;
}

static int send_all(struct login_ctx *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				if (wait_fd(c, POLLOUT))
					return -1;
				continue;
			}
			return lerr(c, "send during login: %s", strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(struct login_ctx *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(c->fd, p, len);

		if (n == 0)
			return lerr(c, "target closed the connection during login");
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				if (wait_fd(c, POLLIN))
					return -1;
				continue;
			}
			return lerr(c, "receive during login: %s", strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_login_pdu(struct login_ctx *c, bool transit, bool cont,
			  uint8_t csg, uint8_t nsg, const char *text,
			  size_t len)
{
	struct pdu_login_req req = {
		.transit = transit, .cont = cont, .csg = csg,
		.nsg = transit ? nsg : 0,
		.version_max = ISCSI_VERSION, .version_min = ISCSI_VERSION,
		.data_len = (uint32_t)len, .tsih = c->tsih, .cid = 0,
		.itt = LOGIN_ITT, .cmdsn = c->cmdsn,
		.expstatsn = c->exp_statsn,
	};
	uint8_t bhs[ISCSI_BHS_LEN];
	static const uint8_t zero[4];

	memcpy(req.isid, c->res->isid, 6);
	pdu_encode_login_req(bhs, &req);
	if (send_all(c, bhs, sizeof(bhs)) ||
	    (len && send_all(c, text, len)) ||
	    send_all(c, zero, pdu_pad((uint32_t)len)))
		return -1;
	return 0;
}

/* Receives one Login Response, appending its text to c->text. */
static int recv_login_pdu(struct login_ctx *c)
{
	uint8_t bhs[ISCSI_BHS_LEN], pad[4];
	struct pdu_login_rsp *r = &c->rsp;
	uint16_t st;

	if (recv_all(c, bhs, sizeof(bhs)))
		return -1;
	if (pdu_opcode(bhs) != ISCSI_OP_LOGIN_RSP)
		return lerr(c, "expected a Login Response, got %s (0x%02x)",
			    pdu_opcode_name(pdu_opcode(bhs)), pdu_opcode(bhs));
	pdu_decode_login_rsp(bhs, r);
	if (pdu_ahs_len(bhs))
		return lerr(c, "Login Response with AHS");
	if (r->data_len > c->cfg->offer.max_recv_dsl ||
	    c->text_len + r->data_len > LOGIN_MAX_RSP)
		return lerr(c, "Login Response text too long (%u bytes)",
			    r->data_len);
	if (c->text_len + r->data_len + 1 > c->text_cap) {
		size_t cap = c->text_len + r->data_len + 1 + 4096;
		char *n = realloc(c->text, cap);

		if (!n)
			return lerr(c, "out of memory");
		c->text = n;
		c->text_cap = cap;
	}
	if (recv_all(c, c->text + c->text_len, r->data_len) ||
	    recv_all(c, pad, pdu_pad(r->data_len)))
		return -1;
	c->text_len += r->data_len;
	c->text[c->text_len] = '\0';
	c->exp_statsn = r->statsn + 1;

	st = (uint16_t)(r->status_class << 8 | r->status_detail);
	if (st != ISCSI_LS_SUCCESS) {
		const char *addr = NULL;

		for (size_t off = 0; off < c->text_len;
		     off += strlen(c->text + off) + 1)
			if (!strncmp(c->text + off, "TargetAddress=", 14))
				addr = c->text + off + 14;
		return lerr(c, "login rejected: %s (status class 0x%02x detail 0x%02x)%s%s",
			    native_login_status_str(st), r->status_class,
			    r->status_detail, addr ? ", TargetAddress=" : "",
			    addr ? addr : "");
	}
	if (r->itt != LOGIN_ITT)
		return lerr(c, "Login Response for ITT 0x%08x, not ours", r->itt);
	if (memcmp(r->isid, c->res->isid, 6))
		return lerr(c, "Login Response with a different ISID");
	if (r->version_active != ISCSI_VERSION)
		return lerr(c, "target chose iSCSI version %u", r->version_active);
	if (r->transit && r->cont)
		return lerr(c, "Login Response with both T and C set");
	return 0;
}

/*
 * One negotiation step: sends text (split with the C bit when needed),
 * collects the whole answer (asking for continuations while C is set).
 * The answer is in c->text / c->text_len and c->rsp.
 */
static int login_step(struct login_ctx *c, const struct kvbuf *kv,
		      uint8_t csg, uint8_t nsg, bool transit)
{
	const char *text = kv ? kv->data : NULL;
	size_t len = kv ? kv->len : 0;

	c->text_len = 0;
	while (len > LOGIN_SEG) {
		if (send_login_pdu(c, false, true, csg, 0, text, LOGIN_SEG) ||
		    recv_login_pdu(c))
			return -1;
		/* The target acknowledges each part with an empty response. */
		if (c->text_len || c->rsp.transit)
			return lerr(c, "target answered a continued login PDU");
		text += LOGIN_SEG;
		len -= LOGIN_SEG;
	}
	if (send_login_pdu(c, transit, false, csg, nsg, text, len) ||
	    recv_login_pdu(c))
		return -1;
	while (c->rsp.cont) {
		if (send_login_pdu(c, false, false, csg, 0, NULL, 0) ||
		    recv_login_pdu(c))
			return -1;
	}
	if (c->rsp.csg != csg)
		return lerr(c, "Login Response in stage %u, expected %u",
			    c->rsp.csg, csg);
	if (c->rsp.transit && !transit)
		return lerr(c, "target moved to stage %u without our T bit",
			    c->rsp.nsg);
	if (c->rsp.transit && c->rsp.nsg != nsg && nsg != ISCSI_STAGE_FULL_FEATURE)
		return lerr(c, "target chose next stage %u", c->rsp.nsg);
	return 0;
}

/* ---- security stage ---------------------------------------------------- */

/* The security-stage keys of a target's answer, by id (NULL: absent). */
struct sec_keys {
	const char *value[LOGIN_KEY_COUNT];
};

static int sec_key(void *arg, const char *key, const char *value)
{
	struct sec_keys *k = arg;
	int id = login_key_lookup(key);

	if (id >= 0 && login_key(id)->use == LOGIN_USE_SECURITY)
		k->value[id] = value;
	return 0;
}

static int parse_sec(struct login_ctx *c, struct sec_keys *k)
{
	const char *why;

	memset(k, 0, sizeof(*k));
	if (kv_split(c->text, c->text_len, sec_key, k, &why))
		return lerr(c, "malformed login text from target: %s", why);
	return 0;
}

static int add_leading_keys(struct login_ctx *c, struct kvbuf *kv)
{
	if (kvbuf_add(kv, "InitiatorName", c->cfg->initiator_name) ||
	    kvbuf_add(kv, "SessionType", "Normal") ||
	    kvbuf_add(kv, "TargetName", c->cfg->target_name))
		return lerr(c, "out of memory");
	return 0;
}

static int chap_exchange(struct login_ctx *c, struct kvbuf *kv)
{
	const struct native_login_cfg *cfg = c->cfg;
	bool mutual = cfg->mutual_secret && *cfg->mutual_secret;
	struct native_chap ch;
	struct sec_keys k;
	char list[32];

	kvbuf_reset(kv);
	native_chap_offer(cfg, list, sizeof(list));
	if (kvbuf_add(kv, "CHAP_A", list))
		return lerr(c, "out of memory");
	if (login_step(c, kv, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL,
		       false) || parse_sec(c, &k))
		return -1;
	if (native_chap_answer(&ch, cfg, k.value[LOGIN_KEY_CHAP_A],
			       k.value[LOGIN_KEY_CHAP_I],
			       k.value[LOGIN_KEY_CHAP_C], kv, c->err,
			       c->errlen))
		return -1;
	if (login_step(c, kv, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL,
		       true) || parse_sec(c, &k))
		return -1;
	if (mutual && native_chap_check_target(&ch, cfg,
					       k.value[LOGIN_KEY_CHAP_N],
					       k.value[LOGIN_KEY_CHAP_R],
					       c->err, c->errlen))
		return -1;
	if (!c->rsp.transit)
		return lerr(c, "target stayed in the security stage after CHAP");
	return 0;
}

static int security_stage(struct login_ctx *c, struct kvbuf *kv)
{
	struct sec_keys k;
	const char *method;

	kvbuf_reset(kv);
	if (add_leading_keys(c, kv) ||
	    kvbuf_add(kv, "AuthMethod", "CHAP,None"))
		return lerr(c, "out of memory");
	if (login_step(c, kv, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL,
		       false) || parse_sec(c, &k))
		return -1;
	method = k.value[LOGIN_KEY_AUTH_METHOD];
	if (!method)
		return lerr(c, "target did not answer AuthMethod");
	if (!strcmp(method, "CHAP"))
		return chap_exchange(c, kv);
	if (!strcmp(method, "None")) {
		log_warn("native: target chose AuthMethod=None; CHAP not used");
		kvbuf_reset(kv);
		return login_step(c, NULL, ISCSI_STAGE_SECURITY,
				  ISCSI_STAGE_OPERATIONAL, true);
	}
	return lerr(c, "target answered AuthMethod=%s", method);
}

/* ---- operational stage ------------------------------------------------- */

static int op_key(void *arg, const char *key, const char *value)
{
	return native_neg_answer(arg, key, value);
}

static int operational_stage(struct login_ctx *c, struct kvbuf *kv,
			     bool leading)
{
	struct native_neg neg;
	const char *why;
	int rc = -1;

	native_neg_init(&neg, &c->cfg->offer);
	kvbuf_reset(kv);
	if ((leading && add_leading_keys(c, kv)) ||
	    native_offer_add(&c->cfg->offer, kv)) {
		lerr(c, "out of memory");
		goto out;
	}
	for (int round = 0; round < 8; round++) {
		if (login_step(c, kv, ISCSI_STAGE_OPERATIONAL,
			       ISCSI_STAGE_FULL_FEATURE, true))
			goto out;
		kvbuf_reset(&neg.reply);
		if (kv_split(c->text, c->text_len, op_key, &neg, &why)) {
			if (neg.err[0])
				lerr(c, "%s", neg.err);
			else
				lerr(c, "malformed login text from target: %s", why);
			goto out;
		}
		if (c->rsp.transit) {
			if (c->rsp.nsg != ISCSI_STAGE_FULL_FEATURE) {
				lerr(c, "target went to stage %u", c->rsp.nsg);
				goto out;
			}
			native_neg_finish(&neg);
			c->res->p = neg.p;
			rc = 0;
			goto out;
		}
		/* The target wants another round: send our answers. */
		kvbuf_reset(kv);
		for (size_t off = 0; off < neg.reply.len;) {
			const char *pair = neg.reply.data + off;
			size_t plen = strlen(pair) + 1;
			const char *eq = strchr(pair, '=');
			char key[64];
			size_t klen = eq ? (size_t)(eq - pair) : 0;

			if (eq && klen < sizeof(key)) {
				memcpy(key, pair, klen);
				key[klen] = '\0';
				if (kvbuf_add(kv, key, eq + 1)) {
					lerr(c, "out of memory");
					goto out;
				}
			}
			off += plen;
		}
	}
	lerr(c, "target never moved to full feature phase");
out:
	native_neg_free(&neg);
	return rc;
}

int native_login(int fd, const struct native_login_cfg *cfg,
		 struct native_login_result *res, char *err, size_t errlen)
{
	struct login_ctx c = {
		.fd = fd, .cfg = cfg, .res = res, .err = err, .errlen = errlen,
		.cmdsn = 1,
	};
	struct kvbuf kv;
	bool chap = cfg->chap_user && *cfg->chap_user;
	int rc;

	c.deadline = now_ms() + (cfg->timeout_ms > 0 ? cfg->timeout_ms : 10000);
	memset(res, 0, sizeof(*res));
	/* ISID, random format (T=10b): 0x80, random A/B/C, qualifier. */
	res->isid[0] = 0x80;
	if (cfg->isid) {
		memcpy(res->isid, cfg->isid, 6);
	} else if (RAND_bytes(res->isid + 1, 5) != 1) {
		snprintf(err, errlen, "no random bytes for the ISID");
		return -1;
	}
	if (chap && (!cfg->chap_secret || !*cfg->chap_secret)) {
		snprintf(err, errlen, "CHAP user given without a secret");
		return -1;
	}
	if (chap && cfg->n_chap_algs <= 0) {
		snprintf(err, errlen, "no CHAP algorithms to offer");
		return -1;
	}
	kvbuf_init(&kv);
	rc = chap ? security_stage(&c, &kv) : 0;
	if (!rc)
		rc = operational_stage(&c, &kv, !chap);
	kvbuf_free(&kv);
	free(c.text);
	if (rc)
		return -1;
	res->tsih = c.rsp.tsih;
	res->cmdsn = c.cmdsn;
	res->exp_statsn = c.exp_statsn;
	res->exp_cmdsn = c.rsp.expcmdsn;
	res->max_cmdsn = c.rsp.maxcmdsn;
	if (!res->tsih) {
		snprintf(err, errlen, "target ended login with TSIH 0");
		return -1;
	}
	return 0;
}
