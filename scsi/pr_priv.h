/*
 * Reservation internals shared by the files of scsi/pr*.c:
 *   pr.c              the state and its rules: registrations, holders,
 *                     conflicts, the unit attentions a change owes
 *   pr_spc2.c         RESERVE / RELEASE (6/10)
 *   pr_in.c           PERSISTENT RESERVE IN
 *   pr_out.c          PERSISTENT RESERVE OUT
 *   pr_transport_id.c iSCSI TransportIDs in PR IN and PR OUT data
 *   pr_aptpl.c        the APTPL state file
 *   pr_codec.c        the state and the messages shared by gateways
 *   pr_store.c        the state kept in a LUN store (load, CAS, notify)
 */
#ifndef TCQ_PR_PRIV_H
#define TCQ_PR_PRIV_H
#include <stdbool.h>
#include <stddef.h>
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

/* ---- pr.c: the state and its rules ----------------------------------- */

/* Copies a port name, cut to PR_PORT_MAX - 1 bytes (longer ones cannot
 * be iSCSI names). */
void pr_copy_port(char *dst, const char *src);

bool pr_type_valid(uint8_t type);
/* Write Exclusive / Exclusive Access - All Registrants. */
bool pr_type_all_reg(uint8_t type);

struct pr_reg *pr_find_reg(struct pr_state *ps, const char *port);
/* A new registration at the end; NULL when the LUN has no room. */
struct pr_reg *pr_add_reg(struct pr_state *ps, const char *port,
			  uint64_t key, bool all_tg_pt);
void pr_remove_reg(struct pr_state *ps, struct pr_reg *r);
bool pr_is_holder(const struct pr_state *ps, const struct pr_reg *r);
/* The persistent reservation ends; registrations stay. */
void pr_drop_reservation(struct pr_state *ps);
/* The RESERVE(6/10) reservation ends (release, reset, nexus loss). */
void pr_r2_clear(struct pr_state *ps);

/* Records in fx (may be NULL) what port's nexuses are owed. */
void pr_fx_add(struct pr_fxlist *fx, const char *port, uint16_t asc,
	       bool abort);
/* asc to every registrant (but the causing nexus, when applied). */
void pr_ua_regs(struct pr_fxlist *fx, const struct pr_state *ps,
		uint16_t asc);
/* Applies fx's unit attentions to this process' nexuses (except: the
 * causing nexus, or NULL); lun->lock held. Then, the lock released,
 * pr_fx_abort aborts the tasks fx says (PREEMPT AND ABORT). */
void pr_fx_apply_locked(struct lun *l, const struct pr_fxlist *fx,
			const void *except);
void pr_fx_abort(struct lun *l, const struct pr_fxlist *fx,
		 const void *except);

/* The data path's flag from the state; lun->lock held. */
void pr_update_flag(struct lun *l);

/* ---- pr_spc2.c: RESERVE / RELEASE (6/10) ------------------------------ */

/* RESERVE (6/10) of t on ps: EXEC_OK (*changed: ps changed), or its
 * failure (RESERVATION CONFLICT). RELEASE never fails: true when ps
 * changed. */
struct exec_rc pr_reserve_apply(const struct tcq_task *t, struct lun *l,
				struct pr_state *ps, bool *changed);
bool pr_release_apply(const struct tcq_task *t, struct pr_state *ps);

/* ---- pr_in.c: PERSISTENT RESERVE IN ---------------------------------- */

/* Largest PR IN data (READ FULL STATUS with every descriptor holding the
 * longest name). */
#define PR_IN_DATA_MAX (8 + PR_REGS_MAX * (24 + 4 + PR_PORT_MAX))

/* The parameter data of PR IN service action sa (SPC-4 6.15) for ps
 * through relative target port rtpi into buf (PR_IN_DATA_MAX bytes);
 * returns its length, 0 for an unknown service action. */
uint32_t pr_in_data(const struct pr_state *ps, uint8_t sa, uint16_t rtpi,
		    uint8_t *buf);
/* PERSISTENT RESERVE IN from the local copy: completes t GOOD, or
 * returns the failure (scsi/exec.h). */
struct exec_rc pr_in_local(struct tcq_task *t);

/* ---- pr_out.c: PERSISTENT RESERVE OUT -------------------------------- */

/* Checks the CDB and parameter list of a PR OUT into po: EXEC_OK, or
 * the failure. */
struct exec_rc pr_out_parse(const struct tcq_task *t, struct prout *po);
/* Runs po's service action on ps for t; the owed effects go to fx.
 * EXEC_OK, or the failure (ps then unchanged). */
struct exec_rc pr_out_apply(const struct tcq_task *t, struct lun *l,
			    struct pr_state *ps, const struct prout *po,
			    struct pr_fxlist *fx);

/* ---- pr_transport_id.c: iSCSI TransportIDs (SPC-4 7.6.4.6) ------------ */

/* Writes the TransportID of a registration's port name at p (room for
 * 4 + PR_PORT_MAX + 3 bytes); returns its length. */
uint32_t pr_transport_id_put(uint8_t *p, const char *port);
/* Parses one TransportID at p (avail bytes) into port; returns its
 * length, or 0 when it is malformed or not iSCSI. */
uint32_t pr_transport_id_parse(const uint8_t *p, uint32_t avail, char *port);

/* ---- pr_aptpl.c: the APTPL state file --------------------------------- */

/* Writes (ps->aptpl) or removes (no APTPL) l's state file; lun->lock
 * held. Nothing with a store: the store is the persistent copy. 0 or
 * -1 (logged). */
int pr_aptpl_save(struct lun *l, const struct pr_state *ps);

/* ---- pr_codec.c: what gateways share ---------------------------------- */

/* The shared part of ps (not r2_nexus, not version). encode: bytes
 * written, 0 when cap is too small. decode: 0, -1 when malformed. */
size_t pr_encode(const struct pr_state *ps, uint8_t *buf, size_t cap);
int pr_decode(struct pr_state *ps, const uint8_t *buf, size_t len);

/* A message to the other gateways of a LUN. */
enum { PR_MSG_STATE = 1, PR_MSG_RESET = 2 };

struct pr_msg {
	uint8_t kind;		/* PR_MSG_* */
	uint64_t sender;	/* the sending store handle's id */
	struct pr_state ps;	/* with the version it was stored as */
	struct pr_fxlist fx;	/* what its nexuses are owed */
};

/* encode: bytes written, 0 when cap is too small (fx may be NULL).
 * decode: 0, -1 when malformed. */
size_t pr_msg_encode(uint64_t sender, uint8_t kind, const struct pr_state *ps,
		     const struct pr_fxlist *fx, uint8_t *buf, size_t cap);
int pr_msg_decode(struct pr_msg *m, const uint8_t *buf, size_t len);

/* ---- pr_store.c: the state kept in a LUN store ------------------------ */

/* This gateway's id (random per process): who holds a RESERVE(6/10). */
uint64_t pr_gateway_id(void);
/* Installs ns as l's state (lun->lock held), keeping the local holder of
 * a RESERVE(6/10) reservation that still holds. */
void pr_install_locked(struct lun *l, const struct pr_state *ns);
/* The executors' path for a LUN with a store: t runs on its worker and
 * completes on its reactor (EXEC_OK), or the failure to queue it. */
struct exec_rc pr_store_submit(struct tcq_task *t);
/* The holder of the RESERVE(6/10) reservation, port, left this gateway:
 * release it in the store. */
void pr_store_nexus_lost(struct lun *l, const char *port);
#endif
