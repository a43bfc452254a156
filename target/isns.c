/*
 * The iSNS registration thread (isns.h): reactor 0 posts the newest view
 * of what to register; the thread alone talks to the server
 * (isns_client.c), so a server that is slow, down or gone never holds up
 * a reactor, a live change or a login.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tcq/log.h"
#include "target/config.h"
#include "target/isns.h"
#include "target/isns_client.h"
#include "target/portal.h"
#include "target/target.h"

/* With no registration period from the server, still ask this often
 * whether it has us (it may have lost its database). */
#define REFRESH_DEFAULT_S 600

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a new view, or stop */
	pthread_t thread;
	bool started, stop;
	struct isns_view *next;		/* not yet taken by the thread */
	struct isnsr_status st;
	char eid[TCQ_NAME_MAX + 16];
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What the thread keeps between attempts; its own. */
struct worker {
	struct isns_view *want;		/* what tcqd serves now */
	struct isns_view *have;		/* what the server has (NULL: nothing) */
	bool dirty;			/* want not yet sent */
	struct timespec due;		/* next refresh or retry */
	bool due_set;
	unsigned backoff;		/* s; 0 after a success */
	uint32_t period;
};

const char *isnsr_state_name(enum isnsr_state s)
{
	static const char *const names[] = { "off", "registering",
					     "registered", "retrying" };

	return (unsigned)s < 4 ? names[s] : "?";
}

void isnsr_status(struct isnsr_status *s)
{
	pthread_mutex_lock(&R.lock);
	*s = R.st;
	pthread_mutex_unlock(&R.lock);
}

/* ---- views --------------------------------------------------------------- */

static void view_free(struct isns_view *v)
{
	if (!v)
		return;
	free(v->portals);
	free(v->nodes);
	free(v);
}

static struct isns_view *view_dup(const struct isns_view *v)
{
	struct isns_view *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = *v;
	d->portals = calloc((size_t)v->nportals + 1, sizeof(*d->portals));
	d->nodes = calloc((size_t)v->nnodes + 1, sizeof(*d->nodes));
	if (!d->portals || !d->nodes) {
		view_free(d);
		return NULL;
	}
	memcpy(d->portals, v->portals, sizeof(*d->portals) * (size_t)v->nportals);
	memcpy(d->nodes, v->nodes, sizeof(*d->nodes) * (size_t)v->nnodes);
	return d;
}

/* tcqd now, on reactor 0 (where the lists change). */
static struct isns_view *view_of_tcqd(void)
{
	struct isns_view *v = calloc(1, sizeof(*v));
	char err[256];

	if (!v)
		return NULL;
	v->portals = calloc((size_t)tcqd->nportals + 1, sizeof(*v->portals));
	v->nodes = calloc((size_t)tcqd->ntargets + 1, sizeof(*v->nodes));
	if (!v->portals || !v->nodes) {
		view_free(v);
		return NULL;
	}
	if (cfg_parse_isns(tcqd->set.isns, v->host, sizeof(v->host), &v->port,
			   err, sizeof(err)) < 0)
		v->host[0] = '\0';	/* checked when set: cannot happen */
	snprintf(v->eid, sizeof(v->eid), "%s", R.eid);
	for (int i = 0; i < tcqd->nportals; i++) {
		v->portals[i].addr = tcqd->portals[i]->addr;
		v->portals[i].tpgt = tcqd->portals[i]->tpgt;
	}
	v->nportals = tcqd->nportals;
	for (int i = 0; i < tcqd->ntargets; i++) {
		snprintf(v->nodes[i].name, sizeof(v->nodes[i].name), "%s",
			 tcqd->targets[i]->dev.name);
		snprintf(v->nodes[i].alias, sizeof(v->nodes[i].alias), "%s",
			 tcqd->targets[i]->alias);
	}
	v->nnodes = tcqd->ntargets;
	return v;
}

static bool has_node(const struct isns_view *v, const char *name)
{
	for (int i = 0; v && i < v->nnodes; i++)
		if (!strcmp(v->nodes[i].name, name))
			return true;
	return false;
}

static bool same_server(const struct isns_view *a, const struct isns_view *b)
{
	return !strcmp(a->host, b->host) && a->port == b->port;
}

