/*
 * Control socket server (ctl.h). Everything here runs on reactor 0 except
 * the per-reactor halves of "reset", which reach each reactor through
 * reactor_post: a statistics slot is only ever written by its own thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>
#include "tcq/list.h"
#include "tcq/log.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/ua.h"
#include "scsi/stats.h"
#include "target/config.h"
#include "target/ctl.h"
#include "target/conn.h"	/* struct cmd, for session.h */
#include "tcq/reactor.h"
#include "target/session.h"
#include "target/target.h"

#define CTL_LINE_MAX 4096	/* one request line */
#define CTL_MAX_CONNS 32
#define CTL_IDLE_MS 10000	/* a client that sends nothing is dropped */
#define CTL_MAX_SESSIONS 4096	/* listed per request */

struct ctl_op;

struct ctl_conn {
	struct list_node node;
	struct reactor_fd rfd;
	int fd;
	char in[CTL_LINE_MAX + 1];
	size_t inlen;
	bool overlong;		/* discarding a too long request to its end */
	char *out;		/* reply being written */
	size_t outlen, outoff;
	struct ctl_op *op;	/* a request waiting for other reactors */
	struct reactor_timer idle;
};

/* A request that needs every reactor (reset): replies when all ran it. */
struct ctl_op {
	int pending;		/* reactors still to run it (atomic) */
	struct ctl_conn *cc;	/* NULL once the client went away */
	struct lun *only;	/* NULL: every LUN */
};

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct reactor **reactors;
	int nreactors;
	struct reactor_fd rfd;
	struct list_node conns;
	int nconns;
	bool running;
} ctl = { .fd = -1 };

static void conn_close_ctl(struct ctl_conn *cc);
static void conn_send(struct ctl_conn *cc, json_object *reply);

/* ---- replies ------------------------------------------------------------- */

static json_object *reply_ok(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *reply_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static json_object *reply_err(const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static void add_us(json_object *o, const char *k, uint64_t ns)
{
	/* microseconds with ns precision, rounded to 0.1 us for people */
	json_object_object_add(o, k,
			       json_object_new_double((double)(ns / 100) / 10.0));
}

/* ---- LUN lookup ---------------------------------------------------------- */

static int parse_lun_nr(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= TCQ_MAX_LUNS)
		return -1;
	*out = (unsigned)v;
	return 0;
}

struct lun *ctl_find_lun(const char *spec, char *err, size_t errlen)
{
	const char *slash = strrchr(spec, '/');
	struct target *t = NULL;
	unsigned nr;

	if (!tcqd || tcqd->ntargets == 0) {
		snprintf(err, errlen, "no targets configured");
		return NULL;
	}
	if (slash) {
		char name[TCQ_NAME_MAX];
		size_t n = (size_t)(slash - spec);

		if (n == 0 || n >= sizeof(name)) {
			snprintf(err, errlen, "'%.64s': bad target name", spec);
			return NULL;
		}
		memcpy(name, spec, n);
		name[n] = '\0';
		t = target_find(name);
		if (!t) {
			snprintf(err, errlen, "no target '%s'", name);
			return NULL;
		}
		spec = slash + 1;
	} else if (tcqd->ntargets == 1) {
		t = tcqd->targets[0];
	} else {
		snprintf(err, errlen,
			 "%d targets: name the LUN as TARGET/N", tcqd->ntargets);
		return NULL;
	}
	if (parse_lun_nr(spec, &nr) < 0) {
		snprintf(err, errlen, "'%.64s' is not a LUN number (0..%d)",
			 spec, TCQ_MAX_LUNS - 1);
		return NULL;
	}
	if (!sdev_lun(&t->dev, nr)) {
		snprintf(err, errlen, "target %s has no LUN %u", t->dev.name,
			 nr);
		return NULL;
	}
	return sdev_lun(&t->dev, nr);
}

static const char *barrier_name(enum lun_barrier b)
{
	switch (b) {
	case BARRIER_DRAIN: return "drain";
	case BARRIER_FLUSH: return "flush";
	case BARRIER_IGNORE: return "ignore";
	}
	return "?";
}

/* The identity and live settings of a LUN. */
static json_object *lun_json(const struct lun *l)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "target", json_object_new_string(
				       l->dev ? l->dev->name : ""));
	add_u64(o, "lun", l->id);
	json_object_object_add(o, "backend", json_object_new_string(
				       l->bdev && l->bdev->spec ? l->bdev->spec : ""));
	add_u64(o, "blocks", l->nblocks);
	add_u64(o, "block_size", l->block_size);
	add_u64(o, "queue_depth", l->bdev ? atomic_load_explicit(
			&l->bdev->queue_depth, memory_order_relaxed) : 0);
	json_object_object_add(o, "barrier", json_object_new_string(
				       barrier_name(lun_get_barrier(l))));
	json_object_object_add(o, "write_cache", json_object_new_boolean(
				       lun_get_write_cache(l)));
	return o;
}

