/*
 * tcq-bench --reconnect SECS (bench_run.c's workers call it): a session whose
 * connection is lost is not ended. Its I/Os without a status keep their
 * slots, verify locks and stamps in a retry list; the worker tries a new
 * login (the engine's reconnect(): same ISID, so the target reinstates
 * the session and ends what is left of the old one) every 0.1 s for up to
 * SECS after the loss, then sends them again unchanged. The outage is
 * counted from the loss to the new login; no login within SECS ends the
 * session as without the option, its retry list counted as errors.
 * An engine that reconnects by itself (libiscsi) reports its new logins
 * instead (engine_ops.relogged); run_self_relogged counts them.
 */
#include <errno.h>
#include <stdio.h>
#include "initiator/bench_run_priv.h"

/* --reconnect applies: the option is on and the engine can log in again. */
bool run_can_reconnect(const struct run_point *pt)
{
	return pt->o->eo.reconnect > 0 && pt->ops->reconnect;
}

/* A submit error that means a failed connection (not a bad request). */
bool run_conn_error(int rc)
{
	return rc < 0 && rc != -EINVAL && rc != -EBUSY && rc != -EAGAIN;
}

#define RECONNECT_PAUSE_NS (100ull * 1000000ull)

/*
 * --reconnect: s's connection failed and every I/O of it is back in
 * s->ready. Those without a status (-errno: in flight or queued when the
 * connection went) are kept in s->retry with their verify locks and
 * stamps, to be sent again as they were; an unanswered UNIT ATTENTION
 * retry as well. The rest is accounted as usual.
 */
void run_lost(struct run_worker *w, struct run_sess *s, uint64_t t)
{
	struct run_io *r, *next, *keep = NULL;
	unsigned n = 0;

	for (r = s->ready; r; r = next) {
		next = r->next_ready;
		if (r->io.done && (r->io.status < 0 ||
		    (r->io.status == 2 && r->io.sense_key == 6))) {
			r->next_ready = s->retry;
			s->retry = r;
			n++;
		} else {
			r->next_ready = keep;
			keep = r;
		}
	}
	s->ready = keep;
	s->lost = true;
	s->lost_ns = t;
	s->next_try_ns = t;
	s->lost_why[0] = 0;
	(void)w;
	fprintf(stderr, "%stcq-bench: session lost, logging in again (%u commands without status)\n",
		run_tty ? "\r\033[K" : "", n);
}

/* Hands the retry list to the accounting (as the errors they are). */
void run_retry_fail(struct run_sess *s)
{
	struct run_io *r, *next;

	for (r = s->retry; r; r = next) {
		next = r->next_ready;
		r->next_ready = s->ready;
		s->ready = r;
	}
	s->retry = NULL;
}

/* One login attempt of a lost session (blocking: connect and login). */
void run_try_reconnect(struct run_worker *w, struct run_sess *s,
			      uint64_t t)
{
	struct run_point *pt = w->pt;
	struct run_io *r, *next;
	double limit = pt->o->eo.reconnect;
	uint64_t t2;
	int rc;

	if (t < s->next_try_ns)
		return;
	rc = pt->ops->reconnect(s->e, s->lost_why, sizeof(s->lost_why));
	t2 = run_now_ns();
	if (rc) {
		if ((double)(t2 - s->lost_ns) / 1e9 < limit) {
			s->next_try_ns = t2 + RECONNECT_PAUSE_NS;
			return;
		}
		fprintf(stderr, "%stcq-bench: session lost: no new login within %g s (%s)\n",
			run_tty ? "\r\033[K" : "", limit, s->lost_why);
		w->err.transport++;
		s->lost = false;
		s->dead = true;
		run_retry_fail(s);
		return;
	}
	w->err.reconnects++;
	w->err.outage_s += (double)(t2 - s->lost_ns) / 1e9;
	fprintf(stderr, "%stcq-bench: session logged in again after %.3f s (same ISID)\n",
		run_tty ? "\r\033[K" : "", (double)(t2 - s->lost_ns) / 1e9);
	s->lost = false;
	r = s->retry;
	s->retry = NULL;
	for (; r; r = next) {
		next = r->next_ready;
		r->io.status = 0;
		r->io.sense_key = r->io.asc = r->io.ascq = 0;
		r->io.t_done_ns = 0;
		r->io.done = run_io_done;
		rc = pt->ops->submit(s->e, &r->io);
		if (rc < 0) {
			r->io.status = rc;
			r->next_ready = s->ready;
			s->ready = r;
			continue;
		}
		s->inflight++;
	}
}

/* An engine that reconnects by itself (libiscsi): counts the new logins
 * it reports after a service() like ours, with their outage. */
void run_self_relogged(struct run_worker *w, struct run_sess *s)
{
	double outage = 0;
	unsigned n;

	if (!w->pt->ops->relogged)
		return;
	n = w->pt->ops->relogged(s->e, &outage);
	if (!n)
		return;
	w->err.reconnects += n;
	w->err.outage_s += outage;
	fprintf(stderr, "%stcq-bench: session logged in again after %.3f s (the %s engine's own reconnect)\n",
		run_tty ? "\r\033[K" : "", outage, w->pt->ops->name);
}
