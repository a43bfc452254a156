/*
 * engine_native: tcq-bench's own iSCSI initiator (initiator/native_*.c).
 * open() connects, logs in and reads the capacity synchronously; after
 * that everything is non-blocking and driven by the worker's poll().
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include "initiator/engine.h"
#include "initiator/native_sess.h"
#include "tcq/byteorder.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"

#define NATIVE_DEFAULT_INITIATOR "iqn.2026-11.org.tcq:tcq-bench"
#define NATIVE_DEFAULT_ALGS "SHA3-256,SHA-256,SHA-1,MD5"
#define NATIVE_TIMEOUT_MS 10000
#define LOGOUT_TIMEOUT_MS 2000

static int connect_to(const struct native_url *u, char *err, size_t errlen)
{
	struct addrinfo hints, *res, *ai;
	char port[8];
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", u->port);
	rc = getaddrinfo(u->host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve %s: %s", u->host,
			 gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int one = 1, soerr = 0;
		socklen_t sl = sizeof(soerr);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 &&
		    errno != EINPROGRESS) {
			soerr = errno;
		} else {
			pfd.fd = fd;
			pfd.events = POLLOUT;
			rc = poll(&pfd, 1, NATIVE_TIMEOUT_MS);
			if (rc <= 0)
				soerr = rc == 0 ? ETIMEDOUT : errno;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
				soerr = errno;
		}
		if (!soerr)
			break;
		snprintf(err, errlen, "connect to %s:%u: %s", u->host, u->port,
			 strerror(soerr));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Runs the engine until the probe completes (open only). */
static int wait_sync(struct engine *e)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!e->sync_done) {
		struct pollfd pfd = { .fd = e->fd,
			.events = (short)(POLLIN | (native_sess_want_tx(e) ? POLLOUT : 0)) };
		int rc = poll(&pfd, 1, 100);

		if (rc < 0 && errno != EINTR)
			return -errno;
		if (native_sess_rx(e) || native_sess_tx(e))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > NATIVE_TIMEOUT_MS / 1000)
			return -ETIMEDOUT;
	}
	return e->sync_done ? 0 : e->failed;
}

static void sync_complete(struct bench_io *io)
{
	((struct engine *)io->ctx)->sync_done = true;
}

/* Sends one CDB reading len bytes into e->sync_buf and waits; returns the
 * SCSI status or -errno. */
static int sync_cmd(struct engine *e, const uint8_t *cdb, uint32_t len)
{
	struct bench_io *io = &e->sync_io;
	int rc;

	memset(io, 0, sizeof(*io));
	memset(e->sync_buf, 0, sizeof(e->sync_buf));
	io->buf = e->sync_buf;
	io->attr = BENCH_ATTR_SIMPLE;
	io->done = sync_complete;
	io->ctx = e;
	e->sync_done = false;
	rc = native_sess_submit_cdb(e, io, cdb, len, len != 0, false);
	if (rc)
		return rc;
	rc = wait_sync(e);
	return rc ? rc : io->status;
}

static int read_capacity(struct engine *e, char *err, size_t errlen)
{
	const struct bench_io *io = &e->sync_io;
	const uint8_t *buf = e->sync_buf;
	uint8_t cdb[16];
	int st = -EIO;

	/* A fresh I_T nexus may first see a unit attention: retry. */
	for (int tries = 0; tries < 5; tries++) {
		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x9e;		/* SERVICE ACTION IN(16) */
		cdb[1] = 0x10;		/* READ CAPACITY(16) */
		put_be32(cdb + 10, 32);
		st = sync_cmd(e, cdb, 32);
		if (st == 0) {
			e->nblocks = get_be64(buf) + 1;
			e->block_size = get_be32(buf + 8);
			break;
		}
		if (st > 0 && io->sense_key == 0x05) {
			/* Not supported: READ CAPACITY(10). */
			memset(cdb, 0, sizeof(cdb));
			cdb[0] = 0x25;
			st = sync_cmd(e, cdb, 8);
			if (st == 0) {
				e->nblocks = (uint64_t)get_be32(buf) + 1;
				e->block_size = get_be32(buf + 4);
				break;
			}
		}
		if (st < 0)
			break;
	}
	if (st < 0) {
		snprintf(err, errlen, "READ CAPACITY failed: %s", strerror(-st));
		return -1;
	}
	if (st > 0) {
		snprintf(err, errlen,
			 "READ CAPACITY failed: status 0x%02x sense %x/%02x/%02x",
			 st, io->sense_key, io->asc, io->ascq);
		return -1;
	}
	if (e->block_size < 512 || e->block_size > 65536 ||
	    (e->block_size & (e->block_size - 1))) {
		snprintf(err, errlen, "odd block size %u", e->block_size);
		return -1;
	}
	return 0;
}