/* Calls fn for every LUN (or just only); stops at a non-zero return. */
static void for_each_lun(struct lun *only, void (*fn)(struct lun *l, void *a),
			 void *arg)
{
	if (only) {
		fn(only, arg);
		return;
	}
	for (int i = 0; tcqd && i < tcqd->ntargets; i++)
		for (int j = 0; j < tcqd->targets[i]->dev.nluns; j++)
			if (tcqd->targets[i]->dev.luns[j])
				fn(tcqd->targets[i]->dev.luns[j], arg);
}

/* ---- stats --------------------------------------------------------------- */

static json_object *hist_json(const struct stats_hist *h, double scale)
{
	json_object *a = json_object_new_array();

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		json_object *b;

		if (!h->b[i])
			continue;
		b = json_object_new_object();
		if (scale == 1.0) {
			add_u64(b, "lo", stats_hist_lo(i));
			add_u64(b, "hi", stats_hist_hi(i));
		} else {
			json_object_object_add(b, "lo", json_object_new_double(
				(double)stats_hist_lo(i) * scale));
			json_object_object_add(b, "hi", json_object_new_double(
				(double)stats_hist_hi(i) * scale));
		}
		add_u64(b, "count", h->b[i]);
		json_object_array_add(a, b);
	}
	return a;
}

static void stats_lun(struct lun *l, void *arg)
{
	json_object *arr = arg, *o = lun_json(l), *c, *x;
	struct stats_snapshot *s = malloc(sizeof(*s));
	uint64_t total = 0;

	if (!s) {
		json_object_put(o);
		return;
	}
	stats_snapshot(l, s);
	c = json_object_new_object();
	add_u64(c, "simple", s->c.cmds[0]);
	add_u64(c, "ordered", s->c.cmds[1]);
	add_u64(c, "head_of_queue", s->c.cmds[2]);
	add_u64(c, "aca", s->c.cmds[3]);
	for (int a = 0; a < STATS_NATTR; a++)
		total += s->c.cmds[a];
	add_u64(c, "total", total);
	add_u64(c, "completed", s->c.completed);
	json_object_object_add(o, "commands", c);

	x = json_object_new_object();
	add_u64(x, "current", s->inflight);
	add_u64(x, "peak", s->c.peak_inflight);
	add_u64(x, "ios", s->c.ios);
	json_object_object_add(x, "occupancy_at_submit", hist_json(&s->occ, 1.0));
	json_object_object_add(o, "inflight", x);

	x = json_object_new_object();
	add_u64(x, "count", stats_hist_count(&s->lat));
	add_us(x, "p50", stats_hist_quantile(&s->lat, 0.50));
	add_us(x, "p99", stats_hist_quantile(&s->lat, 0.99));
	add_us(x, "p99_9", stats_hist_quantile(&s->lat, 0.999));
	json_object_object_add(o, "latency_us", x);

	x = json_object_new_object();
	add_u64(x, "count", s->c.ordered_enabled);
	add_us(x, "total", s->c.drain_ns_total);
	add_us(x, "mean", s->c.ordered_enabled ?
	       s->c.drain_ns_total / s->c.ordered_enabled : 0);
	add_us(x, "max", s->c.drain_ns_max);
	add_us(x, "p50", stats_hist_quantile(&s->drain, 0.50));
	add_us(x, "p99", stats_hist_quantile(&s->drain, 0.99));
	json_object_object_add(o, "ordered_drain_us", x);

	x = json_object_new_object();
	add_u64(x, "total", s->c.flushes);
	add_u64(x, "barrier", s->c.barrier_flushes);
	json_object_object_add(o, "flushes", x);

	json_object_array_add(arr, o);
	free(s);
}

static void luns_add(struct lun *l, void *arg)
{
	json_object_array_add(arg, lun_json(l));
}

/* ---- sessions ------------------------------------------------------------ */

