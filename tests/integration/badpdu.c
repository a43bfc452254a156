/*
 * badpdu: feeds a running tcqd malformed and out-of-order PDUs and checks
 * that each is answered as RFC 7143 requires, and that the daemon keeps
 * serving clean sessions afterwards. It speaks iSCSI itself (the project's
 * PDU codec plus plain sockets) because libiscsi refuses to send such
 * PDUs.
 *
 *   badpdu HOST PORT TARGET-IQN
 *
 * Exit status: 0 when every check passed, 1 otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"

#define INITIATOR_NAME "iqn.2026-11.org.tcq:badpdu"
#define MAX_RX_SEGMENT (16u << 20)

struct sess {
	int fd;
	uint32_t itt;		/* next initiator task tag */
	uint32_t cmdsn;		/* next CmdSN to use */
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t exp_statsn;
	uint32_t peer_mrdsl;	/* target's MaxRecvDataSegmentLength */
	uint16_t tsih;
};

struct rxpdu {
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t *data;
	uint32_t len;
};

static const char *host, *port, *target_iqn;
static int failures;
static uint8_t isid_seq;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("badpdu: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
}

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			note("ok: " __VA_ARGS__);                          \
		} else {                                                   \
			note("FAIL: " __VA_ARGS__);                        \
			failures++;                                        \
		}                                                          \
	} while (0)

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int tcp_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct timeval tv = { .tv_sec = 5 };
	int one = 1;
	int fd = -1, rc;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		note("getaddrinfo %s:%s: %s", host, port, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		note("connect %s:%s: %s", host, port, strerror(errno));
		return -1;
	}
	/* A target that stops reading must not hang us: sends time out. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Sends BHS, data and padding in one go. Returns 0, or -1 (errno set). */
