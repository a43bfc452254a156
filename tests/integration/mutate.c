/*
 * mutate: sends thousands of mutated PDUs to a live tcqd from valid
 * sessions, then checks that a clean session still writes and reads back
 * its data. Each PDU starts as a valid one (SCSI Command with and without
 * data, Data-Out answering an R2T or unsolicited, NOP-Out, Text, Task
 * Management, Logout) and is then usually damaged: random bit flips,
 * fields set to boundary values, lengths that disagree with the bytes
 * that follow, Data-Out offsets past the transfer length. Sessions that
 * the target drops are re-established; the run is bounded in PDUs and
 * seconds and reproducible from its seed. Uses the raw initiator of
 * tests/integration/pdutest.c.
 *
 *   mutate HOST PORT TARGET-IQN [PDUS [SECONDS [SEED]]]
 *
 * Exit status: 0 when the target survived and the clean session verified
 * its data, 1 otherwise, 2 on usage errors.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tcq/compiler.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"

#define NSESS 3
#define MAX_DATA 16384
#define LBA_SPAN 2048		/* mutated writes stay below this LBA */
#define CLEAN_LBA 4096		/* the final check uses its own blocks */

struct msess {
	struct pt_sess s;
	bool up;
	unsigned sent;		/* PDUs on this session */
	/* Last R2T seen: Data-Out templates answer it. */
	bool have_r2t;
	uint32_t r2t_itt, r2t_ttt, r2t_off, r2t_len;
	uint32_t last_write_itt, last_write_edtl;
};

static uint64_t rng;
static unsigned reconnects, closed_by_target, rejects, responses;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the seed. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/* Values that sit on the edges of length and offset arithmetic. */
static uint32_t boundary(uint32_t near)
{
	static const uint32_t v[] = { 0, 1, 3, 4, 47, 48, 511, 512, 513,
		8192, 65535, 65536, 65537, 262144, 262145, 0x00ffffff,
		0x7fffffff, 0x80000000, 0xfffffe00, 0xfffffffe, 0xffffffff };
	uint32_t k = rnd_below(sizeof(v) / sizeof(v[0]) + 4);

	if (k < sizeof(v) / sizeof(v[0]))
		return v[k];
	return near + rnd_below(9) - 4;	/* next to a real value */
}

/* Reads what the target sent without blocking, noting R2Ts; returns -1
 * when the connection is gone. */
static int drain(struct msess *m, int wait_ms)
{
	for (;;) {
		struct pollfd pfd = { .fd = m->s.fd, .events = POLLIN };
		struct pt_rx r;
		int rc = poll(&pfd, 1, wait_ms);

		if (rc <= 0)
			return 0;
		wait_ms = 0;
		/* A PDU has started: its remainder follows at once. */
		rc = pt_recv(&m->s, &r, 2000);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return -1;	/* half a PDU: framing is lost */
		switch (pdu_opcode(r.bhs)) {
		case ISCSI_OP_R2T: {
			struct pdu_r2t p;

			pdu_decode_r2t(r.bhs, &p);
			m->have_r2t = true;
			m->r2t_itt = p.itt;
			m->r2t_ttt = p.ttt;
			m->r2t_off = p.offset;
			m->r2t_len = p.length;
			break;
		}
		case ISCSI_OP_REJECT:
			rejects++;
			break;
		case ISCSI_OP_SCSI_RSP:
			responses++;
			break;
		case ISCSI_OP_LOGOUT_RSP:
			pt_rx_free(&r);
			return -1;	/* the target closes after this */
		}
		pt_rx_free(&r);
	}
}

static void sess_down(struct msess *m)
{
	if (m->up)
		pt_close(&m->s);
	m->up = false;
	m->have_r2t = false;
}

static int sess_up(struct msess *m)
{
	if (m->up)
		return 0;
	if (pt_login(&m->s, NULL) < 0)
		return -1;
	m->up = true;
	m->sent = 0;
	m->have_r2t = false;
	reconnects++;
	return 0;
}

static void put_cdb10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, n);
}