static json_object *params_json(const struct iscsi_params *p)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "HeaderDigest", json_object_new_string(
				       p->header_digest ? "CRC32C" : "None"));
	json_object_object_add(o, "DataDigest", json_object_new_string(
				       p->data_digest ? "CRC32C" : "None"));
	add_u64(o, "MaxRecvDataSegmentLength", p->max_recv_dsl);
	add_u64(o, "MaxXmitDataSegmentLength", p->max_send_dsl);
	add_u64(o, "MaxConnections", p->max_connections);
	json_object_object_add(o, "InitialR2T",
			       json_object_new_boolean(p->initial_r2t));
	json_object_object_add(o, "ImmediateData",
			       json_object_new_boolean(p->immediate_data));
	add_u64(o, "MaxBurstLength", p->max_burst);
	add_u64(o, "FirstBurstLength", p->first_burst);
	add_u64(o, "DefaultTime2Wait", p->default_time2wait);
	add_u64(o, "DefaultTime2Retain", p->default_time2retain);
	add_u64(o, "MaxOutstandingR2T", p->max_outstanding_r2t);
	json_object_object_add(o, "DataPDUInOrder",
			       json_object_new_boolean(p->data_pdu_in_order));
	json_object_object_add(o, "DataSequenceInOrder",
			       json_object_new_boolean(p->data_sequence_in_order));
	add_u64(o, "ErrorRecoveryLevel", p->erl);
	return o;
}

static json_object *do_sessions(void)
{
	struct sess_info *si = calloc(CTL_MAX_SESSIONS, sizeof(*si));
	json_object *r, *arr;
	unsigned n;

	if (!si)
		return reply_err("out of memory");
	n = sess_list(si, CTL_MAX_SESSIONS);
	r = reply_ok();
	arr = json_object_new_array();
	for (unsigned i = 0; i < n && i < CTL_MAX_SESSIONS; i++) {
		json_object *o = json_object_new_object();
		char isid[13];

		snprintf(isid, sizeof(isid), "%02x%02x%02x%02x%02x%02x",
			 si[i].isid[0], si[i].isid[1], si[i].isid[2],
			 si[i].isid[3], si[i].isid[4], si[i].isid[5]);
		add_u64(o, "tsih", si[i].tsih);
		json_object_object_add(o, "type", json_object_new_string(
					       si[i].discovery ? "discovery" : "normal"));
		json_object_object_add(o, "initiator",
				       json_object_new_string(si[i].initiator));
		json_object_object_add(o, "isid", json_object_new_string(isid));
		json_object_object_add(o, "target",
				       json_object_new_string(si[i].target));
		json_object_object_add(o, "peer",
				       json_object_new_string(si[i].peer));
		json_object_object_add(o, "reactor",
				       json_object_new_int(si[i].reactor));
		json_object_object_add(o, "params", params_json(&si[i].params));
		json_object_array_add(arr, o);
	}
	add_u64(r, "count", n);
	json_object_object_add(r, "sessions", arr);
	free(si);
	return r;
}

/* ---- set ----------------------------------------------------------------- */

struct lun_change {
	bool qd, barrier, wc;
	uint32_t queue_depth;
	enum lun_barrier b;
	bool write_cache;
};

static int parse_onoff(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1") ||
	    !strcmp(v, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0") ||
	    !strcmp(v, "false")) {
		*out = false;
		return 0;
	}
	return -1;
}

/* Checks every key=value before applying any, so a bad request changes
 * nothing. */
