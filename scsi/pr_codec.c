/*
 * The bytes gateways share (scsi/pr_store.c): the reservation state as it
 * is kept in the LUN store's blob, and the messages a gateway sends the
 * others through the store's notify. Both outlive a process: a blob
 * written by one version of tcqd is read by the next, and gateways of
 * two versions talk during an upgrade, so neither format may change.
 *
 * Integers are unsigned, big endian; nothing is padded or aligned. A
 * port name (PORT below) is a 2-byte length L, 1 to 255, then L bytes of
 * the name without a NUL ("iname,i,0xISID" or "iname").
 *
 * The state ("blob"):
 *   4  magic "TCQR"
 *   4  PRgeneration
 *   1  flags: 0x01 a persistent reservation exists, 0x02 APTPL,
 *      0x04 a RESERVE(6/10) reservation exists (other bits: ignored)
 *   1  reservation type (1, 3, 5, 6, 7 or 8) with 0x01, else 0
 *   2  N, the number of registrations, 0 to 128
 *   N registrations, in order, each:
 *      8  reservation key
 *      1  flags: 0x01 ALL_TG_PT, 0x02 holds the reservation (other
 *         bits: ignored)
 *      PORT  the initiator port
 *   with flags 0x04, who holds the RESERVE(6/10) reservation:
 *      2  relative target port identifier
 *      8  gateway id (pr_gateway_id of the holding process)
 *      PORT  the initiator port
 * and nothing after it.
 *
 * A message:
 *   4  magic "TCQM"
 *   1  kind: 1 the state changed, 2 a logical unit reset
 *   8  sender: the id of the sending store handle
 *   8  the version the store holds the state as
 *   4  S, the length of the state
 *   S  the state, as above
 *   2  M, unit attentions owed, 0 to PR_FX_MAX (258)
 *   M of them, each:
 *      2  ASC and ASCQ
 *      1  abort: not 0 when the port's tasks on the LUN are aborted
 *      PORT  the initiator port whose nexuses are owed it
 * and nothing after it.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "scsi/pr_priv.h"

#define BLOB_MAGIC "TCQR"
#define MSG_MAGIC "TCQM"
enum { F_RESV = 1, F_APTPL = 2, F_R2 = 4 };
enum { RF_ALL_TG_PT = 1, RF_HOLDER = 2 };

/* ---- a cursor that fails for good once the bytes run out -------------- */

struct span {
	size_t len, off;
	bool bad;		/* a take did not fit (writing: too small a
				 * buffer; reading: malformed) */
};

/* Where the next n bytes start, in *at; false when they do not fit. */
static bool span_take(struct span *s, size_t n, size_t *at)
{
	if (s->bad || s->len - s->off < n) {
		s->bad = true;
		return false;
	}
	*at = s->off;
	s->off += n;
	return true;
}

/* ---- writing ---------------------------------------------------------- */

struct wbuf {
	uint8_t *p;
	struct span s;
};

static uint8_t *wb_take(struct wbuf *w, size_t n)
{
	size_t at;

	return span_take(&w->s, n, &at) ? w->p + at : NULL;
}

static void wb_u8(struct wbuf *w, uint8_t v)
{
	uint8_t *p = wb_take(w, 1);

	if (p)
		*p = v;
}

static void wb_u16(struct wbuf *w, uint16_t v)
{
	uint8_t *p = wb_take(w, 2);

	if (p)
		put_be16(p, v);
}

static void wb_u32(struct wbuf *w, uint32_t v)
{
	uint8_t *p = wb_take(w, 4);

	if (p)
		put_be32(p, v);
}

static void wb_u64(struct wbuf *w, uint64_t v)
{
	uint8_t *p = wb_take(w, 8);

	if (p)
		put_be64(p, v);
}

static void wb_bytes(struct wbuf *w, const void *b, size_t n)
{
	uint8_t *p = wb_take(w, n);

	if (p && n)
		memcpy(p, b, n);
}

static void wb_port(struct wbuf *w, const char *s)
{
	size_t n = strnlen(s, PR_PORT_MAX - 1);

	wb_u16(w, (uint16_t)n);
	wb_bytes(w, s, n);
}

/* ---- reading ---------------------------------------------------------- */

struct rbuf {
	const uint8_t *p;
	struct span s;
};

static const uint8_t *rb_take(struct rbuf *r, size_t n)
{
	size_t at;

	return span_take(&r->s, n, &at) ? r->p + at : NULL;
}

static uint8_t rb_u8(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 1);

	return p ? *p : 0;
}

static uint16_t rb_u16(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 2);

	return p ? get_be16(p) : 0;
}

static uint32_t rb_u32(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 4);

	return p ? get_be32(p) : 0;
}

static uint64_t rb_u64(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 8);

	return p ? get_be64(p) : 0;
}

static bool rb_magic(struct rbuf *r, const char *magic)
{
	const uint8_t *m = rb_take(r, 4);

	if (!m || memcmp(m, magic, 4)) {
		r->s.bad = true;
		return false;
	}
	return true;
}

/* A port name: 1..PR_PORT_MAX-1 bytes, no NUL inside. */
static void rb_port(struct rbuf *r, char *out)
{
	uint16_t n = rb_u16(r);
	const uint8_t *p;

	out[0] = 0;
	if (n >= PR_PORT_MAX || !n) {
		r->s.bad = true;
		return;
	}
	p = rb_take(r, n);
	if (!p)
		return;
	if (memchr(p, 0, n)) {
		r->s.bad = true;
		return;
	}
	memcpy(out, p, n);
	out[n] = 0;
}