/* ---- the thread ------------------------------------------------------------ */

static void due_in(struct worker *w, unsigned s)
{
	clock_gettime(CLOCK_MONOTONIC, &w->due);
	w->due.tv_sec += s;
	w->due_set = true;
}

/* A state change is logged once; so is a change of what is registered. */
static void set_state(enum isnsr_state s, const struct isns_view *v,
		      const char *error)
{
	struct isnsr_status *st = &R.st;
	char server[TCQ_NAME_MAX];
	int targets, portals;
	bool changed;

	pthread_mutex_lock(&R.lock);
	changed = st->state != s ||
		  (s == ISNSR_REGISTERED && v &&
		   (st->targets != v->nnodes || st->portals != v->nportals));
	st->state = s;
	if (s == ISNSR_REGISTERED) {
		st->registrations++;
		st->error[0] = '\0';
		st->targets = v ? v->nnodes : 0;
		st->portals = v ? v->nportals : 0;
	} else if (s == ISNSR_RETRYING) {
		st->failures++;
		snprintf(st->error, sizeof(st->error), "%s", error);
	}
	memcpy(server, st->server, sizeof(server));
	targets = st->targets;
	portals = st->portals;
	pthread_mutex_unlock(&R.lock);
	if (!changed)
		return;
	if (s == ISNSR_REGISTERED)
		log_info("iSNS: %s has %d target%s and %d portal%s of "
			 "entity %s", server, targets, targets == 1 ? "" : "s",
			 portals, portals == 1 ? "" : "s", R.eid);
	else if (s == ISNSR_RETRYING)
		log_warn("iSNS: %s: %s; retrying in the background", server,
			 error);
}

/* A name the server knows as the entity's and that stays, else the
 * first of want (a node being registered). */
static const char *source_for(const struct worker *w)
{
	for (int i = 0; w->have && i < w->have->nnodes; i++)
		if (has_node(w->want, w->have->nodes[i].name))
			return w->have->nodes[i].name;
	return w->want->nnodes ? w->want->nodes[0].name :
	       w->have->nodes[0].name;
}

static void failed(struct worker *w, const char *err)
{
	w->backoff = w->backoff ? w->backoff * 2 : 1;
	if (w->backoff > ISNSR_BACKOFF_MAX_S)
		w->backoff = ISNSR_BACKOFF_MAX_S;
	set_state(ISNSR_RETRYING, NULL, err);
	due_in(w, w->backoff);
}

/* Leaves the server of w->have: one attempt (a server that does not
 * answer lets the entity expire). */
static void leave(struct worker *w)
{
	char err[256];

	if (!w->have)
		return;
	if (w->have->nnodes &&
	    isnsc_deregister(w->have, w->have->nodes[0].name, err,
			     sizeof(err)) < 0)
		log_warn("iSNS: deregistering from %s:%u: %s", w->have->host,
			 w->have->port, err);
	else if (w->have->nnodes)
		log_info("iSNS: deregistered entity %s from %s:%u",
			 w->have->eid, w->have->host, w->have->port);
	view_free(w->have);
	w->have = NULL;
}

/* Makes the server hold w->want: the whole entity, or nothing when tcqd
 * has no target. */
static void send_want(struct worker *w)
{
	char err[256] = "";
	uint32_t period = 0;
	struct isns_view *copy;
	int rc;

	if (w->want->nnodes == 0) {
		leave(w);
		rc = 0;
	} else {
		rc = isnsc_register(w->want, source_for(w), &period, err,
				    sizeof(err));
	}
	if (rc < 0) {
		failed(w, err);
		return;
	}
	w->dirty = false;
	w->backoff = 0;
	w->period = period;
	if (w->want->nnodes && (copy = view_dup(w->want))) {
		view_free(w->have);
		w->have = copy;
	}
	pthread_mutex_lock(&R.lock);
	R.st.period = period;
	pthread_mutex_unlock(&R.lock);
	set_state(ISNSR_REGISTERED, w->want, NULL);
	if (w->want->nnodes)
		due_in(w, period ? (period / 2 ? period / 2 : 1) :
			  REFRESH_DEFAULT_S);
	else
		w->due_set = false;
}