static json_object *do_set(char **argv, int argc)
{
	struct lun_change ch = { 0 };
	char err[300];
	struct lun *l;
	json_object *r;

	if (argc < 2)
		return reply_err("usage: set LUN key=value... (keys: "
				 "queue_depth, barrier, write_cache)");
	l = ctl_find_lun(argv[0], err, sizeof(err));
	if (!l)
		return reply_err("%s", err);
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *k = argv[i], *v;

		if (!eq || eq == argv[i])
			return reply_err("'%.64s': expected key=value", argv[i]);
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(k, "queue_depth")) {
			char *end;
			unsigned long d;

			errno = 0;
			d = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno || d < 1 ||
			    d > CFG_MAX_QUEUE_DEPTH)
				return reply_err("queue_depth '%.32s': expected "
						 "1..%d", v, CFG_MAX_QUEUE_DEPTH);
			ch.qd = true;
			ch.queue_depth = (uint32_t)d;
		} else if (!strcmp(k, "barrier")) {
			if (!strcmp(v, "drain"))
				ch.b = BARRIER_DRAIN;
			else if (!strcmp(v, "flush"))
				ch.b = BARRIER_FLUSH;
			else if (!strcmp(v, "ignore"))
				ch.b = BARRIER_IGNORE;
			else
				return reply_err("barrier '%.32s': expected "
						 "drain, flush or ignore", v);
			ch.barrier = true;
		} else if (!strcmp(k, "write_cache")) {
			if (parse_onoff(v, &ch.write_cache) < 0)
				return reply_err("write_cache '%.32s': expected "
						 "on or off", v);
			ch.wc = true;
		} else {
			return reply_err("unknown setting '%.64s' (queue_depth, "
					 "barrier, write_cache)", k);
		}
	}
	if (ch.qd && !l->bdev)
		return reply_err("LUN has no backend");
	/* A write-through backend (rbd cache=none) has no cache to turn on:
	 * WCE would claim writes may be lost that never can be. */
	if (ch.wc && ch.write_cache && l->bdev && l->bdev->write_through)
		return reply_err("write_cache on: the backend has no volatile "
				 "write cache (%.64s)", l->bdev->spec);
	/* Each value is one atomic store the data path reads relaxed:
	 * sessions keep running and see the new value on their next
	 * task (queue_depth: on their next submit or completion). */
	if (ch.qd)
		atomic_store_explicit(&l->bdev->queue_depth, ch.queue_depth,
				      memory_order_relaxed);
	if (ch.barrier)
		lun_set_barrier(l, ch.b);
	if (ch.wc) {
		bool changed;

		pthread_mutex_lock(&l->lock);	/* vs MODE SELECT */
		changed = lun_get_write_cache(l) != ch.write_cache;
		lun_set_write_cache(l, ch.write_cache);
		pthread_mutex_unlock(&l->lock);
		/* WCE is a mode parameter: every I_T nexus is told (SPC-4
		 * 5.14: MODE PARAMETERS CHANGED). */
		if (changed)
			ua_establish_all(l, ASC_MODE_PARAMETERS_CHANGED);
	}
	log_info("tcqctl: %s/%llu: settings changed",
		 l->dev ? l->dev->name : "?", (unsigned long long)l->id);
	r = reply_ok();
	json_object_object_add(r, "lun", lun_json(l));
	return r;
}

/* ---- reset (runs on every reactor) -------------------------------------- */

static void reset_lun(struct lun *l, void *arg)
{
	stats_reset_local(l->stats);
}

static void op_finish(void *arg)	/* on reactor 0 */
{
	struct ctl_op *op = arg;

	if (op->cc) {
		op->cc->op = NULL;
		conn_send(op->cc, reply_ok());
	}
	free(op);
}

