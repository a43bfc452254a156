/*
 * Reservations of a LUN kept in a LUN store (backend/lun_store.h), shared by
 * every gateway of the logical unit.
 *
 * The store's blob is the authoritative state; lun->pr is this process'
 * copy, which the data path checks (pr_conflict) as before. Commands that
 * change reservations run on the store's worker thread: load, apply the
 * rules to a copy, compare-and-set write (again on a version conflict),
 * install the result here, then broadcast it with the unit attentions and
 * aborts it owes, and wait for the other gateways to acknowledge before
 * the command is answered: a command that reaches another gateway after
 * the initiator saw GOOD is checked against the new state. PR IN loads
 * first too, so it reports the store's state even if a message was lost.
 * The bytes of the blob and of the messages are in pr_codec.c.
 *
 * RESERVE(6/10) belongs to (initiator port, relative target port) on the
 * gateway that holds the nexus (r2_gw); that gateway releases it in the
 * store when the nexus goes, and a restarted gateway releases what its
 * port held in its previous life. A gateway that dies for good leaves it
 * in place until a LUN or target reset through another gateway (or the
 * old port coming back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "tcq/reactor.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "backend/lun_store.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "scsi/sense.h"
#include "scsi/tmf.h"
#include "scsi/taskset.h"

#define PR_CAS_TRIES 64		/* version conflicts before giving up */
#define PR_NOTIFY_MS 5000	/* wait for the other gateways' acks */
/* RESERVE meeting another gateway's RESERVE(6/10): how long it waits for
 * a release already on its way (that gateway's nexus just went). */
#define PR_R2_WAIT_MS 500
#define PR_R2_POLL_MS 25

/* ---- this gateway ------------------------------------------------------ */

static uint64_t gw_id;
static pthread_once_t gw_once = PTHREAD_ONCE_INIT;

static void gw_init(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v) || !v) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec ^
		    ((uint64_t)getpid() << 40);
	}
	gw_id = v | 1;	/* never 0: 0 means "no gateway" */
}

uint64_t pr_gateway_id(void)
{
	pthread_once(&gw_once, gw_init);
	return gw_id;
}

/* ---- the local copy ---------------------------------------------------- */

/* The session of this process holding ns' RESERVE(6/10), if the local
 * copy knows it; lun->lock held. */
static const void *local_r2_nexus(struct lun *l, const struct pr_state *ns)
{
	const struct pr_state *ps = l->pr;

	if (ns->r2 && ps->r2 && ps->r2_nexus && ns->r2_gw == pr_gateway_id() &&
	    ps->r2_gw == ns->r2_gw && ps->r2_rtpi == ns->r2_rtpi &&
	    strcmp(ps->r2_port, ns->r2_port) == 0)
		return ps->r2_nexus;
	return NULL;
}

void pr_install_locked(struct lun *l, const struct pr_state *ns)
{
	const void *keep = local_r2_nexus(l, ns);

	*l->pr = *ns;
	l->pr->r2_nexus = keep;
	pr_update_flag(l);
}

/* Installs ns unless the local copy is newer already. */
static void install_newer(struct lun *l, const struct pr_state *ns)
{
	pthread_mutex_lock(&l->lock);
	if (ns->version > l->pr->version)
		pr_install_locked(l, ns);
	pthread_mutex_unlock(&l->lock);
}

/* ---- working on the store (worker thread) ------------------------------ */

struct scratch {
	struct pr_state cur, next;
	struct pr_fxlist fx;
	uint8_t a[LUN_STORE_BLOB_MAX], b[LUN_STORE_BLOB_MAX];
};

/* Loads the store's state into sc->cur (with the local r2 holder) and
 * refreshes the local copy. 0 or -errno. */