static int send_pdu(int fd, const uint8_t *bhs, const void *data,
		    uint32_t len)
{
	static const uint8_t zeros[4];
	struct iovec iov[3] = {
		{ (void *)bhs, ISCSI_BHS_LEN },
		{ (void *)data, len },
		{ (void *)zeros, pdu_pad(len) },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t left = ISCSI_BHS_LEN + len + pdu_pad(len);

	while (left > 0) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		left -= (size_t)n;
		/* Skip what went out. */
		while (n > 0 && mh.msg_iovlen > 0) {
			if ((size_t)n >= mh.msg_iov->iov_len) {
				n -= (ssize_t)mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base =
					(uint8_t *)mh.msg_iov->iov_base + n;
				mh.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

/* Reads exactly n bytes before the deadline: 1 done, 0 timeout, -1 EOF
 * or error. */
static int recv_full(int fd, void *buf, size_t n, int64_t deadline)
{
	uint8_t *p = buf;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t got;

		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;	/* EINTR or timeout: loop re-checks */
		got = recv(fd, p, n, 0);
		if (got == 0)
			return -1;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		p += got;
		n -= (size_t)got;
	}
	return 1;
}

static void rx_free(struct rxpdu *r)
{
	free(r->data);
	r->data = NULL;
	r->len = 0;
}

/* One PDU from the target: 1 received, 0 timeout, -1 closed/bad. */
static int recv_pdu_raw(int fd, struct rxpdu *r, int64_t deadline)
{
	uint8_t ahs[255 * 4];
	uint32_t ahs_len, pad;
	uint8_t padbuf[4];
	int rc;

	r->data = NULL;
	r->len = 0;
	rc = recv_full(fd, r->bhs, ISCSI_BHS_LEN, deadline);
	if (rc <= 0)
		return rc;
	ahs_len = pdu_ahs_len(r->bhs);
	if (ahs_len && recv_full(fd, ahs, ahs_len, deadline) <= 0)
		return -1;
	r->len = pdu_data_len(r->bhs);
	if (r->len > MAX_RX_SEGMENT) {
		note("target sent a %u-byte data segment", r->len);
		return -1;
	}
	if (r->len) {
		r->data = malloc(r->len + 1);
		if (!r->data)
			return -1;
		if (recv_full(fd, r->data, r->len, deadline) <= 0) {
			rx_free(r);
			return -1;
		}
		r->data[r->len] = 0;
	}
	pad = pdu_pad(r->len);
	if (pad && recv_full(fd, padbuf, pad, deadline) <= 0) {
		rx_free(r);
		return -1;
	}
	return 1;
}

/* Tracks the numbers every status-carrying target PDU reports. */
static void track_sn(struct sess *s, const uint8_t *bhs)
{
	uint8_t op = pdu_opcode(bhs);
	uint32_t exp, max;

	if (op == ISCSI_OP_R2T || op == ISCSI_OP_REJECT ||
	    op == ISCSI_OP_NOP_IN || op == ISCSI_OP_SCSI_RSP ||
	    op == ISCSI_OP_TMF_RSP || op == ISCSI_OP_LOGOUT_RSP ||
	    op == ISCSI_OP_TEXT_RSP || op == ISCSI_OP_ASYNC_MSG ||
	    op == ISCSI_OP_DATA_IN) {
		exp = get_be32(bhs + BHS_EXPCMDSN);
		max = get_be32(bhs + BHS_MAXCMDSN);
		if (sn_le(exp, max + 1)) {
			if (sn_gt(exp, s->exp_cmdsn))
				s->exp_cmdsn = exp;
			if (sn_gt(max, s->max_cmdsn))
				s->max_cmdsn = max;
		}
	}
	/* StatSN advances only on PDUs that carry status. */
	if (op == ISCSI_OP_SCSI_RSP || op == ISCSI_OP_NOP_IN ||
	    op == ISCSI_OP_REJECT || op == ISCSI_OP_TMF_RSP ||
	    op == ISCSI_OP_LOGOUT_RSP || op == ISCSI_OP_TEXT_RSP ||
	    op == ISCSI_OP_ASYNC_MSG ||
	    (op == ISCSI_OP_DATA_IN && (bhs[BHS_FLAGS] & ISCSI_FLAG_STATUS))) {
		uint32_t statsn = get_be32(bhs + BHS_STATSN);

		/* A NOP-In ping that carries no status repeats StatSN. */
		if (sn_le(s->exp_statsn, statsn))
			s->exp_statsn = statsn + 1;
	}
}

/*
 * Next PDU for the test: answers target pings and skips async messages on
 * the way. 1 received, 0 timeout, -1 closed.
 */
static int recv_pdu(struct sess *s, struct rxpdu *r, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int rc = recv_pdu_raw(s->fd, r, deadline);
		uint8_t op;

		if (rc <= 0)
			return rc;
		op = pdu_opcode(r->bhs);
		track_sn(s, r->bhs);
		if (op == ISCSI_OP_NOP_IN &&
		    get_be32(r->bhs + BHS_TTT) != ISCSI_RSVD_TAG) {
			struct pdu_nop_in ni;
			struct pdu_nop_out no = { 0 };
			uint8_t bhs[ISCSI_BHS_LEN];

			pdu_decode_nop_in(r->bhs, &ni);
			no.immediate = true;
			no.lun = ni.lun;
			no.itt = ISCSI_RSVD_TAG;
			no.ttt = ni.ttt;
			no.cmdsn = s->cmdsn;
			no.expstatsn = s->exp_statsn;
			pdu_encode_nop_out(bhs, &no);
			pdu_set_data_len(bhs, 0);
			send_pdu(s->fd, bhs, NULL, 0);
			rx_free(r);
			continue;
		}
		if (op == ISCSI_OP_ASYNC_MSG) {
			note("(async message, event %u)", r->bhs[36]);
			rx_free(r);
			continue;
		}
		return 1;
	}
}

/* Looks up key in a NUL-separated key=value segment. */
static const char *kv_find(const uint8_t *data, uint32_t len,
			   const char *key)
{
	size_t klen = strlen(key);
	uint32_t off = 0;

	while (off < len) {
		const char *pair = (const char *)data + off;
		size_t plen = strnlen(pair, len - off);

		if (plen > klen && !memcmp(pair, key, klen) &&
		    pair[klen] == '=')
			return pair + klen + 1;
		off += (uint32_t)plen + 1;
	}
	return NULL;
}

static size_t kv_add(char *buf, size_t off, size_t cap, const char *key,
		     const char *val)
{
	int n = snprintf(buf + off, cap - off, "%s=%s", key, val);

	if (n < 0 || (size_t)n + 1 > cap - off)
		return off;
	return off + (size_t)n + 1;	/* keep the NUL separator */
}

static void sess_close(struct sess *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/*
 * Keys the target offered that we did not send need an answer before it
 * lets the login finish; accepting its value is always valid for the
 * keys a target may offer. Declarative keys need none. Builds the answer
 * into out (which may alias sent) and returns its length.
 */
static size_t answer_offers(char *out, size_t cap, const char *sent,
			    size_t sent_len, const struct rxpdu *r)
{
	static const char *const declarative[] = {
		"TargetPortalGroupTag", "MaxRecvDataSegmentLength",
		"TargetAlias", "TargetAddress", "TargetName",
	};
	char ans[1024];
	size_t alen = 0, i;
	uint32_t off = 0;

	while (r->data && off < r->len) {
		const char *pair = (const char *)r->data + off;
		size_t plen = strnlen(pair, r->len - off);
		const char *eq = memchr(pair, '=', plen);
		char key[64];
		bool skip = false;

		off += (uint32_t)plen + 1;
		if (!eq || (size_t)(eq - pair) >= sizeof(key))
			continue;
		memcpy(key, pair, (size_t)(eq - pair));
		key[eq - pair] = 0;
		for (i = 0; i < sizeof(declarative) / sizeof(declarative[0]); i++)
			skip |= !strcmp(key, declarative[i]);
		if (skip || kv_find((const uint8_t *)sent, (uint32_t)sent_len,
				    key))
			continue;
		alen = kv_add(ans, alen, sizeof(ans), key, eq + 1);
	}
	if (alen > cap)
		alen = 0;
	memcpy(out, ans, alen);
	return alen;
}

/* Says why a login round did not finish (diagnostics only). */
static void show_login_rsp(const struct pdu_login_rsp *lr,
			   const struct rxpdu *r)
{
	char text[512];
	uint32_t i, n = r->len < sizeof(text) - 1 ? r->len : sizeof(text) - 1;

	for (i = 0; i < n; i++)
		text[i] = r->data[i] ? (char)r->data[i] : ' ';
	text[n] = 0;
	note("login response T=%d C=%d CSG=%u NSG=%u: %s", lr->transit,
	     lr->cont, lr->csg, lr->nsg, text);
}

/*
 * Logs in straight to the full feature phase: one operational-stage
 * request with T=1 NSG=3 (repeated without keys if the target wants
 * another round). Returns 0 when the session is up.
 */
static int sess_login(struct sess *s)
{
	char keys[1024];
	size_t klen = 0;
	struct pdu_login_req lq = { 0 };
	struct pdu_login_rsp lr;
	uint8_t bhs[ISCSI_BHS_LEN];
	struct rxpdu r;
	int round;

	memset(s, 0, sizeof(*s));
	s->fd = tcp_connect();
	if (s->fd < 0)
		return -1;
	s->itt = 0x1000;
	s->cmdsn = 1;
	s->peer_mrdsl = 8192;	/* RFC 7143 default when not declared */

	klen = kv_add(keys, klen, sizeof(keys), "InitiatorName",
		      INITIATOR_NAME);
	klen = kv_add(keys, klen, sizeof(keys), "TargetName", target_iqn);
	klen = kv_add(keys, klen, sizeof(keys), "SessionType", "Normal");
	klen = kv_add(keys, klen, sizeof(keys), "HeaderDigest", "None");
	klen = kv_add(keys, klen, sizeof(keys), "DataDigest", "None");
	klen = kv_add(keys, klen, sizeof(keys), "MaxRecvDataSegmentLength",
		      "65536");
	klen = kv_add(keys, klen, sizeof(keys), "InitialR2T", "Yes");
	klen = kv_add(keys, klen, sizeof(keys), "ImmediateData", "Yes");
	klen = kv_add(keys, klen, sizeof(keys), "ErrorRecoveryLevel", "0");
	klen = kv_add(keys, klen, sizeof(keys), "MaxBurstLength", "262144");
	klen = kv_add(keys, klen, sizeof(keys), "FirstBurstLength", "65536");
	klen = kv_add(keys, klen, sizeof(keys), "MaxConnections", "1");
	klen = kv_add(keys, klen, sizeof(keys), "MaxOutstandingR2T", "1");
	klen = kv_add(keys, klen, sizeof(keys), "DefaultTime2Wait", "2");
	klen = kv_add(keys, klen, sizeof(keys), "DefaultTime2Retain", "0");
	klen = kv_add(keys, klen, sizeof(keys), "DataPDUInOrder", "Yes");
	klen = kv_add(keys, klen, sizeof(keys), "DataSequenceInOrder", "Yes");

	lq.transit = true;
	lq.csg = ISCSI_STAGE_OPERATIONAL;
	lq.nsg = ISCSI_STAGE_FULL_FEATURE;
	lq.version_max = ISCSI_VERSION;
	lq.version_min = ISCSI_VERSION;
	lq.isid[0] = 0x80;	/* random-qualifier format */
	lq.isid[1] = 0x7c;
	lq.isid[2] = 0x71;
	lq.isid[3] = 0xbd;
	lq.isid[4] = (uint8_t)getpid();
	lq.isid[5] = ++isid_seq;
	lq.itt = s->itt++;
	lq.cmdsn = s->cmdsn;

	for (round = 0; round < 8; round++) {
		lq.data_len = (uint32_t)klen;
		lq.expstatsn = s->exp_statsn;
		pdu_encode_login_req(bhs, &lq);
		pdu_set_data_len(bhs, (uint32_t)klen);
		if (send_pdu(s->fd, bhs, keys, (uint32_t)klen) < 0) {
			note("login send: %s", strerror(errno));
			goto fail;
		}
		if (recv_pdu_raw(s->fd, &r, now_ms() + 5000) <= 0) {
			note("no login response");
			goto fail;
		}
		if (pdu_opcode(r.bhs) != ISCSI_OP_LOGIN_RSP) {
			note("login answered with opcode 0x%02x",
			     pdu_opcode(r.bhs));
			rx_free(&r);
			goto fail;
		}
		pdu_decode_login_rsp(r.bhs, &lr);
		if (lr.status_class != 0) {
			note("login refused: class %u detail %u",
			     lr.status_class, lr.status_detail);
			rx_free(&r);
			goto fail;
		}
		s->exp_statsn = lr.statsn + 1;
		s->exp_cmdsn = lr.expcmdsn;
		s->max_cmdsn = lr.maxcmdsn;
		if (r.data) {
			const char *v = kv_find(r.data, r.len,
						"MaxRecvDataSegmentLength");
			if (v)
				s->peer_mrdsl = (uint32_t)strtoul(v, NULL, 10);
		}
		/* Next round answers what the target offered on its own. */
		klen = answer_offers(keys, sizeof(keys), keys, klen, &r);
		if (!lr.transit || lr.nsg != ISCSI_STAGE_FULL_FEATURE ||
		    lr.cont)
			show_login_rsp(&lr, &r);
		rx_free(&r);
		if (lr.transit && lr.nsg == ISCSI_STAGE_FULL_FEATURE &&
		    !lr.cont) {
			s->tsih = lr.tsih;
			s->cmdsn = s->exp_cmdsn;
			return 0;
		}
	}
	note("login did not reach the full feature phase");
fail:
	sess_close(s);
	return -1;
}

static int send_nop_ping(struct sess *s, uint32_t itt, const void *data,
			 uint32_t len, uint32_t declared_len)
{
	struct pdu_nop_out no = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	no.immediate = true;
	no.itt = itt;
	no.ttt = ISCSI_RSVD_TAG;
	no.cmdsn = s->cmdsn;
	no.expstatsn = s->exp_statsn;
	no.data_len = declared_len;
	pdu_encode_nop_out(bhs, &no);
	pdu_set_data_len(bhs, declared_len);
	return send_pdu(s->fd, bhs, data, len);
}

static int send_cdb(struct sess *s, uint32_t itt, uint32_t cmdsn,
		    const uint8_t *cdb, size_t cdb_len)
{
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	sc.final = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.lun = 0;
	sc.itt = itt;
	sc.edtl = 0;
	sc.cmdsn = cmdsn;
	sc.expstatsn = s->exp_statsn;
	memcpy(sc.cdb, cdb, cdb_len);
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	return send_pdu(s->fd, bhs, NULL, 0);
}

/* Sense key from the SCSI Response data segment (2-byte length first). */
static int sense_key(const struct rxpdu *r)
{
	const uint8_t *sense;
	uint32_t slen;

	if (r->len < 4)
		return -1;
	slen = get_be16(r->data);
	if (slen + 2 > r->len || slen < 3)
		return -1;
	sense = r->data + 2;
	if ((sense[0] & 0x7f) >= 0x72)
		return sense[1] & 0x0f;	/* descriptor format */
	return sense[2] & 0x0f;		/* fixed format */
}

/*
 * TEST UNIT READY with a fresh CmdSN; retries past unit attentions (the
 * first command of a nexus may report one). Returns the final status, or
 * -1 when no response came.
 */
static int tur(struct sess *s)
{
	static const uint8_t cdb[6] = { SOP_TEST_UNIT_READY };
	int attempt;

	for (attempt = 0; attempt < 4; attempt++) {
		uint32_t itt = s->itt++;
		struct rxpdu r;
		int status;

		/* Whether a rejected PDU used up its CmdSN is the target's
		 * call; follow the ExpCmdSN it reports. */
		if (sn_gt(s->exp_cmdsn, s->cmdsn))
			s->cmdsn = s->exp_cmdsn;
		if (send_cdb(s, itt, s->cmdsn++, cdb, sizeof(cdb)) < 0)
			return -1;
		for (;;) {
			if (recv_pdu(s, &r, 5000) <= 0)
				return -1;
			if (pdu_opcode(r.bhs) == ISCSI_OP_SCSI_RSP &&
			    pdu_itt(r.bhs) == itt)
				break;
			note("(unexpected opcode 0x%02x while waiting for TUR)",
			     pdu_opcode(r.bhs));
			rx_free(&r);
		}
		status = r.bhs[BHS_B3];
		if (status == SAM_STAT_CHECK_CONDITION &&
		    sense_key(&r) == 0x06) {
			rx_free(&r);
			continue;	/* UNIT ATTENTION: ask again */
		}
		rx_free(&r);
		return status;
	}
	return SAM_STAT_CHECK_CONDITION;
}

static void sess_logout(struct sess *s)
{
	struct pdu_logout_req lo = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	struct rxpdu r;

	lo.immediate = true;
	lo.reason = ISCSI_LOGOUT_CLOSE_SESSION;
	lo.itt = s->itt++;
	lo.cmdsn = s->cmdsn;
	lo.expstatsn = s->exp_statsn;
	pdu_encode_logout_req(bhs, &lo);
	pdu_set_data_len(bhs, 0);
	if (send_pdu(s->fd, bhs, NULL, 0) == 0) {
		while (recv_pdu(s, &r, 5000) > 0) {
			bool done = pdu_opcode(r.bhs) == ISCSI_OP_LOGOUT_RSP;

			if (done)
				CHECK(r.bhs[BHS_B2] == ISCSI_LOGOUT_RSP_SUCCESS,
				      "logout response %u", r.bhs[BHS_B2]);
			rx_free(&r);
			if (done)
				break;
		}
	}
	sess_close(s);
}

/* (a) 20 bytes of a Login Request, then close: nothing to answer. */
static void test_truncated_header(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_login_req lq = { 0 };
	int fd = tcp_connect();

	note("(a) truncated header: 20 of 48 BHS bytes, then close");
	if (fd < 0) {
		CHECK(0, "(a) connect");
		return;
	}
	lq.transit = true;
	lq.csg = ISCSI_STAGE_OPERATIONAL;
	lq.nsg = ISCSI_STAGE_FULL_FEATURE;
	lq.itt = 1;
	lq.cmdsn = 1;
	pdu_encode_login_req(bhs, &lq);
	pdu_set_data_len(bhs, 0);
	CHECK(send(fd, bhs, 20, MSG_NOSIGNAL) == 20, "(a) sent 20 bytes");
	close(fd);
	/* Same again, this time mid-session. */
	{
		struct sess s;
		struct pdu_nop_out no = { 0 };

		if (sess_login(&s) < 0) {
			CHECK(0, "(a) login after a truncated login header");
			return;
		}
		no.immediate = true;
		no.itt = s.itt++;
		no.ttt = ISCSI_RSVD_TAG;
		no.cmdsn = s.cmdsn;
		pdu_encode_nop_out(bhs, &no);
		pdu_set_data_len(bhs, 0);
		CHECK(send(s.fd, bhs, 20, MSG_NOSIGNAL) == 20,
		      "(a) sent 20 bytes of a NOP-Out in a session");
		sess_close(&s);
	}
}

/* (b) A data segment longer than the target's MaxRecvDataSegmentLength. */
static void test_oversize_segment(void)
{
	struct sess s;
	uint32_t len, itt;
	uint8_t *buf;
	struct rxpdu r;
	int64_t t0;
	int rc;

	note("(b) data segment longer than MaxRecvDataSegmentLength");
	if (sess_login(&s) < 0) {
		CHECK(0, "(b) login");
		return;
	}
	if (s.peer_mrdsl >= 0xffffff - 4096) {
		note("(b) target declares MaxRecvDataSegmentLength=%u: cannot exceed it",
		     s.peer_mrdsl);
		sess_close(&s);
		return;
	}
	len = s.peer_mrdsl + 4096;
	buf = calloc(1, len);
	if (!buf) {
		sess_close(&s);
		failures++;
		return;
	}
	itt = s.itt++;
	t0 = now_ms();
	note("(b) target MaxRecvDataSegmentLength=%u, sending a %u-byte NOP-Out",
	     s.peer_mrdsl, len);
	send_nop_ping(&s, itt, buf, len, len);	/* may fail: target hung up */
	free(buf);
	rc = recv_pdu(&s, &r, 5000);
	if (rc < 0) {
		CHECK(1, "(b) connection closed after %lld ms",
		      (long long)(now_ms() - t0));
	} else if (rc == 0) {
		CHECK(0, "(b) silence for 5 s (expected Reject or close)");
	} else {
		uint8_t op = pdu_opcode(r.bhs);

		if (op == ISCSI_OP_REJECT)
			CHECK(1, "(b) Reject, reason 0x%02x", r.bhs[BHS_B2]);
		else
			CHECK(0, "(b) answered with opcode 0x%02x instead of Reject or close",
			      op);
		rx_free(&r);
	}
	sess_close(&s);
}

/* (c) unknown opcode -> Reject 0x05, and the connection still works. */
static void test_unknown_opcode(struct sess *s)
{
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
	static const char ping[] = "tcq-badpdu-ping!";
	uint32_t itt = s->itt++;
	struct rxpdu r;
	int rc;

	note("(c) unknown opcode 0x1f");
	bhs[BHS_OPCODE] = 0x1f;
	bhs[BHS_FLAGS] = ISCSI_FLAG_FINAL;
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_F20, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_CMDSN, s->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, s->exp_statsn);
	if (send_pdu(s->fd, bhs, NULL, 0) < 0) {
		CHECK(0, "(c) send: %s", strerror(errno));
		return;
	}
	rc = recv_pdu(s, &r, 5000);
	if (rc <= 0) {
		CHECK(0, "(c) no Reject (%s)", rc ? "connection closed" : "timeout");
		return;
	}
	if (pdu_opcode(r.bhs) != ISCSI_OP_REJECT) {
		CHECK(0, "(c) answered with opcode 0x%02x, not Reject",
		      pdu_opcode(r.bhs));
		rx_free(&r);
		return;
	}
	CHECK(r.bhs[BHS_B2] == ISCSI_REJECT_CMD_NOT_SUPPORTED,
	      "(c) Reject reason 0x%02x (want 0x05)", r.bhs[BHS_B2]);
	CHECK(r.len == ISCSI_BHS_LEN && pdu_opcode(r.data) == 0x1f &&
	      get_be32(r.data + BHS_ITT) == itt,
	      "(c) Reject carries the rejected header (%u bytes)", r.len);
	CHECK(get_be32(r.bhs + BHS_ITT) == ISCSI_RSVD_TAG,
	      "(c) Reject ITT is 0xffffffff");
	note("(c) sent CmdSN %u; Reject says ExpCmdSN %u MaxCmdSN %u",
	     s->cmdsn, get_be32(r.bhs + BHS_EXPCMDSN),
	     get_be32(r.bhs + BHS_MAXCMDSN));
	rx_free(&r);

	itt = s->itt++;
	if (send_nop_ping(s, itt, ping, sizeof(ping) - 1, sizeof(ping) - 1) < 0) {
		CHECK(0, "(c) ping send: %s", strerror(errno));
		return;
	}
	rc = recv_pdu(s, &r, 5000);
	if (rc <= 0) {
		CHECK(0, "(c) ping after Reject: %s",
		      rc ? "connection closed" : "no answer in 5 s");
		return;
	}
	CHECK(pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN && pdu_itt(r.bhs) == itt &&
	      r.len == sizeof(ping) - 1 && !memcmp(r.data, ping, r.len),
	      "(c) ping after Reject answered with its data echoed");
	rx_free(&r);
}

/* (d) CmdSN outside the window is dropped; the right one is served. */
static void test_cmdsn_window(struct sess *s)
{
	static const uint8_t cdb[6] = { SOP_TEST_UNIT_READY };
	uint32_t high = s->max_cmdsn + 100, low = s->exp_cmdsn - 50;
	uint32_t itt_high = s->itt++, itt_low = s->itt++, itt_ok;
	struct rxpdu r;
	int rc;

	note("(d) CmdSN window [%u, %u]: sending CmdSN %u and %u",
	     s->exp_cmdsn, s->max_cmdsn, high, low);
	send_cdb(s, itt_high, high, cdb, sizeof(cdb));
	send_cdb(s, itt_low, low, cdb, sizeof(cdb));
	rc = recv_pdu(s, &r, 2000);
	if (rc > 0) {
		CHECK(0, "(d) out-of-window command answered (opcode 0x%02x, ITT 0x%x)",
		      pdu_opcode(r.bhs), pdu_itt(r.bhs));
		rx_free(&r);
	} else {
		CHECK(rc == 0, "(d) out-of-window commands ignored for 2 s%s",
		      rc ? " (but the connection closed)" : "");
		if (rc < 0)
			return;
	}
	itt_ok = s->itt;
	rc = tur(s);
	CHECK(rc >= 0, "(d) in-window command (ITT 0x%x) answered, status 0x%02x",
	      itt_ok, rc);
}

int main(int argc, char **argv)
{
	struct sess s;

	if (argc != 4) {
		fprintf(stderr, "usage: %s HOST PORT TARGET-IQN\n", argv[0]);
		return 2;
	}
	host = argv[1];
	port = argv[2];
	target_iqn = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_truncated_header();
	test_oversize_segment();

	if (sess_login(&s) == 0) {
		test_unknown_opcode(&s);
		test_cmdsn_window(&s);
		sess_logout(&s);
	} else {
		CHECK(0, "(c,d) login");
	}

	note("(e) clean session after all that");
	if (sess_login(&s) == 0) {
		CHECK(1, "(e) login");
		CHECK(tur(&s) == SAM_STAT_GOOD, "(e) TEST UNIT READY is GOOD");
		sess_logout(&s);
	} else {
		CHECK(0, "(e) login");
	}

	note("%s (%d failure%s)", failures ? "FAILED" : "passed", failures,
	     failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
