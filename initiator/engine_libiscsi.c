/*
 * The libiscsi engine: a reference initiator to compare the target (and
 * the native engine) against. One iSCSI session per engine, logged in
 * synchronously at open, then driven through libiscsi's async API from the
 * worker's poll loop. Payload goes straight to/from the bench_io buffer via
 * a per-slot iovec (libiscsi keeps the pointer, so the slot must outlive
 * the command). libiscsi always sends SIMPLE task attributes: no API sets
 * another one, hence supports_attr is false. FUA writes, SYNCHRONIZE
 * CACHE, UNMAP, WRITE SAME and COMPARE AND WRITE go through libiscsi's own
 * calls (tcq-bench's command mixes and --rw journal's commits); EXTENDED
 * COPY does not.
 *
 * --reconnect turns libiscsi's own reconnect on. libiscsi 1.19 has no
 * reconnect event or counter (only a log callback without a context
 * pointer, whose texts are not an interface), so its reconnects are seen
 * from outside: iscsi_is_logged_in() is checked after every
 * iscsi_service(). libiscsi notices the lost connection inside
 * iscsi_service() and at once swaps in a fresh, not logged-in context for
 * the new login (so logged in -> not: the loss); the new login completes
 * inside a later iscsi_service() (not -> logged in: a reconnect, the
 * outage is the time between, as the native engine counts it). A loss
 * within 3 s of libiscsi's previous reconnect is one it only acts on
 * once those 3 s are over: the outage counted then starts late.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include "initiator/engine.h"

#define LIBISCSI_DEFAULT_IQN "iqn.2026-11.org.tcq:bench"

struct libiscsi_slot {
	struct scsi_iovec iov;
	struct bench_io *io;
	struct engine *e;
	struct libiscsi_slot *next_free;
};

struct engine {
	struct iscsi_context *ctx;
	int lun;
	uint32_t block_size;
	uint64_t nblocks;
	uint32_t seq;
	uint32_t inflight;
	struct libiscsi_slot *slots, *free_slots;
	/* libiscsi's own reconnect (see the top): the session was logged
	 * in after the last iscsi_service(); not: lost since down_ns */
	bool up;
	uint64_t down_ns;
	unsigned relogins;	/* completed, not yet taken by relogged() */
	double outage_s;	/* theirs, summed */
};

static uint64_t lis_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lis_close(struct engine *e)
{
	if (!e)
		return;
	if (e->ctx) {
		if (iscsi_is_logged_in(e->ctx))
			iscsi_logout_sync(e->ctx);
		iscsi_destroy_context(e->ctx);
	}
	free(e->slots);
	free(e);
}

