/*
 * pttext: a Text Request and its whole, continued answer (see pttext.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tests/integration/pttext.h"

static int send_text(struct pt_sess *s, uint32_t itt, uint32_t ttt,
		     const char *text, uint32_t len)
{
	struct pdu_text_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	q.final = true;
	q.itt = itt;
	q.ttt = ttt;
	q.cmdsn = s->cmdsn++;
	q.expstatsn = s->exp_statsn;
	q.data_len = len;
	pdu_encode_text_req(bhs, &q);
	pdu_set_data_len(bhs, len);
	return pt_send_pdu(s->fd, bhs, text, len);
}

/* Appends a segment; -1 when out of memory. */
static int append(struct pt_text *t, size_t *cap, const uint8_t *data,
		  uint32_t n)
{
	if (t->len + n + 1 > *cap) {
		size_t ncap = (t->len + n + 1) * 2;
		uint8_t *p = realloc(t->data, ncap);

		if (!p)
			return -1;
		t->data = p;
		*cap = ncap;
	}
	if (n)
		memcpy(t->data + t->len, data, n);
	t->len += n;
	t->data[t->len] = 0;
	return 0;
}

int pt_text(struct pt_sess *s, const char *req, uint32_t max_len,
	    struct pt_text *t)
{
	uint32_t itt = s->itt++;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (send_text(s, itt, ISCSI_RSVD_TAG, req, (uint32_t)strlen(req) + 1) < 0) {
		PT_CHECK(0, "send the Text Request");
		return -1;
	}
	while (t->nrsp < 4096) {
		struct pdu_text_rsp tr;
		struct pt_rx r;
		int rc = pt_recv(s, &r, 5000);

		if (rc <= 0) {
			PT_CHECK(0, "%s after %u Text Response(s)",
				 rc ? "connection closed" : "no Text Response in 5 s",
				 t->nrsp);
			return -1;
		}
		if (pdu_opcode(r.bhs) != ISCSI_OP_TEXT_RSP) {
			PT_CHECK(0, "opcode 0x%02x (reason 0x%02x) instead of a Text Response",
				 pdu_opcode(r.bhs), r.bhs[BHS_B2]);
			pt_rx_free(&r);
			return -1;
		}
		pdu_decode_text_rsp(r.bhs, &tr);
		t->nrsp++;
		if (r.len > max_len)
			t->too_long++;
		if (tr.itt != itt)
			t->bad_itt++;
		if (append(t, &cap, r.data, r.len) < 0) {
			pt_rx_free(&r);
			PT_CHECK(0, "out of memory");
			return -1;
		}
		pt_rx_free(&r);
		if (tr.final) {
			if (tr.cont || tr.ttt != ISCSI_RSVD_TAG)
				t->bad_mid++;
			return 0;
		}
		/* Not final: the target continues on an empty request that
		 * echoes its TTT. */
		if (tr.cont)
			t->ncont++;
		else
			t->bad_mid++;
		if (tr.ttt == ISCSI_RSVD_TAG) {
			PT_CHECK(0, "a non-final Text Response without a TTT");
			return -1;
		}
		if (send_text(s, itt, tr.ttt, NULL, 0) < 0) {
			PT_CHECK(0, "send a continuation request");
			return -1;
		}
	}
	PT_CHECK(0, "more than 4096 Text Responses");
	return -1;
}