/* One step, with what was posted taken: deregister from a server no
 * longer ours, (re-)register what changed, refresh what is due. */
static void step(struct worker *w)
{
	char err[256] = "";
	int rc;

	if (w->have && !same_server(w->have, w->want))
		leave(w);
	if (!w->want->host[0]) {
		w->due_set = false;
		w->dirty = false;
		set_state(ISNSR_OFF, NULL, NULL);
		return;
	}
	if (w->dirty || !w->have) {
		send_want(w);
		return;
	}
	rc = isnsc_refresh(w->have, source_for(w), err, sizeof(err));
	if (rc < 0) {
		failed(w, err);
	} else if (rc > 0) {
		log_info("iSNS: %s:%u no longer has entity %s; registering "
			 "again", w->want->host, w->want->port, w->want->eid);
		send_want(w);
	} else {
		w->backoff = 0;
		set_state(ISNSR_REGISTERED, w->have, NULL);
		due_in(w, w->period ? (w->period / 2 ? w->period / 2 : 1) :
			  REFRESH_DEFAULT_S);
	}
}

/* Under R.lock: waits for a view, stop, or the due time. */
static void wait_for_work(struct worker *w)
{
	while (!R.stop && !R.next) {
		if (!w->due_set) {
			pthread_cond_wait(&R.cond, &R.lock);
			continue;
		}
		if (pthread_cond_timedwait(&R.cond, &R.lock, &w->due) ==
		    ETIMEDOUT)
			return;
	}
}

static void *run(void *arg)
{
	struct worker w = { 0 };

	isnsc_init();
	pthread_mutex_lock(&R.lock);
	for (;;) {
		wait_for_work(&w);
		if (R.stop)
			break;
		if (R.next) {
			view_free(w.want);
			w.want = R.next;
			R.next = NULL;
			w.dirty = true;
		}
		w.due_set = false;
		pthread_mutex_unlock(&R.lock);
		step(&w);
		pthread_mutex_lock(&R.lock);
	}
	pthread_mutex_unlock(&R.lock);
	leave(&w);
	view_free(w.want);
	return NULL;
}

/* ---- reactor 0 --------------------------------------------------------------- */

/* The Entity Identifier: this host and tcqd's first portal when the
 * thread starts, the same for the life of the process. */
static void make_eid(void)
{
	char host[128] = "localhost";
	const char *p = tcqd->nportals ? tcqd->portals[0]->addr_text : "";
	const char *port = strrchr(p, ':');

	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(R.eid, sizeof(R.eid), "tcqd:%s%s", host, port ? port : "");
}

static int start(void)
{
	pthread_condattr_t ca;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&R.cond, &ca);
	pthread_condattr_destroy(&ca);
	make_eid();
	rc = pthread_create(&R.thread, NULL, run, NULL);
	if (rc) {
		log_err("iSNS: cannot start its thread: %s", strerror(rc));
		pthread_cond_destroy(&R.cond);
		return -1;
	}
	R.started = true;
	return 0;
}

void isnsr_sync(void)
{
	struct isns_view *v;

	if (!tcqd || (!R.started && !tcqd->set.isns[0]))
		return;		/* never configured: no thread */
	if (!R.started && start() < 0)
		return;
	if (!(v = view_of_tcqd())) {
		log_err("iSNS: out of memory: the server is not told of the "
			"last change");
		return;
	}
	pthread_mutex_lock(&R.lock);
	view_free(R.next);
	R.next = v;
	/* another server: its first attempt is to come */
	if (strcmp(R.st.server, tcqd->set.isns) && tcqd->set.isns[0])
		R.st.state = ISNSR_REGISTERING;
	snprintf(R.st.server, sizeof(R.st.server), "%s", tcqd->set.isns);
	pthread_cond_signal(&R.cond);
	pthread_mutex_unlock(&R.lock);
}

void isnsr_stop(void)
{
	if (!R.started)
		return;
	pthread_mutex_lock(&R.lock);
	R.stop = true;
	pthread_cond_signal(&R.cond);
	pthread_mutex_unlock(&R.lock);
	pthread_join(R.thread, NULL);
	view_free(R.next);
	R.next = NULL;
	pthread_cond_destroy(&R.cond);
	R.started = false;
	R.stop = false;
}
