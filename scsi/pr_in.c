/*
 * PERSISTENT RESERVE IN (SPC-4 6.15): the parameter data of READ KEYS,
 * READ RESERVATION, REPORT CAPABILITIES and READ FULL STATUS, built from
 * the local copy of the state (with a store, refreshed from it first).
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"

/* 6.15.2: PRGENERATION, ADDITIONAL LENGTH, the keys. */
static uint32_t read_keys(const struct pr_state *ps, uint8_t *buf)
{
	uint32_t n = 8;

	put_be32(buf, ps->generation);
	for (unsigned i = 0; i < ps->nregs; i++, n += 8)
		put_be64(buf + n, ps->regs[i].key);
	put_be32(buf + 4, n - 8);
	return n;
}

/* 6.15.3: PRGENERATION, ADDITIONAL LENGTH (0 or 16), and with a
 * reservation its descriptor: key, SCOPE and TYPE in byte 21. */
static uint32_t read_reservation(const struct pr_state *ps, uint8_t *buf)
{
	memset(buf, 0, 24);
	put_be32(buf, ps->generation);
	if (!ps->resv)
		return 8;
	put_be32(buf + 4, 16);
	/* All-registrants: the key shown is zero (SPC-4 6.15.3.3). */
	if (!pr_type_all_reg(ps->type))
		for (unsigned i = 0; i < ps->nregs; i++)
			if (ps->regs[i].holder)
				put_be64(buf + 8, ps->regs[i].key);
	buf[21] = ps->type;	/* SCOPE 0: logical unit */
	return 24;
}

/* 6.15.4: what the device server supports. */
static uint32_t report_capabilities(const struct pr_state *ps, uint8_t *buf)
{
	memset(buf, 0, 8);
	put_be16(buf, 8);
	buf[2] = 0x10 | 0x08 | 0x04 | 0x01;	/* CRH SIP_C ATP_C PTPL_C */
	buf[3] = 0x80 | (ps->aptpl ? 0x01 : 0);	/* TMV, PTPL_A */
	buf[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02; /* WE_AR EA_RO WE_RO EA WE */
	buf[5] = 0x01;				/* EA_AR */
	return 8;
}

/* 6.15.5: PRGENERATION, ADDITIONAL LENGTH, then per registration a
 * 24-byte descriptor and its TransportID. */
static uint32_t read_full_status(const struct pr_state *ps, uint16_t rtpi,
				 uint8_t *buf)
{
	uint32_t n = 8;

	put_be32(buf, ps->generation);
	for (unsigned i = 0; i < ps->nregs; i++) {
		const struct pr_reg *r = &ps->regs[i];
		uint8_t *d = buf + n;
		uint32_t tl;

		memset(d, 0, 24);
		put_be64(d, r->key);
		if (r->all_tg_pt)
			d[12] |= 0x02;
		if (pr_is_holder(ps, r)) {
			d[12] |= 0x01;
			d[13] = ps->type;
		}
		put_be16(d + 18, r->all_tg_pt ? 0 : rtpi);
		tl = pr_transport_id_put(d + 24, r->port);
		put_be32(d + 20, tl);
		n += 24 + tl;
	}
	put_be32(buf + 4, n - 8);
	return n;
}

uint32_t pr_in_data(const struct pr_state *ps, uint8_t sa, uint16_t rtpi,
		    uint8_t *buf)
{
	switch (sa) {
	case PRI_READ_KEYS: return read_keys(ps, buf);
	case PRI_READ_RESERVATION: return read_reservation(ps, buf);
	case PRI_REPORT_CAPS: return report_capabilities(ps, buf);
	case PRI_READ_FULL_STATUS: return read_full_status(ps, rtpi, buf);
	}
	return 0;
}

struct exec_rc pr_in(struct tcq_task *t)
{
	if (t->lun->store)	/* refreshed from the store first */
		return pr_store_submit(t);
	return pr_in_local(t);
}

struct exec_rc pr_in_local(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint8_t *buf = malloc(PR_IN_DATA_MAX);
	struct exec_rc rc;
	uint32_t n;

	if (!buf)
		return exec_target_failure();
	pthread_mutex_lock(&l->lock);
	n = pr_in_data(l->pr, t->req.sa, l->rel_port_id, buf);
	pthread_mutex_unlock(&l->lock);
	rc = spc_data_in(t, buf, n);
	free(buf);
	return exec_failed(rc) ? rc : exec_good(t);
}
