/*
 * Reservation internals shared by scsi/pr.c (the rules) and
 * scsi/pr_store.c (the state kept in a LUN store, shared by gateways).
 */
#ifndef TCQ_PR_PRIV_H
#define TCQ_PR_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/pr.h"

struct pr_reg {
	uint64_t key;
	char port[PR_PORT_MAX];	/* "iname,i,0xISID", or "iname": any ISID */
	bool all_tg_pt;
	bool holder;		/* holds a non all-registrants reservation */
};

struct pr_state {
	uint32_t generation;
	unsigned nregs;
	struct pr_reg regs[PR_REGS_MAX];
	bool resv;		/* a persistent reservation exists */
	uint8_t type;		/* PR_TYPE_* while resv */
	bool aptpl;		/* persist through power loss */
	/* RESERVE(6/10): held by (r2_port, r2_rtpi) on gateway r2_gw;
	 * r2_nexus is the holding session when it is in this process. */
	bool r2;
	const void *r2_nexus;
	char r2_port[PR_PORT_MAX];
	uint16_t r2_rtpi;
	uint64_t r2_gw;
	uint64_t version;	/* of the store's copy this state came from */
};

/*
 * What a change owes to I_T nexuses: a unit attention to every nexus of
 * an initiator port (but the one that caused it), and with abort its
 * tasks on the LUN aborted. Collected while the rules run, then applied
 * here and, with a store, sent to the other gateways.
 */
struct pr_fx {
	char port[PR_PORT_MAX];
	uint16_t asc;
	bool abort;
};

#define PR_FX_MAX (2 * PR_REGS_MAX + 2)

struct pr_fxlist {
	unsigned n;
	struct pr_fx fx[PR_FX_MAX];
};

/* PROUT basic parameter list (SPC-4 6.16.3). */
struct prout {
	uint64_t rk, sark;
	uint8_t flags;		/* byte 20 */
	uint8_t sa, scope, type;
	const uint8_t *p;	/* the whole parameter list */
	uint32_t len;
};

/* This gateway's id (random per process): who holds a RESERVE(6/10). */
uint64_t pr_gateway_id(void);

/* Checks the CDB and parameter list of a PR OUT into po; false when t is
 * answered (status set) already. */
bool pr_out_parse(struct tcq_task *t, struct prout *po);
/* Runs po's service action on ps for t (status and sense set in t on
 * failure); the owed effects go to fx. Returns true when ps changed. */
bool pr_out_apply(struct tcq_task *t, struct lun *l, struct pr_state *ps,
		  const struct prout *po, struct pr_fxlist *fx);
/* RESERVE / RELEASE (6/10) on ps; true when ps changed. */
bool pr_reserve_apply(struct tcq_task *t, struct lun *l, struct pr_state *ps);
bool pr_release_apply(struct tcq_task *t, struct pr_state *ps);
/* PERSISTENT RESERVE IN from the local copy; completes t. */
void pr_in_local(struct tcq_task *t);

/* Applies fx to this process' nexuses (except: the causing nexus, or
 * NULL); lun->lock held. */
void pr_fx_apply_locked(struct lun *l, const struct pr_fxlist *fx,
			const void *except);
/* Installs ns as l's state (lun->lock held), keeping the local holder of
 * a RESERVE(6/10) reservation that still holds. */
void pr_install_locked(struct lun *l, const struct pr_state *ns);
/* The data path's flag from the state; lun->lock held. */
void pr_update_flag(struct lun *l);

/* Serialization of the shared part (scsi/pr_store.c). encode: bytes
 * written, 0 when cap is too small. decode: 0, -1 when malformed. */
size_t pr_encode(const struct pr_state *ps, uint8_t *buf, size_t cap);
int pr_decode(struct pr_state *ps, const uint8_t *buf, size_t len);

/* scsi/pr_store.c: the executors' paths for a LUN with a store. */
void pr_store_submit(struct tcq_task *t);
/* The holder of the RESERVE(6/10) reservation, port, left this gateway:
 * release it in the store. */
void pr_store_nexus_lost(struct lun *l, const char *port);
#endif
