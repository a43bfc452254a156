/*
 * Sessions (see session.h): the registry of live sessions (TSIH
 * assignment, reinstatement, the session limits, the listing for tcqctl),
 * the identity the device server sees (sess_sdev_ops), each session's
 * task sets, and its end.
 *
 * A session lives on the reactor of its (single, MaxConnections=1)
 * connection; other threads reach it only through the registry lock and
 * reactor_post. What happens inside the full feature phase is in
 * session_rx.c (CmdSN window, PDU dispatch), cmd.c (SCSI commands),
 * data_out.c (write data), nop_logout.c and tmf.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tcq/log.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/taskset.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_node registry = LIST_HEAD_INIT(registry);
static struct list_node all_sessions = LIST_HEAD_INIT(all_sessions);
static uint16_t next_tsih = 1;
static uint64_t next_gen = 1;
static unsigned nsessions;

static void sess_idle_deferred(struct reactor_defer *d);
static void settle_session_freed(const struct session *s);

/* ---- registry ---------------------------------------------------------- */

static bool tsih_in_use(uint16_t tsih)
{
	struct list_node *pos;

	list_for_each(pos, &registry) {
		if (list_entry(pos, struct session, reg_node)->tsih == tsih)
			return true;
	}
	return false;
}

struct kill_msg {
	struct session *s;
	uint64_t gen;
	const char *why;		/* a string literal, for the log */
	int logout_s;			/* >= 0: ask for a logout, not close */
};

static void sess_kill_on_reactor(void *arg)
{
	struct kill_msg *m = arg;
	struct list_node *pos;
	bool found = false;

	/* The old session may have ended on its own since the post: only
	 * touch it if it is still among the living with the same identity.
	 * Sessions are freed on this (their) thread, so it stays valid. */
	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &all_sessions) {
		struct session *o = list_entry(pos, struct session, all_node);

		if (o == m->s && o->gen == m->gen) {
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	if (found && !m->s->dead && m->s->conn) {
		if (m->logout_s >= 0)
			logout_request_async(m->s, (uint16_t)m->logout_s);
		else
			conn_close(m->s->conn, m->why);
	}
	free(m);
}

/* Asks o's reactor to close o's connection (reg_lock held). */
static void sess_post_kill(struct session *o, const char *why)
{
	struct kill_msg *m = malloc(sizeof(*m));

	if (!m)
		return;
	m->s = o;
	m->gen = o->gen;
	m->why = why;
	m->logout_s = -1;
	if (reactor_post(o->r, sess_kill_on_reactor, m))
		free(m);
}

void sess_logout_target(const struct target *t, uint16_t secs)
{
	struct list_node *pos;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		struct session *o = list_entry(pos, struct session, reg_node);
		struct kill_msg *m;

		if (o->discovery || o->target != t || !(m = malloc(sizeof(*m))))
			continue;
		m->s = o;
		m->gen = o->gen;
		m->why = "logout requested";
		m->logout_s = secs;
		if (reactor_post(o->r, sess_kill_on_reactor, m))
			free(m);
	}
	pthread_mutex_unlock(&reg_lock);
}

void sess_close_target(const struct target *t, const void *except,
		       const char *why)
{
	struct list_node *pos;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		struct session *o = list_entry(pos, struct session, reg_node);

		if (o != except && !o->discovery && o->target == t)
			sess_post_kill(o, why);
	}
	pthread_mutex_unlock(&reg_lock);
}

/* Session limits of [global] and the target (O1); reg_lock held. */
static const char *sess_over_limit(const struct session *s)
{
	const struct target *t = s->target;
	unsigned total = 0, per_t = 0, per_i = 0;
	struct list_node *pos;

	list_for_each(pos, &registry) {
		const struct session *o =
			list_entry(pos, struct session, reg_node);

		total++;
		if (t && o->target == t && !o->discovery) {
			per_t++;
			if (!strcmp(o->iname, s->iname))
				per_i++;
		}
	}
	if (tcqd->set.max_sessions && total >= tcqd->set.max_sessions)
		return "max_sessions of the daemon reached";
	if (t && t->max_sessions && per_t >= t->max_sessions)
		return "max_sessions of the target reached";
	if (t && t->max_sessions_per_initiator &&
	    per_i >= t->max_sessions_per_initiator)
		return "max_sessions_per_initiator reached";
	return NULL;
}