static int load(struct lun *l, struct scratch *sc)
{
	struct lun_store *s = l->store;
	size_t len = 0;
	uint64_t ver = 0;
	int rc = s->ops->load(s, sc->a, sizeof(sc->a), &len, &ver);

	if (rc < 0) {
		log_err("%s: reservations: load: %s", s->name, strerror(-rc));
		return rc;
	}
	if (len && pr_decode(&sc->cur, sc->a, len) < 0) {
		log_err("%s: reservations: the stored state is malformed",
			s->name);
		return -EINVAL;
	}
	if (!len)
		memset(&sc->cur, 0, sizeof(sc->cur));
	sc->cur.version = ver;
	install_newer(l, &sc->cur);
	pthread_mutex_lock(&l->lock);
	sc->cur.r2_nexus = local_r2_nexus(l, &sc->cur);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* Tells every gateway (kind, sc->next, fx); failures are logged: the
 * state is stored, and a gateway that missed it reloads on its next PR
 * command. */
static void broadcast(struct lun *l, struct scratch *sc, uint8_t kind,
		      const struct pr_fxlist *fx)
{
	struct lun_store *s = l->store;
	size_t n = pr_msg_encode(s->id, kind, &sc->next, fx, sc->b,
			      sizeof(sc->b));
	int rc;

	if (!n) {
		log_err("%s: reservations: message too large", s->name);
		return;
	}
	rc = s->ops->notify(s, sc->b, n, PR_NOTIFY_MS);
	if (rc < 0)
		log_warn("%s: reservations: not every gateway acknowledged "
			 "(%s)", s->name, strerror(-rc));
}

/*
 * Stores sc->next over sc->cur when they differ; 1 stored, 0 nothing to
 * store, LUN_STORE_CONFLICT, or -errno. On 1, sc->next.version is the new
 * version and the local copy has it.
 */
static int store(struct lun *l, struct scratch *sc)
{
	struct lun_store *s = l->store;
	size_t on = pr_encode(&sc->cur, sc->a, sizeof(sc->a));
	size_t nn = pr_encode(&sc->next, sc->b, sizeof(sc->b));
	int rc;

	if (!on || !nn)
		return -EOVERFLOW;
	if (on == nn && memcmp(sc->a, sc->b, on) == 0)
		return 0;
	rc = s->ops->cas(s, sc->cur.version, sc->b, nn);
	if (rc < 0)
		return rc;
	sc->next.version = sc->cur.version + 1;
	pthread_mutex_lock(&l->lock);
	pr_install_locked(l, &sc->next);
	/* next's holder is the local one (a RESERVE just made, or the one
	 * load() found). */
	l->pr->r2_nexus = sc->next.r2 ? sc->next.r2_nexus : NULL;
	pthread_mutex_unlock(&l->lock);
	return 1;
}

struct pr_job {
	struct lun_store_job j;
	struct lun *l;
	struct tcq_task *t;
	struct reactor *r;	/* where t (or done) completes */
	void (*done)(void *arg);
	void *done_arg;
	char port[PR_PORT_MAX];
};

/* The worker's answer is in t already (exec_set). */
static void complete_on_reactor(void *arg)
{
	exec_finish(arg);
}

static void pr_in_on_reactor(void *arg)
{
	struct tcq_task *t = arg;
	struct exec_rc rc = pr_in_local(t);

	if (exec_failed(rc))
		exec_fail(t, rc);
}

static void back_to_reactor(struct pr_job *pj, void (*fn)(void *), void *arg)
{
	if (!pj->r)	/* no reactor (unit tests): right here */
		fn(arg);
	else if (reactor_post(pj->r, fn, arg) < 0)
		log_err("reservations: cannot post a completion");
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void run_task(struct pr_job *pj, struct scratch *sc)
{
	struct tcq_task *t = pj->t;
	struct lun *l = pj->l;
	uint8_t op = t->req.opcode;
	struct prout po;
	struct exec_rc ans = EXEC_OK;
	unsigned waited = 0;
	bool changed;

	if (op == SOP_PERSISTENT_RESERVE_IN) {
		if (load(l, sc) < 0) {
			exec_set(t, exec_target_failure());
			back_to_reactor(pj, complete_on_reactor, t);
		} else {
			back_to_reactor(pj, pr_in_on_reactor, t);
		}
		return;
	}
	if (op == SOP_PERSISTENT_RESERVE_OUT) {
		ans = pr_out_parse(t, &po);
		if (exec_failed(ans))
			goto out;	/* checked on the reactor already */
	}
	for (unsigned tries = 0;; tries++) {
		int rc;

		if (tries == PR_CAS_TRIES) {
			log_err("%s: reservations: %u version conflicts in a "
				"row", l->store->name, tries);
			ans = exec_target_failure();
			break;
		}
		if (load(l, sc) < 0) {
			ans = exec_target_failure();
			break;
		}
		sc->next = sc->cur;
		sc->fx.n = 0;
		ans = EXEC_OK;
		if (op == SOP_PERSISTENT_RESERVE_OUT)
			ans = pr_out_apply(t, l, &sc->next, &po, &sc->fx);
		else if (op == SOP_RESERVE_6 || op == SOP_RESERVE_10)
			ans = pr_reserve_apply(t, l, &sc->next, &changed);
		else
			pr_release_apply(t, &sc->next);
		if (exec_failed(ans)) {
			/* Another gateway's nexus held RESERVE(6/10) and may
			 * just have gone: give its release a moment. */
			if (ans.status == SAM_STAT_RESERVATION_CONFLICT &&
			    !sc->cur.resv && sc->cur.r2 &&
			    sc->cur.r2_gw != pr_gateway_id() &&
			    waited < PR_R2_WAIT_MS) {
				sleep_ms(PR_R2_POLL_MS);
				waited += PR_R2_POLL_MS;
				tries--;
				continue;
			}
			break;
		}
		rc = store(l, sc);
		if (rc == LUN_STORE_CONFLICT)
			continue;
		if (rc < 0) {
			log_err("%s: reservations: store: %s", l->store->name,
				strerror(-rc));
			ans = exec_target_failure();
			break;
		}
		if (rc == 0 && !sc->fx.n)
			break;
		if (rc == 0)
			sc->next = sc->cur;
		pthread_mutex_lock(&l->lock);
		pr_fx_apply_locked(l, &sc->fx, t->nexus);
		pthread_mutex_unlock(&l->lock);
		pr_fx_abort(l, &sc->fx, t->nexus);
		broadcast(l, sc, PR_MSG_STATE, &sc->fx);
		break;
	}
out:
	if (exec_failed(ans))
		exec_set(t, ans);	/* completed on the reactor */
	back_to_reactor(pj, complete_on_reactor, t);
}

/* Clears the RESERVE(6/10) reservation in the store when keep() says so;
 * returns 0 or -errno. */
static int clear_r2(struct lun *l, struct scratch *sc,
		    bool (*match)(const struct pr_state *ps, const void *arg),
		    const void *arg, bool always_tell)
{
	for (unsigned tries = 0; tries < PR_CAS_TRIES; tries++) {
		int rc = load(l, sc);

		if (rc < 0)
			return rc;
		sc->next = sc->cur;
		if (sc->cur.r2 && match(&sc->cur, arg))
			pr_r2_clear(&sc->next);
		rc = store(l, sc);
		if (rc == LUN_STORE_CONFLICT)
			continue;
		if (rc < 0)
			return rc;
		if (rc == 1 || always_tell)
			broadcast(l, sc, always_tell ? PR_MSG_RESET : PR_MSG_STATE,
				  NULL);
		return 0;
	}
	return -EBUSY;
}

static bool r2_of_port(const struct pr_state *ps, const void *arg)
{
	return ps->r2_gw == pr_gateway_id() &&
	       strcasecmp(ps->r2_port, arg) == 0;
}

static bool r2_any(const struct pr_state *ps, const void *arg)
{
	return true;
}

static bool r2_stale(const struct pr_state *ps, const void *arg)
{
	const struct lun *l = arg;

	return ps->r2_rtpi == l->rel_port_id && ps->r2_gw != pr_gateway_id();
}

static void job_run(struct lun_store_job *j)
{
	struct pr_job *pj = (struct pr_job *)j;
	struct scratch *sc = malloc(sizeof(*sc));
	int rc = 0;

	if (!sc) {
		log_err("reservations: out of memory");
		if (pj->t) {
			exec_set(pj->t, exec_target_failure());
			back_to_reactor(pj, complete_on_reactor, pj->t);
		} else if (pj->done) {
			back_to_reactor(pj, pj->done, pj->done_arg);
		}
		free(pj);
		return;
	}
	if (pj->t) {
		run_task(pj, sc);
	} else if (pj->port[0]) {	/* the local holder's nexus went */
		rc = clear_r2(pj->l, sc, r2_of_port, pj->port, false);
	} else if (pj->done) {		/* LUN reset */
		rc = clear_r2(pj->l, sc, r2_any, NULL, true);
		back_to_reactor(pj, pj->done, pj->done_arg);
	} else {			/* reload after a lost watch */
		rc = load(pj->l, sc);
	}
	if (rc < 0)
		log_err("%s: reservations: %s", pj->l->store->name,
			strerror(-rc));
	free(sc);
	free(pj);
}

static struct pr_job *job_new(struct lun *l)
{
	struct pr_job *pj = calloc(1, sizeof(*pj));

	if (pj) {
		pj->l = l;
		pj->j.fn = job_run;
		pj->r = reactor_self();
	}
	return pj;
}

struct exec_rc pr_store_submit(struct tcq_task *t)
{
	struct pr_job *pj = job_new(t->lun);

	if (!pj)
		return exec_target_failure();
	pj->t = t;
	if (t->order.set && t->order.set->r)
		pj->r = t->order.set->r;
	lun_store_queue(t->lun->store, &pj->j);
	return EXEC_OK;
}

void pr_store_nexus_lost(struct lun *l, const char *port)
{
	struct pr_job *pj = job_new(l);

	if (!pj) {
		log_err("reservations: out of memory: RESERVE(6/10) of %s "
			"stays", port);
		return;
	}
	snprintf(pj->port, sizeof(pj->port), "%s", port);
	lun_store_queue(l->store, &pj->j);
}

bool pr_store_reset(struct lun *l, void (*done)(void *arg), void *arg)
{
	struct pr_job *pj;

	if (!l->store || !(pj = job_new(l)))
		return false;
	pj->done = done;
	pj->done_arg = arg;
	if (!pj->r) {
		free(pj);
		return false;
	}
	lun_store_queue(l->store, &pj->j);
	return true;
}

/* ---- messages from the other gateways (store threads) ------------------ */

static void on_msg(void *arg, const void *buf, size_t len)
{
	struct lun *l = arg;
	struct pr_msg *m = malloc(sizeof(*m));

	if (!m)
		return;
	if (pr_msg_decode(m, buf, len) < 0) {
		log_warn("%s: reservations: malformed message ignored",
			 l->store->name);
	} else if (m->sender != l->store->id) {
		pthread_mutex_lock(&l->lock);
		if (m->ps.version > l->pr->version)
			pr_install_locked(l, &m->ps);
		if (m->kind == PR_MSG_STATE)
			pr_fx_apply_locked(l, &m->fx, NULL);
		pthread_mutex_unlock(&l->lock);
		if (m->kind == PR_MSG_STATE)
			pr_fx_abort(l, &m->fx, NULL);
		if (m->kind == PR_MSG_RESET) {
			/* Another gateway reset the logical unit: every
			 * nexus here gets the reset UA, tasks go. */
			tmf_reset_lun_here(l);
		}
	}
	free(m);
}

static void on_reload(void *arg)
{
	struct lun *l = arg;
	struct pr_job *pj = job_new(l);

	if (pj)
		lun_store_queue(l->store, &pj->j);
}

int pr_store_attach(struct lun *l, struct lun_store *s, char *err,
		    size_t errlen)
{
	struct scratch *sc = malloc(sizeof(*sc));
	int rc;

	if (!sc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->arg = l;
	s->on_reload = on_reload;
	s->on_idle = on_reload;	/* re-read now and then: see lun_store.h */
	l->store = s;
	/* A RESERVE(6/10) this port held before a restart: its nexus is
	 * gone. Loading it also fills the local copy. */
	rc = clear_r2(l, sc, r2_stale, l, false);
	free(sc);
	if (rc < 0) {
		l->store = NULL;
		snprintf(err, errlen, "%s: reservations: %s", s->name,
			 strerror(-rc));
		return -1;
	}
	__atomic_store_n(&s->on_msg, on_msg, __ATOMIC_RELEASE);
	if (lun_store_start(s) < 0) {
		l->store = NULL;
		snprintf(err, errlen, "%s: cannot start its thread", s->name);
		return -1;
	}
	pthread_mutex_lock(&l->lock);
	log_info("%s: shared reservations: %u registration%s, %s (version "
		 "%llu)", s->name, l->pr->nregs, l->pr->nregs == 1 ? "" : "s",
		 l->pr->resv ? "reserved" : "not reserved",
		 (unsigned long long)l->pr->version);
	pthread_mutex_unlock(&l->lock);
	return 0;
}