static void op_step(struct ctl_op *op)
{
	if (__atomic_sub_fetch(&op->pending, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (reactor_self() == ctl.reactors[0])
		op_finish(op);
	else if (reactor_post(ctl.reactors[0], op_finish, op) < 0)
		log_err("tcqctl: cannot answer a reset (out of memory)");
}

static void reset_on_reactor(void *arg)
{
	struct ctl_op *op = arg;

	for_each_lun(op->only, reset_lun, NULL);
	op_step(op);
}

static json_object *do_reset(struct ctl_conn *cc, char **argv, int argc)
{
	struct ctl_op *op;
	char err[300];
	struct lun *only = NULL;

	if (argc > 1)
		return reply_err("usage: reset [LUN]");
	if (argc == 1 && !(only = ctl_find_lun(argv[0], err, sizeof(err))))
		return reply_err("%s", err);
	op = calloc(1, sizeof(*op));
	if (!op)
		return reply_err("out of memory");
	op->cc = cc;
	op->only = only;
	op->pending = ctl.nreactors;
	cc->op = op;
	for (int i = 1; i < ctl.nreactors; i++) {
		if (reactor_post(ctl.reactors[i], reset_on_reactor, op) < 0)
			op_step(op);	/* that reactor keeps its counts */
	}
	reset_on_reactor(op);	/* ours, last: may reply at once */
	return NULL;
}

/* ---- crash --------------------------------------------------------------- */

static json_object *do_crash(char **argv, int argc)
{
	char err[300];
	struct lun *l;
	json_object *r;
	int rc;

	if (argc != 1)
		return reply_err("usage: crash LUN");
	if (!(l = ctl_find_lun(argv[0], err, sizeof(err))))
		return reply_err("%s", err);
	/* Any thread may call it (backend/bdev.h): it takes the cache's
	 * lock, and I/O in flight completes normally afterwards. */
	rc = bdev_cache_crash(l->bdev);
	if (rc < 0)
		return reply_err("crash: %s", rc == -EINVAL ?
				 "the LUN's backend is not 'cache'" :
				 strerror(-rc));
	log_warn("tcqctl: %s/%llu: simulated power loss: %d unsaved block%s "
		 "dropped", l->dev ? l->dev->name : "?",
		 (unsigned long long)l->id, rc, rc == 1 ? "" : "s");
	r = reply_ok();
	add_u64(r, "dropped_blocks", (uint64_t)rc);
	return r;
}

/* ---- requests ------------------------------------------------------------ */

#define CTL_MAX_ARGS 16

/* Runs one request line; NULL when the answer comes later (cc->op). */
static json_object *ctl_request(struct ctl_conn *cc, char *line)
{
	char *argv[CTL_MAX_ARGS + 1], *save = NULL, *cmd;
	int argc = 0;
	json_object *r, *arr;

	cmd = strtok_r(line, " \t\r", &save);
	if (!cmd)
		return reply_err("empty request");
	for (char *w; (w = strtok_r(NULL, " \t\r", &save));) {
		if (argc == CTL_MAX_ARGS)
			return reply_err("too many arguments");
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	if (!strcmp(cmd, "stats") || !strcmp(cmd, "luns")) {
		struct lun *only = NULL;
		char err[300];

		if (argc > 1)
			return reply_err("usage: %s [LUN]", cmd);
		if (argc == 1 &&
		    !(only = ctl_find_lun(argv[0], err, sizeof(err))))
			return reply_err("%s", err);
		r = reply_ok();
		arr = json_object_new_array();
		for_each_lun(only, cmd[0] == 's' ? stats_lun : luns_add, arr);
		json_object_object_add(r, "luns", arr);
		return r;
	}
	if (!strcmp(cmd, "sessions"))
		return argc ? reply_err("usage: sessions") : do_sessions();
	if (!strcmp(cmd, "set"))
		return do_set(argv, argc);
	if (!strcmp(cmd, "reset"))
		return do_reset(cc, argv, argc);
	if (!strcmp(cmd, "crash"))
		return do_crash(argv, argc);
	return reply_err("unknown command '%.64s' (stats, luns, sessions, set, "
			 "reset, crash)", cmd);
}

/* ---- connections --------------------------------------------------------- */

static void conn_close_ctl(struct ctl_conn *cc)
{
	if (cc->op)
		cc->op->cc = NULL;	/* the op frees itself when done */
	reactor_timer_cancel(ctl.reactors[0], &cc->idle);
	reactor_del_fd(ctl.reactors[0], &cc->rfd);
	close(cc->fd);
	list_del(&cc->node);
	ctl.nconns--;
	free(cc->out);
	free(cc);
}

static void conn_flush(struct ctl_conn *cc)
{
	while (cc->outoff < cc->outlen) {
		ssize_t n = send(cc->fd, cc->out + cc->outoff,
				 cc->outlen - cc->outoff, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			reactor_mod_fd(ctl.reactors[0], &cc->rfd, EPOLLOUT);
			return;
		}
		if (n <= 0) {
			conn_close_ctl(cc);
			return;
		}
		cc->outoff += (size_t)n;
	}
	conn_close_ctl(cc);	/* one request per connection */
}

static void conn_send(struct ctl_conn *cc, json_object *reply)
{
	const char *txt = json_object_to_json_string_ext(
		reply, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(txt);

	cc->out = malloc(n + 2);
	if (cc->out) {
		memcpy(cc->out, txt, n);
		cc->out[n] = '\n';
		cc->outlen = n + 1;
	}
	json_object_put(reply);
	if (!cc->out) {
		conn_close_ctl(cc);
		return;
	}
	conn_flush(cc);
}

static void conn_line(struct ctl_conn *cc)
{
	json_object *r;

	/* No more input is read: the request is all we take. */
	reactor_mod_fd(ctl.reactors[0], &cc->rfd, 0);
	r = ctl_request(cc, cc->in);
	if (r)
		conn_send(cc, r);
}

static void conn_event(struct reactor *r, uint32_t events, void *arg)
{
	struct ctl_conn *cc = arg;
	char *nl;
	ssize_t n;

	if (cc->out) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			conn_flush(cc);
		return;
	}
	if (cc->op) {	/* waiting for other reactors */
		if (events & (EPOLLERR | EPOLLHUP))
			conn_close_ctl(cc);
		return;
	}
	for (;;) {
		size_t room = CTL_LINE_MAX - cc->inlen;

		if (room == 0) {
			/* Read the rest before answering: closing on unread
			 * input would reset the connection under the reply. */
			cc->overlong = true;
			cc->inlen = 0;
			room = CTL_LINE_MAX;
		}
		n = recv(cc->fd, cc->in + cc->inlen, room, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			conn_close_ctl(cc);
			return;
		}
		if (cc->overlong &&
		    (n == 0 || memchr(cc->in + cc->inlen, '\n', (size_t)n))) {
			reactor_mod_fd(ctl.reactors[0], &cc->rfd, 0);
			conn_send(cc, reply_err("request longer than %d bytes",
						CTL_LINE_MAX));
			return;
		}
		if (n == 0) {	/* EOF: what came is the request */
			if (cc->inlen == 0) {
				conn_close_ctl(cc);
				return;
			}
			cc->in[cc->inlen] = '\0';
			conn_line(cc);
			return;
		}
		cc->inlen += (size_t)n;
		cc->in[cc->inlen] = '\0';
		if (cc->overlong) {
			cc->inlen = 0;
			continue;
		}
		if (memchr(cc->in, '\0', cc->inlen)) {
			reactor_mod_fd(ctl.reactors[0], &cc->rfd, 0);
			conn_send(cc, reply_err("NUL byte in request"));
			return;
		}
		nl = strchr(cc->in, '\n');
		if (nl) {
			*nl = '\0';
			conn_line(cc);
			return;
		}
	}
}

static void conn_idle(struct reactor_timer *t)
{
	struct ctl_conn *cc = t->arg;

	if (cc->op)
		return;		/* the reply is on its way */
	log_debug("tcqctl: idle control connection dropped");
	conn_close_ctl(cc);
}

static void ctl_accept(struct reactor *r, uint32_t events, void *arg)
{
	for (;;) {
		int fd = accept4(ctl.fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ctl_conn *cc;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				log_warn("tcqctl: accept: %s", strerror(errno));
			return;
		}
		if (ctl.nconns >= CTL_MAX_CONNS ||
		    !(cc = calloc(1, sizeof(*cc)))) {
			close(fd);
			continue;
		}
		cc->fd = fd;
		reactor_timer_init(&cc->idle, conn_idle, cc);
		if (reactor_add_fd(r, &cc->rfd, fd, EPOLLIN, conn_event,
				   cc) < 0) {
			close(fd);
			free(cc);
			continue;
		}
		list_add_tail(&cc->node, &ctl.conns);
		ctl.nconns++;
		reactor_timer_arm(r, &cc->idle, CTL_IDLE_MS);
	}
}

/* ---- start / stop -------------------------------------------------------- */

/* A socket file nobody answers on is a leftover of a dead tcqd. */
static bool socket_is_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return true;	/* cannot tell: do not steal it */
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	       errno != ECONNREFUSED;
	close(fd);
	return live;
}

int ctl_start(const char *path, struct reactor **reactors, int nreactors,
	      char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (!path || !*path) {
		snprintf(err, errlen, "control socket: empty path");
		return -1;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket %s: path longer than %zu "
			 "bytes", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "control socket %s: exists and is "
				 "not a socket", path);
			return -1;
		}
		if (socket_is_live(&sa)) {
			snprintf(err, errlen, "control socket %s: in use (is "
				 "another tcqd running?)", path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	/* The file is born 0600: no window where others could connect. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, 16) < 0 ||
	    reactor_add_fd(reactors[0], &ctl.rfd, fd, EPOLLIN, ctl_accept,
			   NULL) < 0) {
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	ctl.fd = fd;
	memcpy(ctl.path, sa.sun_path, sizeof(ctl.path));
	ctl.reactors = reactors;
	ctl.nreactors = nreactors;
	list_init(&ctl.conns);
	ctl.running = true;
	return 0;
}

void ctl_stop(void)
{
	if (!ctl.running)
		return;
	while (!list_empty(&ctl.conns))
		conn_close_ctl(list_first_entry(&ctl.conns, struct ctl_conn,
						node));
	reactor_del_fd(ctl.reactors[0], &ctl.rfd);
	close(ctl.fd);
	ctl.fd = -1;
	unlink(ctl.path);
	ctl.running = false;
}
