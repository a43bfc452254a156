/*
 * tcqctl record, mark, and what tcqctl stats shows of the crash lab
 * (ctl_priv.h; docs/crash-lab.md).
 *
 * record start holds the LUN still (lun_hold: running tasks finish, new
 * ones wait), so the base it copies is the medium every later record
 * starts from; the copy runs on a thread of its own, so reactor 0 and the
 * other LUNs go on, and live changes are refused meanwhile (the LUN must
 * not go away under the copy). The tasks that waited are recorded as they
 * start (scsi/lun.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "scsi/durability.h"
#include "scsi/lun.h"
#include "scsi/record.h"
#include "target/config.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"
#include "target/live.h"
#include "target/target.h"

#define STILL_POLL_MS 1

/* Copy threads running: tcqd's stop waits for them (ctl_stop), so no LUN
 * goes away under one. */
static atomic_uint copying;
#define STILL_WAIT_MS 30000	/* running tasks get this long to end */

struct rec_op {
	struct ctl_op *op;
	struct reactor *home;	/* reactor 0 */
	struct lun *l;
	char name[300];		/* TARGET/N as given */
	char path[4096];
	uint64_t max;
	unsigned waited_ms;
	struct reactor_timer poll;
	int rc;
	char err[512];
};

static void rec_op_finish(struct rec_op *o, json_object *reply)
{
	lun_release(o->l);
	live_busy_end();
	ctl_deferred_reply(o->op, reply);
	free(o);
}

/* On reactor 0, once the copy thread is done. */
static void copied(void *arg)
{
	struct rec_op *o = arg;
	struct record_info ri;
	char text[4500];
	json_object *r;

	if (o->rc < 0) {
		log_info("tcqctl record start %s refused: %s", o->name, o->err);
		rec_op_finish(o, ctl_reply_err("record start: %s", o->err));
		return;
	}
	record_info(o->l, &ri);
	r = ctl_reply_ok();
	snprintf(text, sizeof(text), "recording %s into %s (at most %llu "
		 "bytes)\n", o->name, ri.path, (unsigned long long)ri.max_bytes);
	ctl_add_str(r, "text", text);
	ctl_add_str(r, "path", ri.path);
	ctl_add_u64(r, "max_bytes", ri.max_bytes);
	rec_op_finish(o, r);
}

static void *copy_main(void *arg)
{
	struct rec_op *o = arg;

	o->rc = record_start(o->l, o->path, o->max, o->err, sizeof(o->err));
	/* reactor_post fails only out of memory: then this thread waits
	 * its turn rather than lose the answer and the held LUN. */
	while (reactor_post(o->home, copied, o) < 0) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	atomic_fetch_sub(&copying, 1);
	return NULL;
}

void ctl_record_quiesce(void)
{
	struct timespec ms = { 0, 1000000 };

	while (atomic_load(&copying))
		nanosleep(&ms, NULL);
}

static int start_copy(struct rec_op *o)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);	/* tcqd's signals go to its signalfd */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_fetch_add(&copying, 1);
	rc = pthread_create(&th, &attr, copy_main, o);
	if (rc)
		atomic_fetch_sub(&copying, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc ? -1 : 0;
}

/* On reactor 0 every STILL_POLL_MS until no task of the LUN runs. */
static void poll_still(struct reactor_timer *t)
{
	struct rec_op *o = t->arg;
	unsigned n = lun_running(o->l);

	if (n && o->waited_ms < STILL_WAIT_MS) {
		o->waited_ms += STILL_POLL_MS;
		reactor_timer_arm(o->home, &o->poll, STILL_POLL_MS);
		return;
	}
	if (n) {
		rec_op_finish(o, ctl_reply_err(
			"record start: %s still had %u task%s running after "
			"%u s; nothing recorded", o->name, n, n == 1 ? "" : "s",
			STILL_WAIT_MS / 1000));
		return;
	}
	if (start_copy(o) < 0)
		rec_op_finish(o, ctl_reply_err("record start: cannot start "
					       "a thread"));
}