/* A valid PDU of a random kind; returns its data segment length. */
static uint32_t make_pdu(struct msess *m, uint8_t *bhs, uint8_t *data)
{
	struct pt_sess *s = &m->s;
	uint32_t len = 0, kind = rnd_below(100);

	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;	/* follow what the target awaits */
	if (kind < 45) {
		/* SCSI Command: WRITE with immediate data, READ, or a
		 * control command. */
		struct pdu_scsi_cmd c = { .final = true,
					  .attr = (uint8_t)(1 + rnd_below(3)) };
		uint32_t blocks = 1 + rnd_below(64);
		uint32_t lba = rnd_below(LBA_SPAN - 64);

		c.itt = s->itt++;
		c.cmdsn = s->cmdsn++;
		c.expstatsn = s->exp_statsn;
		if (kind < 20) {
			c.write = true;
			c.edtl = blocks * 512;
			put_cdb10(c.cdb, SOP_WRITE_10, lba, (uint16_t)blocks);
			len = MIN(c.edtl, MIN(MAX_DATA, 8192u));
			for (uint32_t i = 0; i < len; i++)
				data[i] = (uint8_t)(i ^ c.itt);
			m->last_write_itt = c.itt;
			m->last_write_edtl = c.edtl;
		} else if (kind < 35) {
			c.read = true;
			c.edtl = blocks * 512;
			put_cdb10(c.cdb, SOP_READ_10, lba, (uint16_t)blocks);
		} else {
			static const uint8_t cdbs[][16] = {
				{ SOP_INQUIRY, 0, 0, 0, 0xff, 0 },
				{ SOP_INQUIRY, 1, 0x83, 0, 0xff, 0 },
				{ SOP_TEST_UNIT_READY },
				{ SOP_READ_CAPACITY_10 },
				{ SOP_MODE_SENSE_6, 0, 0x3f, 0, 0xff, 0 },
				{ SOP_REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 1, 0 },
				{ SOP_SYNC_CACHE_10 },
			};
			memcpy(c.cdb, cdbs[rnd_below(sizeof(cdbs) / 16)], 16);
			c.read = c.cdb[0] != SOP_TEST_UNIT_READY &&
				 c.cdb[0] != SOP_SYNC_CACHE_10;
			c.edtl = c.read ? 256 : 0;
		}
		pdu_encode_scsi_cmd(bhs, &c);
	} else if (kind < 70) {
		/* Data-Out: answers the last R2T, or claims to be
		 * unsolicited data of the last write. */
		struct pdu_data_out d = { .final = true };

		d.itt = m->have_r2t ? m->r2t_itt : m->last_write_itt;
		d.ttt = m->have_r2t ? m->r2t_ttt : ISCSI_RSVD_TAG;
		d.offset = m->have_r2t ? m->r2t_off : 0;
		len = m->have_r2t ? MIN(m->r2t_len, (uint32_t)MAX_DATA) : 512;
		d.expstatsn = s->exp_statsn;
		memset(data, 0x5a, len);
		if (m->have_r2t && len == m->r2t_len)
			m->have_r2t = false;	/* answered in full */
		else if (m->have_r2t) {
			m->r2t_off += len;
			m->r2t_len -= len;
		}
		pdu_encode_data_out(bhs, &d);
	} else if (kind < 82) {
		struct pdu_nop_out n = { .itt = s->itt++,
					 .ttt = ISCSI_RSVD_TAG };

		n.cmdsn = s->cmdsn++;
		n.expstatsn = s->exp_statsn;
		len = rnd_below(64);
		memset(data, 'n', len);
		pdu_encode_nop_out(bhs, &n);
	} else if (kind < 90) {
		struct pdu_text_req t = { .final = true, .ttt = ISCSI_RSVD_TAG };
		static const char txt[] = "SendTargets=All";

		t.itt = s->itt++;
		t.cmdsn = s->cmdsn++;
		t.expstatsn = s->exp_statsn;
		len = sizeof(txt);
		memcpy(data, txt, len);
		pdu_encode_text_req(bhs, &t);
	} else if (kind < 98) {
		static const uint8_t fns[] = { ISCSI_TMF_ABORT_TASK,
			ISCSI_TMF_ABORT_TASK_SET, ISCSI_TMF_CLEAR_TASK_SET,
			ISCSI_TMF_LUN_RESET, ISCSI_TMF_QUERY_TASK,
			ISCSI_TMF_TARGET_WARM_RESET, ISCSI_TMF_CLEAR_ACA };
		struct pdu_tmf_req t = { .immediate = true };

		t.function = fns[rnd_below(sizeof(fns))];
		t.itt = s->itt++;
		t.rtt = t.function == ISCSI_TMF_ABORT_TASK ||
			t.function == ISCSI_TMF_QUERY_TASK ?
			m->last_write_itt : ISCSI_RSVD_TAG;
		t.cmdsn = s->cmdsn;
		t.refcmdsn = s->cmdsn - 1;
		t.expstatsn = s->exp_statsn;
		pdu_encode_tmf_req(bhs, &t);
	} else {
		struct pdu_logout_req l = { .immediate = true };

		l.reason = (uint8_t)rnd_below(3);
		l.itt = s->itt++;
		l.cmdsn = s->cmdsn;
		l.expstatsn = s->exp_statsn;
		pdu_encode_logout_req(bhs, &l);
	}
	pdu_set_data_len(bhs, len);
	return len;
}

