/*
 * pdutest: the raw iSCSI test client shared by badpdu and sessions (see
 * pdutest.h). Blocking sockets, one PDU at a time, a deadline on every
 * receive.
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

#include "tcq/crc32c.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"

const char *pt_prog = "pdutest";
const char *pt_host, *pt_port;
const char *pt_target_iqn;
const char *pt_initiator = "iqn.2026-11.org.tcq:pdutest";
int pt_failures;
int pt_checks;

static uint8_t isid_seq;

void pt_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", pt_prog);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
}

int64_t pt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int pt_tcp_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct timeval tv = { .tv_sec = 5 };
	int one = 1;
	int fd = -1, rc;

	rc = getaddrinfo(pt_host, pt_port, &hints, &res);
	if (rc != 0) {
		pt_note("getaddrinfo %s:%s: %s", pt_host, pt_port,
			gai_strerror(rc));
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
		pt_note("connect %s:%s: %s", pt_host, pt_port, strerror(errno));
		return -1;
	}
	/* A target that stops reading must not hang us: sends time out. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Sends every iovec in full (blocking): 0, or -1 (errno set). */
static int send_all(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
	size_t left = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		left += iov[i].iov_len;
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

int pt_send_pdu(int fd, const uint8_t *bhs, const void *data, uint32_t len)
{
	static const uint8_t zeros[4];
	struct iovec iov[3] = {
		{ (void *)bhs, ISCSI_BHS_LEN },
		{ (void *)data, len },
		{ (void *)zeros, pdu_pad(len) },
	};

	return send_all(fd, iov, 3);
}

/* Digests travel least significant byte first (RFC 7143 12.1). */
static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Data digest: over the segment and its padding (RFC 7143 12.1). */
static uint32_t data_crc(const void *data, uint32_t len)
{
	static const uint8_t zeros[4];
	uint32_t crc = crc32c_update(0xffffffffu, data, len);

	return ~crc32c_update(crc, zeros, pdu_pad(len));
}

int pt_sess_send(struct pt_sess *s, const uint8_t *bhs, const void *data,
		 uint32_t len, uint32_t hd_xor, uint32_t dd_xor)
{
	static const uint8_t zeros[4];
	uint8_t hd[4], dd[4];
	uint32_t v;
	struct iovec iov[5] = {
		{ (void *)bhs, ISCSI_BHS_LEN },
		{ hd, s->hdgst ? 4 : 0 },
		{ (void *)data, len },
		{ (void *)zeros, pdu_pad(len) },
		{ dd, s->ddgst && len ? 4 : 0 },
	};

	v = crc32c(bhs, ISCSI_BHS_LEN) ^ hd_xor;
	put_le32(hd, v);
	v = len ? data_crc(data, len) ^ dd_xor : 0;
	put_le32(dd, v);
	return send_all(s->fd, iov, 5);
}

/* Reads exactly n bytes before the deadline: 1 done, 0 timeout, -1 EOF
 * or error. */
static int recv_full(int fd, void *buf, size_t n, int64_t deadline)
{
	uint8_t *p = buf;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - pt_now_ms();
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

void pt_rx_free(struct pt_rx *r)
{
	free(r->data);
	r->data = NULL;
	r->len = 0;
}

/* One PDU; with s, the digests s negotiated are read and checked. */
static int recv_pdu(int fd, struct pt_rx *r, int64_t deadline,
		    struct pt_sess *s)
{
	uint8_t hdr[ISCSI_BHS_LEN + 255 * 4];
	uint32_t ahs_len, pad;
	uint8_t padbuf[4], dg[4];
	int rc;

	r->data = NULL;
	r->len = 0;
	rc = recv_full(fd, hdr, ISCSI_BHS_LEN, deadline);
	if (rc <= 0)
		return rc;
	memcpy(r->bhs, hdr, ISCSI_BHS_LEN);
	ahs_len = pdu_ahs_len(r->bhs);
	if (ahs_len &&
	    recv_full(fd, hdr + ISCSI_BHS_LEN, ahs_len, deadline) <= 0)
		return -1;
	if (s && s->hdgst) {
		if (recv_full(fd, dg, 4, deadline) <= 0)
			return -1;
		s->hdgst_checked++;
		if (get_le32(dg) != crc32c(hdr, ISCSI_BHS_LEN + ahs_len)) {
			s->digest_errors++;
			pt_note("header digest mismatch on opcode 0x%02x ITT 0x%x",
				pdu_opcode(r->bhs), pdu_itt(r->bhs));
		}
	}
	r->len = pdu_data_len(r->bhs);
	if (r->len > PT_MAX_RX_SEGMENT) {
		pt_note("target sent a %u-byte data segment", r->len);
		return -1;
	}
	if (r->len) {
		r->data = malloc(r->len + 1);
		if (!r->data)
			return -1;
		if (recv_full(fd, r->data, r->len, deadline) <= 0) {
			pt_rx_free(r);
			return -1;
		}
		r->data[r->len] = 0;
	}
	pad = pdu_pad(r->len);
	if (pad && recv_full(fd, padbuf, pad, deadline) <= 0) {
		pt_rx_free(r);
		return -1;
	}
	if (s && s->ddgst && r->len) {
		if (recv_full(fd, dg, 4, deadline) <= 0) {
			pt_rx_free(r);
			return -1;
		}
		s->ddgst_checked++;
		if (get_le32(dg) != data_crc(r->data, r->len)) {
			s->digest_errors++;
			pt_note("data digest mismatch on opcode 0x%02x ITT 0x%x (%u bytes)",
				pdu_opcode(r->bhs), pdu_itt(r->bhs), r->len);
		}
	}
	return 1;
}

int pt_recv_raw(int fd, struct pt_rx *r, int64_t deadline)
{
	return recv_pdu(fd, r, deadline, NULL);
}

int pt_sess_recv_raw(struct pt_sess *s, struct pt_rx *r, int64_t deadline)
{
	return recv_pdu(s->fd, r, deadline, s);
}

void pt_track_sn(struct pt_sess *s, const uint8_t *bhs)
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

void pt_answer_ping(struct pt_sess *s, const struct pt_rx *r)
{
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
	if (pt_sess_send(s, bhs, NULL, 0, 0, 0) == 0)
		s->pings_answered++;
}

int pt_recv(struct pt_sess *s, struct pt_rx *r, int timeout_ms)
{
	int64_t deadline = pt_now_ms() + timeout_ms;

	for (;;) {
		int rc = pt_sess_recv_raw(s, r, deadline);
		uint8_t op;

		if (rc <= 0)
			return rc;
		op = pdu_opcode(r->bhs);
		pt_track_sn(s, r->bhs);
		if (s->watch_itt != ISCSI_RSVD_TAG &&
		    pdu_itt(r->bhs) == s->watch_itt)
			s->watch_hits++;
		if (op == ISCSI_OP_NOP_IN && s->answer_pings &&
		    get_be32(r->bhs + BHS_TTT) != ISCSI_RSVD_TAG) {
			pt_answer_ping(s, r);
			pt_rx_free(r);
			continue;
		}
		if (op == ISCSI_OP_ASYNC_MSG) {
			pt_note("(async message, event %u)", r->bhs[36]);
			pt_rx_free(r);
			continue;
		}
		return 1;
	}
}

void pt_check_bare_rsp(const uint8_t *bhs, uint32_t data_len, uint8_t opcode,
		       uint32_t itt, uint32_t statsn)
{
	PT_CHECK(bhs[BHS_OPCODE] == opcode && bhs[BHS_FLAGS] == 0x80,
		 "opcode 0x%02x (want 0x%02x), byte 1 0x%02x (want 0x80)",
		 bhs[BHS_OPCODE], opcode, bhs[BHS_FLAGS]);
	PT_CHECK(bhs[BHS_TOTAL_AHS_LEN] == 0 && data_len == 0,
		 "TotalAHSLength %u, DataSegmentLength %u (want 0, 0)",
		 bhs[BHS_TOTAL_AHS_LEN], data_len);
	PT_CHECK(get_be32(bhs + BHS_ITT) == itt, "ITT 0x%x echoes ours 0x%x",
		 get_be32(bhs + BHS_ITT), itt);
	PT_CHECK(get_be32(bhs + BHS_STATSN) == statsn,
		 "StatSN %u is the one due (%u)", get_be32(bhs + BHS_STATSN),
		 statsn);
}

const char *pt_kv_find(const uint8_t *data, uint32_t len, const char *key)
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

size_t pt_kv_add(char *buf, size_t off, size_t cap, const char *key,
		 const char *val)
{
	int n = snprintf(buf + off, cap - off, "%s=%s", key, val);

	if (n < 0 || (size_t)n + 1 > cap - off)
		return off;
	return off + (size_t)n + 1;	/* keep the NUL separator */
}

void pt_close(struct pt_sess *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int64_t pt_wait_closed(struct pt_sess *s, int timeout_ms)
{
	int64_t t0 = pt_now_ms(), deadline = t0 + timeout_ms;
	struct pt_rx r;

	for (;;) {
		int64_t left = deadline - pt_now_ms();
		int rc;

		if (left <= 0)
			return -1;
		rc = pt_recv(s, &r, (int)left);
		if (rc < 0)
			return pt_now_ms() - t0;
		if (rc == 0)
			return -1;
		pt_note("(opcode 0x%02x ITT 0x%x while waiting for the close)",
			pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	}
}

/*
 * Keys the target offered that we did not send need an answer before it
 * lets the login finish; accepting its value is always valid for the
 * keys a target may offer. Declarative keys need none. Builds the answer
 * into out (which may alias sent) and returns its length.
 */
static size_t answer_offers(char *out, size_t cap, const char *sent,
			    size_t sent_len, const struct pt_rx *r)
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
		if (skip || pt_kv_find((const uint8_t *)sent,
				       (uint32_t)sent_len, key))
			continue;
		alen = pt_kv_add(ans, alen, sizeof(ans), key, eq + 1);
	}
	if (alen > cap)
		alen = 0;
	memcpy(out, ans, alen);
	return alen;
}

/* Says why a login round did not finish (diagnostics only). */
static void show_login_rsp(const struct pdu_login_rsp *lr,
			   const struct pt_rx *r)
{
	char text[512];
	uint32_t i, n = r->len < sizeof(text) - 1 ? r->len : sizeof(text) - 1;

	for (i = 0; i < n; i++)
		text[i] = r->data[i] ? (char)r->data[i] : ' ';
	text[n] = 0;
	pt_note("login response T=%d C=%d CSG=%u NSG=%u: %s", lr->transit,
		lr->cont, lr->csg, lr->nsg, text);
}

/* The first login text: who we are and what we offer. */
static size_t login_keys(char *keys, size_t cap, const struct pt_login_opts *o)
{
	const char *iname = o->initiator ? o->initiator : pt_initiator;
	const char *mrdsl = o->mrdsl ? o->mrdsl : "65536";
	const char *imm = o->immediate_data ? o->immediate_data : "Yes";
	const char *const ours[][2] = {
		{ "InitialR2T", "Yes" }, { "ImmediateData", imm },
		{ "ErrorRecoveryLevel", "0" }, { "MaxBurstLength", "262144" },
		{ "FirstBurstLength", "65536" }, { "MaxConnections", "1" },
		{ "MaxOutstandingR2T", "1" }, { "DefaultTime2Wait", "2" },
		{ "DefaultTime2Retain", "0" }, { "DataPDUInOrder", "Yes" },
		{ "DataSequenceInOrder", "Yes" } };
	size_t klen = 0;

	klen = pt_kv_add(keys, klen, cap, "InitiatorName", iname);
	if (o->discovery) {
		klen = pt_kv_add(keys, klen, cap, "SessionType", "Discovery");
		klen = pt_kv_add(keys, klen, cap, "HeaderDigest", "None");
		klen = pt_kv_add(keys, klen, cap, "DataDigest", "None");
		klen = pt_kv_add(keys, klen, cap, "MaxRecvDataSegmentLength",
				 mrdsl);
		return klen;
	}
	klen = pt_kv_add(keys, klen, cap, "TargetName", pt_target_iqn);
	klen = pt_kv_add(keys, klen, cap, "SessionType", "Normal");
	klen = pt_kv_add(keys, klen, cap, "HeaderDigest",
			 o->digests ? "CRC32C" : "None");
	klen = pt_kv_add(keys, klen, cap, "DataDigest",
			 o->digests ? "CRC32C" : "None");
	klen = pt_kv_add(keys, klen, cap, "MaxRecvDataSegmentLength", mrdsl);
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		const char *v = pt_kv_find((const uint8_t *)o->keys,
					   o->keys_len, ours[i][0]);

		klen = pt_kv_add(keys, klen, cap, ours[i][0], v ? v : ours[i][1]);
	}
	return klen;
}

/*
 * One operational-stage request with T=1 NSG=3 (repeated without keys if
 * the target wants another round). With o->split the first text goes out
 * in two PDUs: the first with C=1, which the target must acknowledge with
 * an empty response before the second one.
 */
int pt_login(struct pt_sess *s, const struct pt_login_opts *o)
{
	static const struct pt_login_opts defaults;
	char keys[1024];
	size_t klen, off = 0;
	struct pdu_login_req lq = { 0 };
	struct pdu_login_rsp lr;
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_rx r;
	int round;

	if (!o)
		o = &defaults;
	memset(s, 0, sizeof(*s));
	s->login_status = -1;
	s->answer_pings = true;
	s->watch_itt = ISCSI_RSVD_TAG;
	s->fd = pt_tcp_connect();
	if (s->fd < 0)
		return -1;
	s->itt = 0x1000;
	s->cmdsn = 1;
	s->peer_mrdsl = 8192;	/* RFC 7143 default when not declared */

	klen = login_keys(keys, sizeof(keys), o);

	lq.csg = ISCSI_STAGE_OPERATIONAL;
	lq.nsg = ISCSI_STAGE_FULL_FEATURE;
	lq.version_max = ISCSI_VERSION;
	lq.version_min = ISCSI_VERSION;
	if (o->isid) {
		memcpy(lq.isid, o->isid, 6);
	} else {
		lq.isid[0] = 0x80;	/* random-qualifier format */
		lq.isid[1] = 0x7c;
		lq.isid[2] = 0x71;
		lq.isid[3] = 0xbd;
		lq.isid[4] = (uint8_t)getpid();
		lq.isid[5] = ++isid_seq;
	}
	memcpy(s->isid, lq.isid, 6);
	lq.tsih = o->tsih;
	lq.cid = o->cid;
	lq.itt = s->itt++;
	lq.cmdsn = s->cmdsn;

	for (round = 0; round < 8; round++) {
		size_t n = klen - off;

		/* Half of the first text now, with C=1; the rest next. */
		lq.cont = o->split && round == 0 && klen > 1;
		if (lq.cont)
			n = klen / 2;
		lq.transit = !lq.cont;
		lq.data_len = (uint32_t)n;
		lq.expstatsn = s->exp_statsn;
		pdu_encode_login_req(bhs, &lq);
		pdu_set_data_len(bhs, (uint32_t)n);
		if (pt_send_pdu(s->fd, bhs, keys + off, (uint32_t)n) < 0) {
			pt_note("login send: %s", strerror(errno));
			goto fail;
		}
		if (pt_recv_raw(s->fd, &r, pt_now_ms() + 5000) <= 0) {
			pt_note("no login response");
			goto fail;
		}
		if (pdu_opcode(r.bhs) != ISCSI_OP_LOGIN_RSP) {
			pt_note("login answered with opcode 0x%02x",
				pdu_opcode(r.bhs));
			pt_rx_free(&r);
			goto fail;
		}
		pdu_decode_login_rsp(r.bhs, &lr);
		if (lr.status_class != 0) {
			pt_note("login refused: class %u detail %u",
				lr.status_class, lr.status_detail);
			s->login_status = lr.status_class << 8 |
					  lr.status_detail;
			pt_rx_free(&r);
			goto fail;
		}
		s->exp_statsn = lr.statsn + 1;
		s->exp_cmdsn = lr.expcmdsn;
		s->max_cmdsn = lr.maxcmdsn;
		if (lq.cont) {
			/* RFC 7143 11.13.5: an empty response, no transit. */
			s->split_acked = !lr.transit && !lr.cont && r.len == 0;
			if (!s->split_acked)
				show_login_rsp(&lr, &r);
			pt_rx_free(&r);
			off += n;
			continue;
		}
		if (r.data) {
			const char *v = pt_kv_find(r.data, r.len,
						   "MaxRecvDataSegmentLength");

			s->login_rsp_len = pt_min(r.len, sizeof(s->login_rsp));
			memcpy(s->login_rsp, r.data, s->login_rsp_len);
			if (v)
				s->peer_mrdsl = (uint32_t)strtoul(v, NULL, 10);
			/* Digests start after the last login response. */
			v = pt_kv_find(r.data, r.len, "HeaderDigest");
			if (v)
				s->hdgst = !strcmp(v, "CRC32C");
			v = pt_kv_find(r.data, r.len, "DataDigest");
			if (v)
				s->ddgst = !strcmp(v, "CRC32C");
		}
		/* Next round answers what the target offered on its own. */
		klen = answer_offers(keys, sizeof(keys), keys, klen, &r);
		off = 0;
		if (!lr.transit || lr.nsg != ISCSI_STAGE_FULL_FEATURE ||
		    lr.cont)
			show_login_rsp(&lr, &r);
		pt_rx_free(&r);
		if (lr.transit && lr.nsg == ISCSI_STAGE_FULL_FEATURE &&
		    !lr.cont) {
			s->tsih = lr.tsih;
			s->cmdsn = s->exp_cmdsn;
			s->login_status = 0;
			return 0;
		}
	}
	pt_note("login did not reach the full feature phase");
fail:
	pt_close(s);
	return -1;
}

int pt_send_nop_ping(struct pt_sess *s, uint32_t itt, const void *data,
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
	/* The data digest only means something for a truthful length. */
	if (len != declared_len)
		return pt_send_pdu(s->fd, bhs, data, len);
	return pt_sess_send(s, bhs, data, len, 0, 0);
}

int pt_send_cdb(struct pt_sess *s, uint32_t itt, uint32_t cmdsn,
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
	return pt_sess_send(s, bhs, NULL, 0, 0, 0);
}

/* Sense key from the SCSI Response data segment (2-byte length first). */
int pt_sense_key(const struct pt_rx *r)
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
int pt_tur(struct pt_sess *s)
{
	static const uint8_t cdb[6] = { SOP_TEST_UNIT_READY };
	int attempt;

	for (attempt = 0; attempt < 4; attempt++) {
		uint32_t itt = s->itt++;
		struct pt_rx r;
		int status;

		/* Whether a rejected PDU used up its CmdSN is the target's
		 * call; follow the ExpCmdSN it reports. */
		if (sn_gt(s->exp_cmdsn, s->cmdsn))
			s->cmdsn = s->exp_cmdsn;
		if (pt_send_cdb(s, itt, s->cmdsn++, cdb, sizeof(cdb)) < 0)
			return -1;
		for (;;) {
			if (pt_recv(s, &r, 5000) <= 0)
				return -1;
			if (pdu_opcode(r.bhs) == ISCSI_OP_SCSI_RSP &&
			    pdu_itt(r.bhs) == itt)
				break;
			pt_note("(unexpected opcode 0x%02x while waiting for TUR)",
				pdu_opcode(r.bhs));
			pt_rx_free(&r);
		}
		status = r.bhs[BHS_B3];
		if (status == SAM_STAT_CHECK_CONDITION &&
		    pt_sense_key(&r) == 0x06) {
			pt_rx_free(&r);
			continue;	/* UNIT ATTENTION: ask again */
		}
		pt_rx_free(&r);
		return status;
	}
	return SAM_STAT_CHECK_CONDITION;
}

void pt_logout(struct pt_sess *s)
{
	struct pdu_logout_req lo = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_rx r;

	lo.immediate = true;
	lo.reason = ISCSI_LOGOUT_CLOSE_SESSION;
	lo.itt = s->itt++;
	lo.cmdsn = s->cmdsn;
	lo.expstatsn = s->exp_statsn;
	pdu_encode_logout_req(bhs, &lo);
	pdu_set_data_len(bhs, 0);
	if (pt_sess_send(s, bhs, NULL, 0, 0, 0) == 0) {
		while (pt_recv(s, &r, 5000) > 0) {
			bool done = pdu_opcode(r.bhs) == ISCSI_OP_LOGOUT_RSP;

			if (done)
				PT_CHECK(r.bhs[BHS_B2] == ISCSI_LOGOUT_RSP_SUCCESS,
					 "logout response %u", r.bhs[BHS_B2]);
			pt_rx_free(&r);
			if (done)
				break;
		}
	}
	pt_close(s);
}