/* ---- the state -------------------------------------------------------- */

static void encode_to(const struct pr_state *ps, struct wbuf *w)
{
	wb_bytes(w, BLOB_MAGIC, 4);
	wb_u32(w, ps->generation);
	wb_u8(w, (uint8_t)((ps->resv ? F_RESV : 0) | (ps->aptpl ? F_APTPL : 0) |
			   (ps->r2 ? F_R2 : 0)));
	wb_u8(w, ps->resv ? ps->type : 0);
	wb_u16(w, (uint16_t)ps->nregs);
	for (unsigned i = 0; i < ps->nregs; i++) {
		const struct pr_reg *r = &ps->regs[i];

		wb_u64(w, r->key);
		wb_u8(w, (uint8_t)((r->all_tg_pt ? RF_ALL_TG_PT : 0) |
				   (r->holder ? RF_HOLDER : 0)));
		wb_port(w, r->port);
	}
	if (ps->r2) {
		wb_u16(w, ps->r2_rtpi);
		wb_u64(w, ps->r2_gw);
		wb_port(w, ps->r2_port);
	}
}

size_t pr_encode(const struct pr_state *ps, uint8_t *buf, size_t cap)
{
	struct wbuf w = { buf, { cap, 0, false } };

	encode_to(ps, &w);
	return w.s.bad ? 0 : w.s.off;
}

static void decode_from(struct pr_state *ps, struct rbuf *r)
{
	uint8_t f;

	memset(ps, 0, sizeof(*ps));
	if (!rb_magic(r, BLOB_MAGIC))
		return;
	ps->generation = rb_u32(r);
	f = rb_u8(r);
	ps->type = rb_u8(r);
	ps->nregs = rb_u16(r);
	ps->resv = f & F_RESV;
	ps->aptpl = f & F_APTPL;
	ps->r2 = f & F_R2;
	if (ps->nregs > PR_REGS_MAX || (ps->resv && !pr_type_valid(ps->type)) ||
	    (!ps->resv && ps->type)) {
		r->s.bad = true;
		return;
	}
	for (unsigned i = 0; i < ps->nregs && !r->s.bad; i++) {
		struct pr_reg *g = &ps->regs[i];

		g->key = rb_u64(r);
		f = rb_u8(r);
		g->all_tg_pt = f & RF_ALL_TG_PT;
		g->holder = f & RF_HOLDER;
		rb_port(r, g->port);
	}
	if (ps->r2) {
		ps->r2_rtpi = rb_u16(r);
		ps->r2_gw = rb_u64(r);
		rb_port(r, ps->r2_port);
	}
}

int pr_decode(struct pr_state *ps, const uint8_t *buf, size_t len)
{
	struct rbuf r = { buf, { len, 0, false } };

	decode_from(ps, &r);
	if (r.s.bad || r.s.off != len) {
		memset(ps, 0, sizeof(*ps));
		return -1;
	}
	return 0;
}

/* ---- messages --------------------------------------------------------- */

size_t pr_msg_encode(uint64_t sender, uint8_t kind, const struct pr_state *ps,
		     const struct pr_fxlist *fx, uint8_t *buf, size_t cap)
{
	struct wbuf w = { buf, { cap, 0, false } };
	size_t at;

	wb_bytes(&w, MSG_MAGIC, 4);
	wb_u8(&w, kind);
	wb_u64(&w, sender);
	wb_u64(&w, ps->version);
	at = w.s.off;
	wb_u32(&w, 0);		/* the state's length, filled below */
	encode_to(ps, &w);
	if (!w.s.bad)
		put_be32(buf + at, (uint32_t)(w.s.off - at - 4));
	wb_u16(&w, (uint16_t)(fx ? fx->n : 0));
	for (unsigned i = 0; fx && i < fx->n; i++) {
		wb_u16(&w, fx->fx[i].asc);
		wb_u8(&w, fx->fx[i].abort);
		wb_port(&w, fx->fx[i].port);
	}
	return w.s.bad ? 0 : w.s.off;
}

int pr_msg_decode(struct pr_msg *m, const uint8_t *buf, size_t len)
{
	struct rbuf r = { buf, { len, 0, false } };
	uint64_t version;
	uint32_t slen;

	if (!rb_magic(&r, MSG_MAGIC))
		return -1;
	m->kind = rb_u8(&r);
	m->sender = rb_u64(&r);
	version = rb_u64(&r);
	slen = rb_u32(&r);
	if (r.s.bad || slen > len - r.s.off ||
	    pr_decode(&m->ps, buf + r.s.off, slen) < 0)
		return -1;
	m->ps.version = version;
	r.s.off += slen;
	m->fx.n = rb_u16(&r);
	if (m->fx.n > PR_FX_MAX)
		return -1;
	for (unsigned i = 0; i < m->fx.n && !r.s.bad; i++) {
		m->fx.fx[i].asc = rb_u16(&r);
		m->fx.fx[i].abort = rb_u8(&r) != 0;
		rb_port(&r, m->fx.fx[i].port);
	}
	return r.s.bad || r.s.off != len ? -1 : 0;
}