/*
 * Damages the PDU; returns the number of data bytes to actually send
 * (which may differ from what the BHS declares).
 */
static uint32_t mutate(uint8_t *bhs, uint8_t *data, uint32_t len,
		       const struct msess *m)
{
	uint32_t send_len = len;
	unsigned n = 1 + rnd_below(3);

	while (n--) {
		switch (rnd_below(10)) {
		case 0: case 1: {		/* bit flips in the BHS */
			unsigned flips = 1 + rnd_below(4);

			while (flips--)
				bhs[rnd_below(ISCSI_BHS_LEN)] ^=
					(uint8_t)(1u << rnd_below(8));
			break;
		}
		case 2: {			/* a 32-bit field on the edge */
			unsigned off = 4 * (2 + rnd_below(10));

			put_be32(bhs + off, boundary(get_be32(bhs + off)));
			break;
		}
		case 3:				/* flags byte */
			bhs[BHS_FLAGS] = (uint8_t)rnd();
			break;
		case 4: {			/* declared data length */
			uint32_t dl = rnd_below(3) ? len + rnd_below(9) - 4 :
					boundary(len) & 0xffffff;

			if (dl > 0xffffff)
				dl = 0;
			pdu_set_data_len(bhs, dl);
			/* Usually send what is declared (up to what we
			 * have), sometimes keep the old byte count. */
			if (rnd_below(4))
				send_len = MIN(dl, (uint32_t)MAX_DATA);
			break;
		}
		case 5:				/* AHS length */
			bhs[BHS_TOTAL_AHS_LEN] = (uint8_t)rnd_below(4) ?
				(uint8_t)rnd_below(3) : (uint8_t)rnd();
			break;
		case 6:				/* Data-Out offset games */
			if (pdu_opcode(bhs) == ISCSI_OP_DATA_OUT) {
				uint32_t edtl = m->last_write_edtl;
				uint32_t choice = rnd_below(4);

				put_be32(bhs + BHS_F40,
					 choice == 0 ? edtl + 512 * rnd_below(4) :
					 choice == 1 ? 0xffffffffu - rnd_below(1024) :
					 choice == 2 ? edtl - 1 :
					 boundary(get_be32(bhs + BHS_F40)));
			} else {
				put_be32(bhs + BHS_EDTL, boundary(get_be32(bhs + BHS_EDTL)));
			}
			break;
		case 7:				/* opcode change */
			bhs[0] = (uint8_t)((bhs[0] & 0x40) | rnd_below(0x40));
			break;
		case 8:				/* READ and WRITE together */
			bhs[BHS_FLAGS] |= ISCSI_CMD_READ | ISCSI_CMD_WRITE;
			break;
		default:			/* data bytes */
			if (send_len)
				for (unsigned i = 0; i < 8; i++)
					data[rnd_below(send_len)] = (uint8_t)rnd();
			break;
		}
	}
	return send_len;
}