/* The LUN's NAA designator from the Device Identification VPD page,
 * for EXTENDED COPY (native_cdb.c); a LUN without one cannot be copied
 * by it, which the run says when it asks (supports_cmd). */
static void read_designator(struct engine *e)
{
	uint8_t cdb[16];
	uint32_t len = 4;	/* the header first: a short read fails */

	for (int pass = 0; pass < 2; pass++) {
		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x12;			/* INQUIRY */
		cdb[1] = 0x01;			/* EVPD */
		cdb[2] = 0x83;			/* Device Identification */
		put_be16(cdb + 3, (uint16_t)len);
		if (sync_cmd(e, cdb, len) != 0)
			return;
		if (pass == 0) {
			len = 4 + get_be16(e->sync_buf + 2);
			if (len > sizeof(e->sync_buf))
				len = sizeof(e->sync_buf);
		}
	}
	e->have_naa = native_vpd83_naa(e->sync_buf, len, e->naa);
}

static void native_close(struct engine *e);

static struct engine *native_open(const char *target,
				  const struct engine_opts *o, char *err,
				  size_t errlen)
{
	struct native_login_result res;
	struct engine *e = calloc(1, sizeof(*e));
	struct native_login_cfg cfg;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->fd = -1;
	if (native_url_parse(target, &e->url, err, errlen))
		goto fail;

	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator_name = o->initiator_name ? o->initiator_name :
			     NATIVE_DEFAULT_INITIATOR;
	cfg.target_name = e->url.target;
	cfg.chap_user = o->chap_user ? o->chap_user : e->url.user;
	cfg.chap_secret = o->chap_secret ? o->chap_secret : e->url.secret;
	cfg.mutual_user = o->mutual_user;
	cfg.mutual_secret = o->mutual_secret;
	cfg.n_chap_algs = native_chap_parse_algs(
		o->chap_algs ? o->chap_algs : NATIVE_DEFAULT_ALGS,
		cfg.chap_algs, NATIVE_CHAP_MAX_ALGS);
	if (cfg.n_chap_algs <= 0) {
		snprintf(err, errlen, "bad CHAP algorithm list '%s' (use SHA3-256, SHA-256, SHA-1, MD5)",
			 o->chap_algs);
		goto fail;
	}
	native_offer_defaults(&cfg.offer);
	cfg.offer.header_digest = o->header_digest;
	cfg.offer.data_digest = o->data_digest;
	cfg.timeout_ms = NATIVE_TIMEOUT_MS;

	e->fd = connect_to(&e->url, err, errlen);
	if (e->fd < 0)
		goto fail;
	if (native_login(e->fd, &cfg, &res, err, errlen))
		goto fail;
	e->p = res.p;
	e->cmdsn = res.cmdsn;
	e->exp_statsn = res.exp_statsn;
	e->exp_cmdsn = res.exp_cmdsn;
	e->max_cmdsn = res.max_cmdsn;
	e->lun_raw = pdu_lun_encode(e->url.lun);
	/* kept for reconnect(): the strings are the caller's (options) or
	 * e->url's, which live as long as e */
	e->cfg = cfg;
	memcpy(e->isid, res.isid, sizeof(e->isid));
	e->depth = o->queue_depth;
	log_debug("native: logged in to %s (TSIH %u): HeaderDigest=%s DataDigest=%s MaxRecvDSL=%u/%u FirstBurst=%u MaxBurst=%u ImmediateData=%s InitialR2T=%s MaxOutstandingR2T=%u",
		 e->url.target, res.tsih,
		 e->p.header_digest ? "CRC32C" : "None",
		 e->p.data_digest ? "CRC32C" : "None",
		 e->p.max_recv_dsl, e->p.max_send_dsl, e->p.first_burst,
		 e->p.max_burst, e->p.immediate_data ? "Yes" : "No",
		 e->p.initial_r2t ? "Yes" : "No", e->p.max_outstanding_r2t);
	if (native_sess_init(e, o->queue_depth)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (read_capacity(e, err, errlen))
		goto fail;
	if (o->want_designator)
		read_designator(e);
	return e;
fail:
	native_close(e);
	return NULL;
}

static void native_close(struct engine *e)
{
	if (!e)
		return;
	if (e->fd >= 0 && e->cmds && !e->failed &&
	    !native_sess_logout(e)) {
		struct timespec t0, t1;

		/* Logout is immediate: it goes out even with a closed window. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!e->logged_out && !e->failed) {
			struct pollfd pfd = { .fd = e->fd,
				.events = (short)(POLLIN | (native_sess_want_tx(e) ? POLLOUT : 0)) };

			if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
				break;
			if (native_sess_tx(e) || native_sess_rx(e))
				break;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((t1.tv_sec - t0.tv_sec) * 1000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000000 > LOGOUT_TIMEOUT_MS)
				break;
		}
	}
	if (e->cmds) {
		if (!e->failed)
			e->failed = -ECANCELED;
		native_sess_abort_all(e, -ECANCELED);
	}
	if (e->fd >= 0)
		close(e->fd);
	native_sess_free(e);
	free(e);
}

/*
 * After a lost connection (e->failed, every command completed with an
 * error or its status): logs in again with the same ISID and TSIH 0, so
 * the target reinstates the session (RFC 7143 6.3.5: it ends what is left
 * of the old one, tasks included, before this login succeeds), and starts
 * a fresh command window. The capacity is the one read at open. Blocking
 * (connect and login, NATIVE_TIMEOUT_MS at most). Returns 0, or -1 with
 * err filled (e unchanged: call again later).
 */
static int native_reconnect(struct engine *e, char *err, size_t errlen)
{
	struct native_login_result res;
	struct engine keep;
	int fd;

	if (!e->failed || e->inflight) {
		snprintf(err, errlen, "session not lost, or commands in flight");
		return -1;
	}
	fd = connect_to(&e->url, err, errlen);
	if (fd < 0)
		return -1;
	e->cfg.isid = e->isid;
	e->cfg.target_name = e->url.target;
	if (native_login(fd, &e->cfg, &res, err, errlen)) {
		close(fd);
		return -1;
	}
	if (e->fd >= 0)
		close(e->fd);
	native_sess_free(e);
	/* Everything but what identifies the session and the LUN starts
	 * over (e's address stays, so cfg's pointers into e->url hold). */
	keep = *e;
	memset(e, 0, sizeof(*e));
	e->url = keep.url;
	e->lun_raw = keep.lun_raw;
	e->block_size = keep.block_size;
	e->nblocks = keep.nblocks;
	memcpy(e->naa, keep.naa, sizeof(e->naa));
	e->have_naa = keep.have_naa;
	e->cfg = keep.cfg;
	memcpy(e->isid, keep.isid, sizeof(e->isid));
	e->depth = keep.depth;
	e->fd = fd;
	e->p = res.p;
	e->cmdsn = res.cmdsn;
	e->exp_statsn = res.exp_statsn;
	e->exp_cmdsn = res.exp_cmdsn;
	e->max_cmdsn = res.max_cmdsn;
	log_debug("native: logged in again to %s (TSIH %u, same ISID)",
		  e->url.target, res.tsih);
	if (native_sess_init(e, e->depth)) {
		native_sess_free(e);
		e->failed = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static uint32_t native_block_size(struct engine *e)
{
	return e->block_size;
}

static uint64_t native_nblocks(struct engine *e)
{
	return e->nblocks;
}

static int native_submit(struct engine *e, struct bench_io *io)
{
	uint8_t cdb[16];
	uint64_t bytes = (uint64_t)io->blocks * e->block_size;
	int rc;

	memset(cdb, 0, sizeof(cdb));
	if (io->cmd != BENCH_CMD_RW) {
		uint32_t edtl;

		rc = native_cdb_build(e, io, cdb, &edtl);
		if (rc)
			return rc;
		rc = native_sess_submit_cdb(e, io, cdb, edtl, false, edtl != 0);
		goto sent;
	}
	if (io->sync) {
		cdb[0] = 0x35;	/* SYNCHRONIZE CACHE(10): the whole LUN */
		rc = native_sess_submit_cdb(e, io, cdb, 0, false, false);
		goto sent;
	}
	if (!io->blocks || bytes > UINT32_MAX)
		return -EINVAL;
	if (io->lba + io->blocks > e->nblocks || io->lba + io->blocks < io->lba)
		return -EINVAL;
	if (io->lba <= UINT32_MAX && io->blocks <= 0xffff) {
		cdb[0] = io->write ? 0x2a : 0x28;	/* WRITE(10) / READ(10) */
		put_be32(cdb + 2, (uint32_t)io->lba);
		put_be16(cdb + 7, (uint16_t)io->blocks);
	} else {
		cdb[0] = io->write ? 0x8a : 0x88;	/* WRITE(16) / READ(16) */
		put_be64(cdb + 2, io->lba);
		put_be32(cdb + 10, io->blocks);
	}
	if (io->write && io->fua)
		cdb[1] |= 0x08;		/* FUA */
	rc = native_sess_submit_cdb(e, io, cdb, (uint32_t)bytes, !io->write,
				    io->write);
sent:
	/* An idle session sends at once (saves a poll round at depth 1);
	 * otherwise PDUs wait for service() and leave in one batch. */
	if (!rc && e->inflight == 1 && !e->in_service)
		native_sess_tx(e);
	return rc;
}

static int native_get_fd(struct engine *e)
{
	return e->fd;
}

static short native_events(struct engine *e)
{
	if (e->failed)
		return POLLIN;
	/* Called right before the worker blocks: commands queued since the
	 * last service() (a refill) leave now rather than after a POLLOUT
	 * round, which at depth would cost a wake-up per wave. */
	if (native_sess_want_tx(e))
		native_sess_tx(e);
	if (e->failed)
		return POLLIN | POLLOUT;	/* service() reports it at once */
	return (short)(POLLIN | (native_sess_want_tx(e) ? POLLOUT : 0));
}

static int native_service(struct engine *e, short revents)
{
	if (e->failed)
		return e->failed;
	e->in_service = true;
	if (revents & (POLLIN | POLLERR | POLLHUP))
		native_sess_rx(e);
	native_sess_tx(e);
	e->in_service = false;
	return e->failed;
}

static bool native_supports_attr(struct engine *e)
{
	return true;
}

static bool native_supports_barriers(struct engine *e)
{
	return true;
}

static bool native_supports_cmd(struct engine *e, int cmd)
{
	/* EXTENDED COPY names the LUN by its NAA designator */
	return cmd != BENCH_CMD_XCOPY || e->have_naa;
}

const struct engine_ops engine_native = {
	.name = "native",
	.open = native_open,
	.close = native_close,
	.block_size = native_block_size,
	.nblocks = native_nblocks,
	.submit = native_submit,
	.get_fd = native_get_fd,
	.events = native_events,
	.service = native_service,
	.supports_attr = native_supports_attr,
	.supports_barriers = native_supports_barriers,
	.supports_cmd = native_supports_cmd,
	.reconnect = native_reconnect,
};