static json_object *record_begin(struct ctl_conn *cc, struct lun *l,
				 const char *name, char **argv, int argc)
{
	struct record_info ri;
	struct rec_op *o;
	uint64_t max = 0;
	char err[300];

	if (argc < 3 || argc > 4)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_RECORD, "start",
						     err, sizeof(err)));
	if (argc == 4) {
		if (strncmp(argv[3], "max=", 4))
			return ctl_reply_err("record start: unknown option "
					     "'%s' (max=SIZE)", argv[3]);
		if (cfg_parse_size(argv[3] + 4, &max, err, sizeof(err)) < 0 ||
		    !max)
			return ctl_reply_err("record start: max: %s",
					     max ? err : "must be above 0");
	}
	if (!argv[2][0])
		return ctl_reply_err("record start: an empty file name");
	record_info(l, &ri);
	if (ri.active)
		return ctl_reply_err("record start: %s records already (to "
				     "%s)", name, ri.path);
	if (!(o = calloc(1, sizeof(*o))))
		return ctl_reply_err("out of memory");
	if (live_busy_begin(err, sizeof(err)) < 0) {
		free(o);
		return ctl_reply_err("record start: %s", err);
	}
	if (!(o->op = ctl_defer(cc))) {
		live_busy_end();
		free(o);
		return ctl_reply_err("out of memory");
	}
	o->home = reactor_self();
	o->l = l;
	o->max = max;
	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->path, sizeof(o->path), "%s", argv[2]);
	reactor_timer_init(&o->poll, poll_still, o);
	lun_hold(l);
	poll_still(&o->poll);
	return NULL;
}

json_object *ctl_cmd_record(struct ctl_conn *cc, char **argv, int argc)
{
	char err[4500];
	struct record_info ri;
	struct lun *l;
	json_object *r;

	if (strcmp(argv[0], "start") && strcmp(argv[0], "stop"))
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_RECORD, NULL, err,
						     sizeof(err)));
	if (!(l = ctl_find_lun(argv[1], err, sizeof(err))))
		return ctl_reply_err("%s", err);
	if (!strcmp(argv[0], "start"))
		return record_begin(cc, l, argv[1], argv, argc);
	if (argc != 2)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_RECORD, "stop",
						     err, sizeof(err)));
	if (record_stop(l, "tcqctl record stop", err, sizeof(err)) < 0)
		return ctl_reply_err("record stop: %s", err);
	record_info(l, &ri);
	r = ctl_reply_ok();
	snprintf(err, sizeof(err), "stopped: %llu records, %llu bytes in %s\n",
		 (unsigned long long)ri.records,
		 (unsigned long long)ri.bytes, ri.path);
	ctl_add_str(r, "text", err);
	ctl_add_u64(r, "records", ri.records);
	ctl_add_u64(r, "bytes", ri.bytes);
	return r;
}

json_object *ctl_cmd_mark(struct ctl_conn *cc, char **argv, int argc)
{
	char text[256], err[512];
	size_t n = 0;
	struct lun *l;

	(void)cc;
	if (!(l = ctl_find_lun(argv[0], err, sizeof(err))))
		return ctl_reply_err("%s", err);
	/* The words after the LUN, one space apart, as the mark's name. */
	text[0] = 0;
	for (int i = 1; i < argc; i++) {
		int w = snprintf(text + n, sizeof(text) - n, "%s%s",
				 i > 1 ? " " : "", argv[i]);

		if (w < 0 || (size_t)w >= sizeof(text) - n)
			return ctl_reply_err("mark: the text is longer than "
					     "%zu bytes", sizeof(text) - 1);
		n += (size_t)w;
	}
	if (!n)
		return ctl_reply_err("mark: an empty text");
	if (record_mark(l, text, err, sizeof(err)) < 0)
		return ctl_reply_err("mark: %s", err);
	return ctl_reply_ok();
}

/* ---- what tcqctl stats shows ------------------------------------------- */

void ctl_record_stats(struct lun *l, json_object *o)
{
	struct durab_info *d = malloc(sizeof(*d));
	struct record_info ri;
	json_object *x = json_object_new_object(), *ports;

	record_info(l, &ri);
	ctl_add_bool(x, "active", ri.active);
	ctl_add_str(x, "path", ri.path);
	ctl_add_u64(x, "bytes", ri.bytes);
	ctl_add_u64(x, "records", ri.records);
	ctl_add_u64(x, "max_bytes", ri.max_bytes);
	ctl_add_u64(x, "full", ri.full);
	ctl_add_str(x, "ended", ri.ended);
	json_object_object_add(o, "recording", x);
	if (!d)
		return;
	durab_info(l, d);
	x = json_object_new_object();
	ctl_add_u64(x, "bytes", d->bytes);
	json_object_object_add(x, "oldest_s",
			       json_object_new_double(d->oldest_s));
	ports = json_object_new_array();
	for (unsigned i = 0; i < d->nports; i++) {
		json_object *p = json_object_new_object();

		ctl_add_str(p, "initiator", d->ports[i].port);
		ctl_add_u64(p, "bytes", d->ports[i].bytes);
		json_object_object_add(p, "oldest_s", json_object_new_double(
			d->ports[i].oldest_s));
		json_object_array_add(ports, p);
	}
	json_object_object_add(x, "initiators", ports);
	json_object_object_add(o, "unflushed", x);
	free(d);
}
