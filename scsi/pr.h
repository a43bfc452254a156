/*
 * Reservations (SPC-4 5.13): PERSISTENT RESERVE IN / OUT with every
 * service action and reservation type, and the older RESERVE / RELEASE
 * (6/10) next to them with Compatible Reservation Handling (CRH=1).
 *
 * State lives in lun->pr and is guarded by lun->lock. lun->resv_active is
 * set (atomically) while any reservation exists, so the data path checks
 * for a RESERVATION CONFLICT only then. Registrations belong to initiator
 * ports ("iname,i,0xISID"), so they survive session reinstatement; an
 * SPC-2 reservation belongs to the I_T nexus (the session) and ends with
 * it. With APTPL the state is written to STATE_DIR/TARGET-lunN.pr (atomic
 * rename) and read back at start-up.
 */
#ifndef TCQ_PR_H
#define TCQ_PR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/task.h"

#define PR_REGS_MAX 128		/* registrations per LUN */
#define PR_PORT_MAX 256		/* "iname,i,0x" + 12 hex digits + NUL */
#define PR_DEFAULT_STATE_DIR "/var/lib/tcq"

/* PERSISTENT RESERVE OUT service actions and reservation types. */
enum {
	PRO_REGISTER = 0, PRO_RESERVE, PRO_RELEASE, PRO_CLEAR, PRO_PREEMPT,
	PRO_PREEMPT_ABORT, PRO_REGISTER_IGNORE, PRO_REGISTER_MOVE,
};
enum { PRI_READ_KEYS = 0, PRI_READ_RESERVATION, PRI_REPORT_CAPS,
       PRI_READ_FULL_STATUS };
enum {
	PR_TYPE_WE = 1, PR_TYPE_EA = 3, PR_TYPE_WE_RO = 5, PR_TYPE_EA_RO = 6,
	PR_TYPE_WE_AR = 7, PR_TYPE_EA_AR = 8,
};

int pr_lun_init(struct lun *l);
void pr_lun_free(struct lun *l);

/* Executors (scsi/exec.h); with a store, the task completes once the
 * store's worker has run it. */
struct exec_rc pr_in(struct tcq_task *t);
struct exec_rc pr_out(struct tcq_task *t);
struct exec_rc pr_reserve(struct tcq_task *t);	/* RESERVE(6/10) */
struct exec_rc pr_release(struct tcq_task *t);	/* RELEASE(6/10) */

static inline bool pr_active(const struct lun *l)
{
	return __atomic_load_n(&l->resv_active, __ATOMIC_ACQUIRE) != 0;
}

/* Whether t (decoded, about to run) conflicts with a reservation held
 * through another I_T nexus (SPC-4 5.13.1, SBC-3 4.17). Call only when
 * lun->resv_active is set. */
bool pr_conflict(struct tcq_task *t);

/* The I_T nexus has gone: its RESERVE(6/10) reservation ends. */
void pr_nexus_lost(struct lun *l, const void *nexus);
/* A reset (lun->lock held): the RESERVE(6/10) reservation ends; PR state
 * stays (SPC-4 5.13.12). */
void pr_reset_locked(struct lun *l);

/*
 * APTPL: the file of l in dir, and loading it at start-up (a missing
 * file is no error). dir NULL: PR_DEFAULT_STATE_DIR. Returns 0
 * or -1 with a message in err.
 */
int pr_state_path(const struct lun *l, const char *dir, char *out,
		  size_t outlen);
int pr_load(struct lun *l, const char *dir, char *err, size_t errlen);

/*
 * Reservations shared by gateways through a LUN store (scsi/pr_store.c):
 * attach loads the state from s (blocking; at start-up) and from then on
 * l's PR commands run on the store's worker. 0 or -1 with err set.
 */
struct lun_store;
int pr_store_attach(struct lun *l, struct lun_store *s, char *err,
		    size_t errlen);
/* After a LOGICAL UNIT RESET of l here (lun_reset): releases the
 * RESERVE(6/10) reservation in the store and tells the other gateways,
 * whose nexuses get the reset UA and lose their tasks; done(arg) runs on
 * the calling reactor afterwards. false: l has no store, done will not
 * run. */
bool pr_store_reset(struct lun *l, void (*done)(void *arg), void *arg);
/* Whether a registration's port name reg ("iname,i,0xISID", or "iname"
 * for every ISID) denotes initiator port port. */
bool pr_port_match(const char *reg, const char *port);
#endif