/* The clean session: WRITE a pattern, READ it back, compare. */
static int clean_check(void)
{
	static uint8_t wbuf[8192], rbuf[8192];
	struct pt_sess s;
	struct pdu_scsi_cmd c = { .final = true, .attr = ISCSI_ATTR_SIMPLE };
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t got = 0, itt;
	struct pt_rx r;
	int status = -1;

	if (pt_login(&s, NULL) < 0) {
		pt_note("FAIL: clean session cannot log in");
		return -1;
	}
	if (pt_tur(&s) != SAM_STAT_GOOD)
		pt_note("(TEST UNIT READY not GOOD; going on)");
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 7 + 3);
	if (sn_gt(s.exp_cmdsn, s.cmdsn))
		s.cmdsn = s.exp_cmdsn;
	c.write = true;
	c.itt = itt = s.itt++;
	c.cmdsn = s.cmdsn++;
	c.expstatsn = s.exp_statsn;
	c.edtl = sizeof(wbuf);
	put_cdb10(c.cdb, SOP_WRITE_10, CLEAN_LBA, sizeof(wbuf) / 512);
	pdu_encode_scsi_cmd(bhs, &c);
	pdu_set_data_len(bhs, sizeof(wbuf));
	/* 8 KiB of immediate data: within FirstBurstLength and the
	 * target's MaxRecvDataSegmentLength. */
	if (pt_send_pdu(s.fd, bhs, wbuf, sizeof(wbuf)) < 0)
		goto out;
	while (pt_recv(&s, &r, 5000) > 0) {
		bool done = pdu_opcode(r.bhs) == ISCSI_OP_SCSI_RSP &&
			    pdu_itt(r.bhs) == itt;

		if (done)
			status = r.bhs[BHS_B3];
		pt_rx_free(&r);
		if (done)
			break;
	}
	PT_CHECK(status == SAM_STAT_GOOD, "clean WRITE status %d", status);
	if (status != SAM_STAT_GOOD)
		goto out;

	memset(&c, 0, sizeof(c));
	c.final = true;
	c.read = true;
	c.attr = ISCSI_ATTR_SIMPLE;
	c.itt = itt = s.itt++;
	c.cmdsn = s.cmdsn++;
	c.expstatsn = s.exp_statsn;
	c.edtl = sizeof(rbuf);
	put_cdb10(c.cdb, SOP_READ_10, CLEAN_LBA, sizeof(rbuf) / 512);
	pdu_encode_scsi_cmd(bhs, &c);
	pdu_set_data_len(bhs, 0);
	status = -1;
	if (pt_send_pdu(s.fd, bhs, NULL, 0) < 0)
		goto out;
	while (pt_recv(&s, &r, 5000) > 0) {
		uint8_t op = pdu_opcode(r.bhs);
		bool done = false;

		if (op == ISCSI_OP_DATA_IN && pdu_itt(r.bhs) == itt) {
			uint32_t off = get_be32(r.bhs + BHS_F40);

			if ((uint64_t)off + r.len <= sizeof(rbuf)) {
				memcpy(rbuf + off, r.data, r.len);
				got += r.len;
			}
			if (r.bhs[BHS_FLAGS] & ISCSI_FLAG_STATUS) {
				status = r.bhs[BHS_B3];
				done = true;
			}
		} else if (op == ISCSI_OP_SCSI_RSP && pdu_itt(r.bhs) == itt) {
			status = r.bhs[BHS_B3];
			done = true;
		}
		pt_rx_free(&r);
		if (done)
			break;
	}
	PT_CHECK(status == SAM_STAT_GOOD && got == sizeof(rbuf),
		 "clean READ status %d, %u bytes", status, got);
	PT_CHECK(memcmp(wbuf, rbuf, sizeof(rbuf)) == 0,
		 "data read back equals data written");
	pt_logout(&s);
	return status == SAM_STAT_GOOD ? 0 : -1;
out:
	pt_close(&s);
	return -1;
}

int main(int argc, char **argv)
{
	static uint8_t data[MAX_DATA];
	struct msess ms[NSESS];
	unsigned long pdus = 5000, seconds = 20, sent = 0;
	int64_t end;

	pt_prog = "mutate";
	pt_initiator = "iqn.2026-11.org.tcq:mutate";
	if (argc < 4 || argc > 7) {
		fprintf(stderr, "usage: mutate HOST PORT TARGET-IQN "
				"[PDUS [SECONDS [SEED]]]\n");
		return 2;
	}
	pt_host = argv[1];
	pt_port = argv[2];
	pt_target_iqn = argv[3];
	if (argc > 4)
		pdus = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		seconds = strtoul(argv[5], NULL, 0);
	rng = argc > 6 ? strtoull(argv[6], NULL, 0) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	pt_note("seed %llu, %lu PDUs or %lu s", (unsigned long long)rng,
		pdus, seconds);
	memset(ms, 0, sizeof(ms));
	end = pt_now_ms() + (int64_t)seconds * 1000;

	while (sent < pdus && pt_now_ms() < end) {
		struct msess *m = &ms[rnd_below(NSESS)];
		uint8_t bhs[ISCSI_BHS_LEN];
		uint32_t len, send_len;

		if (sess_up(m) < 0) {
			pt_note("FAIL: cannot log in after %lu PDUs", sent);
			pt_failures++;
			break;
		}
		len = make_pdu(m, bhs, data);
		send_len = len;
		if (rnd_below(100) < 85)
			send_len = mutate(bhs, data, len, m);
		if (pt_send_pdu(m->s.fd, bhs, data, send_len) < 0) {
			closed_by_target++;
			sess_down(m);
			continue;
		}
		sent++;
		/* Fresh sessions now and then, and whenever the framing of
		 * this one is beyond repair. */
		if (drain(m, rnd_below(8) ? 0 : 2) < 0 || ++m->sent > 400) {
			if (m->sent <= 400)
				closed_by_target++;
			sess_down(m);
		}
	}
	for (int i = 0; i < NSESS; i++)
		sess_down(&ms[i]);
	pt_note("%lu mutated PDUs sent; %u logins, %u connections dropped, "
		"%u rejects, %u SCSI responses seen", sent, reconnects,
		closed_by_target, rejects, responses);
	PT_CHECK(sent >= 100, "sent at least 100 PDUs (%lu)", sent);
	if (clean_check() < 0)
		pt_failures++;
	return pt_failures ? 1 : 0;
}