/* Reads the capacity once so the workload knows the LBA range. */
static int lis_read_capacity(struct engine *e, char *err, size_t errlen)
{
	struct scsi_task *t;
	struct scsi_readcapacity16 *rc16;

	t = iscsi_readcapacity16_sync(e->ctx, e->lun);
	if (!t || t->status != SCSI_STATUS_GOOD) {
		snprintf(err, errlen, "READ CAPACITY(16) failed: %s",
			 iscsi_get_error(e->ctx));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	rc16 = scsi_datain_unmarshall(t);
	if (!rc16 || rc16->block_length == 0) {
		snprintf(err, errlen, "READ CAPACITY(16): bad answer");
		scsi_free_scsi_task(t);
		return -1;
	}
	e->block_size = rc16->block_length;
	e->nblocks = rc16->returned_lba + 1;
	scsi_free_scsi_task(t);
	return 0;
}

static struct engine *lis_open(const char *target, const struct engine_opts *o,
			       char *err, size_t errlen)
{
	struct engine *e;
	struct iscsi_url *url = NULL;
	const char *user, *secret;
	uint32_t i, depth = o->queue_depth ? o->queue_depth : 1;

	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->ctx = iscsi_create_context(o->initiator_name ? o->initiator_name :
				      LIBISCSI_DEFAULT_IQN);
	if (!e->ctx) {
		snprintf(err, errlen, "iscsi_create_context failed");
		goto fail;
	}
	url = iscsi_parse_full_url(e->ctx, target);
	if (!url) {
		snprintf(err, errlen, "bad URL %s: %s", target,
			 iscsi_get_error(e->ctx));
		goto fail;
	}
	e->lun = url->lun;
	iscsi_set_targetname(e->ctx, url->target);
	iscsi_set_session_type(e->ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(e->ctx, o->header_digest ?
				ISCSI_HEADER_DIGEST_CRC32C :
				ISCSI_HEADER_DIGEST_NONE);
	/* A lost connection must show up as errors, not be papered over,
	 * unless --reconnect asks for libiscsi's own reconnect (it logs in
	 * again and requeues its commands; lis_watch_login counts it). */
	if (o->reconnect > 0) {
		iscsi_set_noautoreconnect(e->ctx, 0);
		iscsi_set_reconnect_max_retries(e->ctx,
			o->reconnect < 1 ? 1 : (int)o->reconnect);
	} else {
		iscsi_set_noautoreconnect(e->ctx, 1);
	}
	user = o->chap_user ? o->chap_user : (url->user[0] ? url->user : NULL);
	secret = o->chap_secret ? o->chap_secret : url->passwd;
	if (user && iscsi_set_initiator_username_pwd(e->ctx, user,
						     secret ? secret : "")) {
		snprintf(err, errlen, "CHAP setup: %s", iscsi_get_error(e->ctx));
		goto fail;
	}
	if (o->mutual_user) {
		if (!user) {
			snprintf(err, errlen,
				 "mutual CHAP needs initiator CHAP credentials");
			goto fail;
		}
		if (iscsi_set_target_username_pwd(e->ctx, o->mutual_user,
				o->mutual_secret ? o->mutual_secret : "")) {
			snprintf(err, errlen, "mutual CHAP setup: %s",
				 iscsi_get_error(e->ctx));
			goto fail;
		}
	}
	if (iscsi_full_connect_sync(e->ctx, url->portal, url->lun)) {
		snprintf(err, errlen, "login to %s failed: %s", target,
			 iscsi_get_error(e->ctx));
		goto fail;
	}
	if (lis_read_capacity(e, err, errlen))
		goto fail;
	e->slots = calloc(depth, sizeof(*e->slots));
	if (!e->slots) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < depth; i++) {
		e->slots[i].e = e;
		e->slots[i].next_free = i + 1 < depth ? &e->slots[i + 1] : NULL;
	}
	e->free_slots = e->slots;
	e->up = true;
	iscsi_destroy_url(url);
	return e;
fail:
	if (url)
		iscsi_destroy_url(url);
	lis_close(e);
	return NULL;
}

static uint32_t lis_block_size(struct engine *e)
{
	return e->block_size;
}

static uint64_t lis_nblocks(struct engine *e)
{
	return e->nblocks;
}

static void lis_cb(struct iscsi_context *ctx, int status, void *data,
		   void *priv)
{
	struct libiscsi_slot *s = priv;
	struct scsi_task *t = data;
	struct bench_io *io = s->io;
	struct engine *e = s->e;

	io->t_done_ns = lis_now_ns();
	io->seq = e->seq++;
	io->sense_key = io->asc = io->ascq = 0;
	switch (status) {
	case SCSI_STATUS_GOOD:
		io->status = 0;
		break;
	case SCSI_STATUS_CHECK_CONDITION:
		io->status = status;
		if (t) {
			io->sense_key = (uint8_t)t->sense.key;
			io->asc = (uint8_t)(t->sense.ascq >> 8);
			io->ascq = (uint8_t)t->sense.ascq;
		}
		break;
	case SCSI_STATUS_CANCELLED:
		io->status = -ECANCELED;
		break;
	case SCSI_STATUS_TIMEOUT:
		io->status = -ETIMEDOUT;
		break;
	case SCSI_STATUS_ERROR:
		io->status = -EIO;
		break;
	default:
		io->status = status;	/* BUSY, TASK SET FULL, ... */
		break;
	}
	if (t)
		scsi_free_scsi_task(t);
	s->io = NULL;
	s->next_free = e->free_slots;
	e->free_slots = s;
	e->inflight--;
	io->done(io);
}

/* The task of a command of the mixes (bench_io.cmd), or of the whole-LUN
 * SYNCHRONIZE CACHE(10) of .sync; data, if any, from s->iov. */
static struct scsi_task *lis_cmd_task(struct engine *e,
				      struct libiscsi_slot *s,
				      struct bench_io *io)
{
	struct unmap_list u = { .lba = io->lba, .num = io->blocks };
	uint32_t len = io->blocks * e->block_size;

	switch (io->cmd) {
	case BENCH_CMD_RW:	/* .sync */
		return iscsi_synchronizecache10_task(e->ctx, e->lun, 0, 0, 0,
						     0, lis_cb, s);
	case BENCH_CMD_SYNC16:
		return iscsi_synchronizecache16_task(e->ctx, e->lun, 0, 0, 0,
						     0, lis_cb, s);
	case BENCH_CMD_UNMAP:	/* libiscsi builds the parameter list */
		return iscsi_unmap_task(e->ctx, e->lun, 0, 0, &u, 1, lis_cb, s);
	case BENCH_CMD_WS:
	case BENCH_CMD_WS_UNMAP:
		/* one block, repeated (the _iov call sends none when its
		 * data pointer is NULL) */
		return iscsi_writesame16_task(e->ctx, e->lun, io->lba, io->buf,
					      e->block_size, io->blocks, 0,
					      io->cmd == BENCH_CMD_WS_UNMAP, 0,
					      0, lis_cb, s);
	case BENCH_CMD_CAW:	/* verify blocks, then write blocks */
		s->iov.iov_len = 2 * len;
		return iscsi_compareandwrite_iov_task(e->ctx, e->lun, io->lba,
						      NULL, 2 * len,
						      (int)e->block_size, 0, 0,
						      0, 0, 0, lis_cb, s,
						      &s->iov, 1);
	}
	return NULL;
}

static int lis_submit(struct engine *e, struct bench_io *io)
{
	struct libiscsi_slot *s = e->free_slots;
	struct scsi_task *t;
	uint32_t len = io->blocks * e->block_size;
	bool nodata = io->sync || io->cmd == BENCH_CMD_SYNC16;

	if (!s)
		return -EAGAIN;
	if (!nodata && (io->blocks == 0 || io->lba + io->blocks > e->nblocks))
		return -EINVAL;
	if (io->cmd == BENCH_CMD_CAW && io->blocks > 255)
		return -EINVAL;
	s->io = io;
	s->iov.iov_base = io->buf;
	s->iov.iov_len = len;
	io->t_submit_ns = lis_now_ns();
	if (io->sync || io->cmd != BENCH_CMD_RW)
		t = lis_cmd_task(e, s, io);
	else if (io->write)
		t = iscsi_write16_iov_task(e->ctx, e->lun, io->lba, NULL, len,
					   (int)e->block_size, 0, 0, io->fua,
					   0, 0, lis_cb, s, &s->iov, 1);
	else
		t = iscsi_read16_iov_task(e->ctx, e->lun, io->lba, len,
					  (int)e->block_size, 0, 0, 0, 0, 0,
					  lis_cb, s, &s->iov, 1);
	if (!t) {
		s->io = NULL;
		return -ENOMEM;
	}
	e->free_slots = s->next_free;
	e->inflight++;
	return 0;
}

static int lis_get_fd(struct engine *e)
{
	return iscsi_get_fd(e->ctx);
}

static short lis_events(struct engine *e)
{
	return (short)iscsi_which_events(e->ctx);
}

/* After iscsi_service(): a lost or a new login of libiscsi's own. */
static void lis_watch_login(struct engine *e)
{
	bool up = iscsi_is_logged_in(e->ctx);

	if (up == e->up)
		return;
	e->up = up;
	if (!up) {
		e->down_ns = lis_now_ns();
		return;
	}
	e->relogins++;
	e->outage_s += (double)(lis_now_ns() - e->down_ns) / 1e9;
}

static int lis_service(struct engine *e, short revents)
{
	int rc = iscsi_service(e->ctx, revents);

	lis_watch_login(e);
	if (rc < 0) {
		/* The session is gone: fail what is still in flight (the
		 * callbacks run with SCSI_STATUS_CANCELLED). */
		iscsi_scsi_cancel_all_tasks(e->ctx);
		return -EIO;
	}
	return 0;
}

static unsigned lis_relogged(struct engine *e, double *outage_s)
{
	unsigned n = e->relogins;

	*outage_s = e->outage_s;
	e->relogins = 0;
	e->outage_s = 0;
	return n;
}

static bool lis_supports_attr(struct engine *e)
{
	return false;
}

static bool lis_supports_barriers(struct engine *e)
{
	return true;
}

/* libiscsi has a call for each but EXTENDED COPY, whose parameter list
 * it leaves to the caller (and which needs the LUN's designator). */
static bool lis_supports_cmd(struct engine *e, int cmd)
{
	return cmd != BENCH_CMD_XCOPY;
}

const struct engine_ops engine_libiscsi = {
	.name = "libiscsi",
	.open = lis_open,
	.close = lis_close,
	.block_size = lis_block_size,
	.nblocks = lis_nblocks,
	.submit = lis_submit,
	.get_fd = lis_get_fd,
	.events = lis_events,
	.service = lis_service,
	.supports_attr = lis_supports_attr,
	.supports_barriers = lis_supports_barriers,
	.supports_cmd = lis_supports_cmd,
	.relogged = lis_relogged,
};