int sess_create(struct conn *c, const struct sess_login *sl, uint16_t *tsih)
{
	const char *limit;
	struct session *s = calloc(1, sizeof(*s));
	struct list_node *pos, *tmp;

	if (!s) {
		target_count_refusal(sl->target, LOGIN_REFUSED_OTHER);
		return ISCSI_LS_OUT_OF_RESOURCES;
	}
	s->r = c->r;
	s->conn = c;
	s->target = sl->target;
	s->discovery = sl->discovery;
	snprintf(s->iname, sizeof(s->iname), "%s", sl->initiator_name);
	memcpy(s->isid, sl->isid, 6);
	snprintf(s->iport, sizeof(s->iport),
		 "%s,i,0x%02x%02x%02x%02x%02x%02x", s->iname, s->isid[0],
		 s->isid[1], s->isid[2], s->isid[3], s->isid[4], s->isid[5]);
	s->params = sl->params;
	sess_window_init(s, sl->cmdsn);
	s->next_r2t_ttt = 1;
	list_init(&s->reg_node);
	list_init(&s->all_node);
	reactor_defer_init(&s->idle_defer, sess_idle_deferred, s);
	/* Its LUN map, before any command can look a LUN up. */
	if (s->target && !sess_map_load(s, false)) {
		target_count_refusal(sl->target, LOGIN_REFUSED_OTHER);
		free(s);
		return ISCSI_LS_OUT_OF_RESOURCES;
	}

	pthread_mutex_lock(&reg_lock);
	/* Reinstatement: same initiator, ISID and target replaces the old
	 * session (RFC 7143 6.3.5). */
	list_for_each_safe(pos, tmp, &registry) {
		struct session *o = list_entry(pos, struct session, reg_node);

		if (o->target == s->target && o->discovery == s->discovery &&
		    !memcmp(o->isid, s->isid, 6) &&
		    !strcmp(o->iname, s->iname)) {
			list_del(&o->reg_node);
			nsessions--;
			log_info("%s: reinstating session TSIH %u of %s",
				 c->peer_text, o->tsih, o->iname);
			sess_post_kill(o, "session reinstated");
		}
	}
	limit = sess_over_limit(s);
	if (limit) {
		pthread_mutex_unlock(&reg_lock);
		log_warn("%s: session of %s refused: %s", c->peer_text,
			 s->iname, limit);
		target_count_refusal(s->target, LOGIN_REFUSED_LIMIT);
		free(s->map);
		free(s);
		return ISCSI_LS_OUT_OF_RESOURCES;
	}
	target_hold(s->target);	/* dropped when s is freed */
	do {
		s->tsih = next_tsih++;
		if (next_tsih == 0)
			next_tsih = 1;
	} while (tsih_in_use(s->tsih));
	s->gen = next_gen++;
	list_add_tail(&s->reg_node, &registry);
	list_add_tail(&s->all_node, &all_sessions);
	nsessions++;
	pthread_mutex_unlock(&reg_lock);

	c->sess = s;
	*tsih = s->tsih;
	log_info("%s: %s session TSIH %u for %s%s%s", c->peer_text,
		 s->discovery ? "discovery" : "normal", s->tsih, s->iname,
		 s->target ? " to " : "", s->target ? s->target->dev.name : "");
	return 0;
}

bool sess_tsih_exists(uint16_t tsih)
{
	bool found;

	pthread_mutex_lock(&reg_lock);
	found = tsih_in_use(tsih);
	pthread_mutex_unlock(&reg_lock);
	return found;
}

unsigned sess_count(void)
{
	unsigned n;

	pthread_mutex_lock(&reg_lock);
	n = nsessions;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

unsigned sess_logged_in(const struct target *t)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		const struct session *o =
			list_entry(pos, struct session, reg_node);

		if (!o->discovery && o->target == t)
			n++;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

const char *sess_initiator_name(const void *nexus)
{
	return ((const struct session *)nexus)->iname;
}

const char *sess_initiator_port(const void *nexus)
{
	return ((const struct session *)nexus)->iport;
}

const struct sdev_ops sess_sdev_ops = {
	.initiator_port = sess_initiator_port,
	.lun_map = sess_lun_map,
};

uint16_t sess_tsih(const void *nexus)
{
	return ((const struct session *)nexus)->tsih;
}

const struct login_params *sess_params(const struct session *s)
{
	return &s->params;
}

/* ---- task sets: one per LUN the session has used ------------------------ */

struct taskset *sess_taskset_join(struct session *s, struct lun *l)
{
	s->ts[l->id] = lun_nexus_join(l, s->r, s);
	return s->ts[l->id];
}

struct taskset *sess_taskset_of(struct session *s, struct lun *l)
{
	return (l && l->id < TCQ_MAX_LUNS) ? s->ts[l->id] : NULL;
}

void sess_leave_tasksets(struct session *s)
{
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
		if (s->ts[i]) {
			lun_nexus_leave(s->ts[i]);
			s->ts[i] = NULL;
		}
	}
}

/* ---- teardown ---------------------------------------------------------- */

/* ---- letting go of a LUN withdrawn live ---------------------------------- */

/* The sessions of reactor r, living or dead but not yet freed (they can
 * be freed only on r, the caller's thread, so they stay valid). */
static unsigned sessions_of(struct reactor *r, struct session ***out)
{
	struct list_node *pos;
	unsigned n = 0, cap = 0;
	struct session **v = NULL;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &all_sessions) {
		struct session *s = list_entry(pos, struct session, all_node);

		if (s->r != r)
			continue;
		if (n == cap) {
			unsigned ncap = cap ? cap * 2 : 16;
			struct session **nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
			cap = ncap;
		}
		v[n++] = s;
	}
	pthread_mutex_unlock(&reg_lock);
	*out = v;
	return n;
}

unsigned sess_release_lun(struct reactor *r, struct lun *l)
{
	struct session **v;
	unsigned n = sessions_of(r, &v), busy = 0;

	for (unsigned i = 0; i < n; i++) {
		struct session *s = v[i];
		struct taskset *ts = l->id < TCQ_MAX_LUNS ? s->ts[l->id] : NULL;

		if (!ts || ts->lun != l)
			continue;
		if (taskset_count(ts)) {
			busy++;
			continue;
		}
		s->ts[l->id] = NULL;
		lun_nexus_leave(ts);
	}
	free(v);
	return busy;
}

unsigned sess_count_target(const struct target *t)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &all_sessions)
		n += list_entry(pos, struct session, all_node)->target == t;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* At the end of the pass, never inside a destructor: the last command
 * may finish inside a task set callback that still uses the task set
 * afterwards, and the Logout answer is the protocol's, not cmd_free's. */
static void sess_idle_deferred(struct reactor_defer *d)
{
	struct session *s = d->arg;

	if (s->cmds.live)
		return;
	if (!s->dead) {
		if (s->logout.waiting)
			logout_answer_if_idle(s);
		return;
	}
	/* The nexus leaves its LUNs before a login waiting for its end
	 * is told. */
	sess_leave_tasksets(s);
	pthread_mutex_lock(&reg_lock);
	list_del(&s->all_node);
	settle_session_freed(s);
	pthread_mutex_unlock(&reg_lock);
	cmd_pool_free(s);
	target_put(s->target);
	free(s->map);
	free(s);
}

void sess_cmd_gone(struct session *s)
{
	if (!s->cmds.live)
		reactor_defer(s->r, &s->idle_defer);
}

void sess_conn_lost(struct conn *c)
{
	struct session *s = c->sess;
	struct list_node *pos, *tmp;

	if (!s || s->dead)
		return;
	s->dead = true;
	pthread_mutex_lock(&reg_lock);
	if (list_linked(&s->reg_node)) {
		list_del(&s->reg_node);
		nsessions--;
	}
	pthread_mutex_unlock(&reg_lock);
	log_info("%s: session TSIH %u ended", c->peer_text, s->tsih);
	s->cmds.live++;		/* keeps s through the aborts below */

	list_for_each_safe(pos, tmp, &s->win.held_pdus) {
		list_del(pos);
		free(list_entry(pos, struct held_pdu, node));
	}
	/* Commands still waiting for their CmdSN never reached the device
	 * server: drop them now. The device server aborts the tasks it
	 * holds; running I/O completes first (never into freed memory). */
	list_for_each_safe(pos, tmp, &s->win.held_cmds) {
		struct cmd *cmd = list_entry(pos, struct cmd, held_node);
		list_del(&cmd->held_node);
		cmd_finish_check(cmd);
	}
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
		if (s->ts[i])
			lun_nexus_abort(s->ts[i]);
	}
	/* Commands that never reached the device server (not dispatched)
	 * or that are finished but waited for their answer go now. The
	 * extra count keeps the session alive through the walk. */
	for (unsigned h = 0; h < ITT_HASH; h++) {
		struct cmd *cmd = s->cmds.itt[h];

		while (cmd) {
			struct cmd *next = cmd->hnext;
			cmd_finish_check(cmd);
			cmd = next;
		}
	}
	s->cmds.live--;
	c->sess = NULL;
	s->conn = NULL;
	sess_cmd_gone(s);
}

/* ---- listing for tcqctl ---- */

/* Copies plain fields under the registry lock: a listed session cannot
 * leave the registry (nor its connection be freed: sess_conn_lost
 * unregisters first) while we hold it, and these fields are written only
 * before the session is registered. */
unsigned sess_list(struct sess_info *out, unsigned max)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		const struct session *s =
			list_entry(pos, struct session, reg_node);
		struct sess_info *si;

		if (n++ >= max)
			continue;	/* keep counting */
		si = &out[n - 1];
		memset(si, 0, sizeof(*si));
		snprintf(si->initiator, sizeof(si->initiator), "%s", s->iname);
		snprintf(si->target, sizeof(si->target), "%s",
			 s->target ? s->target->dev.name : "");
		if (s->conn)
			snprintf(si->peer, sizeof(si->peer), "%s",
				 s->conn->peer_text);
		memcpy(si->isid, s->isid, sizeof(si->isid));
		si->tsih = s->tsih;
		si->discovery = s->discovery;
		si->reactor = s->r ? s->r->index : -1;
		si->params = s->params;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* ---- a new session waits for the end of the old ones --------------------- */

struct settle {
	struct conn *c;			/* held (refs) until done runs */
	struct session *s;		/* c's new session */
	void (*done)(struct conn *c);
	struct reactor_join join;
	struct list_node node;		/* in settles, under reg_lock */
	unsigned nwait;			/* sessions still awaited */
	struct { const struct session *s; uint64_t gen; } *wait;
	int nparts;
	struct reactor_barrier_part parts[];
};

/* Logins waiting for sessions to be freed (under reg_lock). */
static struct list_node settles = LIST_HEAD_INIT(settles);

/* A session that is freed ends the wait of every login counting on it
 * (reg_lock held; s is still readable). */
static void settle_session_freed(const struct session *s)
{
	struct list_node *pos, *tmp;

	list_for_each_safe(pos, tmp, &settles) {
		struct settle *st = list_entry(pos, struct settle, node);

		for (unsigned i = 0; i < st->nwait; i++) {
			if (st->wait[i].s != s || st->wait[i].gen != s->gen)
				continue;
			st->wait[i] = st->wait[--st->nwait];
			if (!st->nwait) {
				list_del(&st->node);
				reactor_join_done(&st->join);
			}
			break;
		}
	}
}

/* Another session of the same initiator to the same target that has
 * ended (its connection lost, or reinstated by this login): reg_lock. */
static bool settle_awaits(const struct session *new, const struct session *o)
{
	return o != new && !o->discovery && o->target == new->target &&
	       !strcmp(o->iname, new->iname) &&
	       (o->dead || !list_linked(&o->reg_node));
}

static void settle_finish(void *arg)
{
	struct settle *st = arg;
	struct conn *c = st->c;

	st->done(c);
	free(st->wait);
	free(st);
	conn_put(c);
}

/* Every reactor has handled what came before: now the sessions that
 * ended are known; wait for each to be freed. */
static void settle_barrier_done(void *arg)
{
	struct settle *st = arg;
	struct list_node *pos;
	unsigned n = 0;

	reactor_join_init(&st->join, st->c->r, settle_finish, st);
	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &all_sessions)
		n += settle_awaits(st->s, list_entry(pos, struct session,
						     all_node));
	st->wait = n ? calloc(n, sizeof(*st->wait)) : NULL;
	if (st->wait) {
		list_for_each(pos, &all_sessions) {
			struct session *o = list_entry(pos, struct session,
						       all_node);

			if (!settle_awaits(st->s, o))
				continue;
			st->wait[st->nwait].s = o;
			st->wait[st->nwait++].gen = o->gen;
			log_info("%s: login waits for the end of session TSIH "
				 "%u of %s", st->c->peer_text, o->tsih, o->iname);
		}
		reactor_join_add(&st->join, 1);
		list_add_tail(&st->node, &settles);
	}
	pthread_mutex_unlock(&reg_lock);
	/* Out of memory: not waiting is what tcqd did before. */
	reactor_join_done(&st->join);
}

int sess_settle(struct conn *c, void (*done)(struct conn *c))
{
	struct session *s = c->sess;
	int n = s && !s->discovery ? tcqd->nreactors : 0;
	struct settle *st = calloc(1, sizeof(*st) + (size_t)n *
				   sizeof(st->parts[0]));

	if (!st)
		return -ENOMEM;
	st->c = c;
	st->s = s;
	st->done = done;
	st->nparts = n;
	list_init(&st->node);
	c->refs++;
	if (!n) {
		reactor_join_init(&st->join, c->r, settle_finish, st);
		reactor_join_done(&st->join);
		return 0;
	}
	reactor_join_init(&st->join, c->r, settle_barrier_done, st);
	reactor_barrier(tcqd->reactors, n, st->parts, &st->join);
	reactor_join_done(&st->join);
	return 0;
}
