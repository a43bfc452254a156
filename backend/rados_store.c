/*
 * A LUN store (backend/lun_store.h) in RADOS, next to an rbd image.
 *
 * One object per image, "tcq.lun.IMAGE" in the image's pool, on the rbd
 * backend's cluster connection (its own I/O context, used only by the
 * store's worker thread). The object's data is an 8-byte big-endian
 * version followed by the blob; its xattr "tcq.ver" holds the same
 * version as text. A compare-and-set is ONE write op: cmpxattr(tcq.ver ==
 * old) + write_full + setxattr(tcq.ver = old + 1), which RADOS applies
 * atomically or not at all (-ECANCELED when the version moved). The
 * object is created (exclusively, version 0) when the store opens, so
 * that gateways can watch it from the start.
 *
 * Messages: rados_notify2 on the object, watched by every gateway with
 * rados_watch2; the watch callback hands the message to the owner, then
 * acknowledges it. A watch error (the OSD lost us) re-watches from the
 * worker thread and asks the owner to reload, since messages may have
 * been missed meanwhile.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/lun_store.h"

#ifndef HAVE_LIBRBD

struct lun_store *rados_store_open(struct bdev *b, char *err, size_t errlen)
{
	snprintf(err, errlen, "shared state: tcq was built without librados");
	return NULL;
}

#else

#include <rados/librados.h>
#include "tcq/byteorder.h"
#include "tcq/log.h"

#define XATTR "tcq.ver"
#define HDR 8

struct rados_store {
	struct lun_store *s;
	rados_t cluster;	/* the rbd backend's; not ours to shut down */
	rados_ioctx_t io;
	char oid[300];
	uint64_t cookie;
	bool watching;
	bool rewatch_queued;	/* guarded by s->lock */
	uint8_t *rbuf;		/* HDR + LUN_STORE_BLOB_MAX, worker only */
	uint8_t *wbuf;
};

static int rs_load(struct lun_store *s, void *buf, size_t cap, size_t *len,
		   uint64_t *version)
{
	struct rados_store *rs = s->priv;
	size_t want = HDR + LUN_STORE_BLOB_MAX;
	int n = rados_read(rs->io, rs->oid, (char *)rs->rbuf, want, 0);

	*len = 0;
	*version = 0;
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return n;
	if ((size_t)n < HDR)
		return 0;	/* created, never written */
	if ((size_t)n == want || (size_t)n - HDR > cap)
		return -EFBIG;
	*version = get_be64(rs->rbuf);
	*len = (size_t)n - HDR;
	memcpy(buf, rs->rbuf + HDR, *len);
	return 0;
}

static int rs_cas(struct lun_store *s, uint64_t version, const void *buf,
		  size_t len)
{
	struct rados_store *rs = s->priv;
	char oldv[24], newv[24];
	rados_write_op_t op;
	int rc;

	if (len > LUN_STORE_BLOB_MAX)
		return -EFBIG;
	snprintf(oldv, sizeof(oldv), "%" PRIu64, version);
	snprintf(newv, sizeof(newv), "%" PRIu64, version + 1);
	put_be64(rs->wbuf, version + 1);
	memcpy(rs->wbuf + HDR, buf, len);
	op = rados_create_write_op();
	if (!op)
		return -ENOMEM;
	rados_write_op_cmpxattr(op, XATTR, LIBRADOS_CMPXATTR_OP_EQ, oldv,
				strlen(oldv));
	rados_write_op_write_full(op, (const char *)rs->wbuf, HDR + len);
	rados_write_op_setxattr(op, XATTR, newv, strlen(newv));
	rc = rados_write_op_operate(op, rs->io, rs->oid, NULL, 0);
	rados_release_write_op(op);
	if (rc == -ECANCELED || rc == -ENODATA)
		return LUN_STORE_CONFLICT;
	return rc;
}

static int rs_notify(struct lun_store *s, const void *msg, size_t len,
		     unsigned timeout_ms)
{
	struct rados_store *rs = s->priv;
	char *reply = NULL;
	size_t rlen = 0;
	int rc;

	if (len > (size_t)INT32_MAX)
		return -EFBIG;
	rc = rados_notify2(rs->io, rs->oid, msg, (int)len, timeout_ms,
			   &reply, &rlen);
	if (reply)
		rados_buffer_free(reply);
	return rc;
}

static void rs_watch_cb(void *arg, uint64_t notify_id, uint64_t handle,
			uint64_t notifier_id, void *data, size_t data_len)
{
	struct rados_store *rs = arg;
	struct lun_store *s = rs->s;
	void (*fn)(void *, const void *, size_t) =
		__atomic_load_n(&s->on_msg, __ATOMIC_ACQUIRE);

	if (fn && data && data_len)
		fn(s->arg, data, data_len);
	/* After applying it: the sender answers its command only then. */
	rados_notify_ack(rs->io, rs->oid, notify_id, handle, NULL, 0);
}

static int rs_watch(struct rados_store *rs);

static void rs_rewatch_job(struct lun_store_job *j)
{
	struct rados_store *rs = j->arg;
	struct lun_store *s = rs->s;
	int rc;

	free(j);
	pthread_mutex_lock(&s->lock);
	rs->rewatch_queued = false;
	pthread_mutex_unlock(&s->lock);
	if (rs->watching) {
		rados_unwatch2(rs->io, rs->cookie);
		rs->watching = false;
	}
	rc = rs_watch(rs);
	if (rc < 0)
		log_err("%s: re-watch failed (%s): other gateways' changes "
			"are seen at the next reservation command", s->name,
			strerror(-rc));
	else
		log_info("%s: watch re-established", s->name);
	if (s->on_reload)
		s->on_reload(s->arg);
}

static void rs_watch_err(void *arg, uint64_t cookie, int err)
{
	struct rados_store *rs = arg;
	struct lun_store *s = rs->s;
	struct lun_store_job *j;
	bool queue;

	log_warn("%s: watch lost (%s)", s->name, strerror(-err));
	pthread_mutex_lock(&s->lock);
	queue = !rs->rewatch_queued && !s->stop;
	rs->rewatch_queued = true;
	pthread_mutex_unlock(&s->lock);
	if (!queue || !(j = calloc(1, sizeof(*j))))
		return;
	j->fn = rs_rewatch_job;
	j->arg = rs;
	lun_store_queue(s, j);
}

static int rs_watch(struct rados_store *rs)
{
	int rc = rados_watch2(rs->io, rs->oid, &rs->cookie, rs_watch_cb,
			      rs_watch_err, rs);

	rs->watching = rc == 0;
	return rc;
}

static void rs_close(struct lun_store *s)
{
	struct rados_store *rs = s->priv;

	if (!rs)
		return;
	if (rs->watching)
		rados_unwatch2(rs->io, rs->cookie);
	/* No callback may run into a freed store past this point. */
	rados_watch_flush(rs->cluster);
	if (rs->io)
		rados_ioctx_destroy(rs->io);
	free(rs->rbuf);
	free(rs->wbuf);
	free(rs);
	s->priv = NULL;
}

static const struct lun_store_ops rs_ops = {
	.load = rs_load,
	.cas = rs_cas,
	.notify = rs_notify,
	.close = rs_close,
};

/* The object exists from the start (version 0), so it can be watched. */
static int rs_create(struct rados_store *rs)
{
	uint8_t hdr[HDR] = { 0 };
	rados_write_op_t op = rados_create_write_op();
	int rc;

	if (!op)
		return -ENOMEM;
	rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, NULL);
	rados_write_op_write_full(op, (const char *)hdr, HDR);
	rados_write_op_setxattr(op, XATTR, "0", 1);
	rc = rados_write_op_operate(op, rs->io, rs->oid, NULL, 0);
	rados_release_write_op(op);
	return rc == -EEXIST ? 0 : rc;
}

struct lun_store *rados_store_open(struct bdev *b, char *err, size_t errlen)
{
	struct rados_store *rs = NULL;
	struct lun_store *s = NULL;
	const char *name, *slash;
	char pool[256];
	void *cluster;
	int rc;

	if (bdev_rbd_cluster(b, &cluster, &name) < 0) {
		snprintf(err, errlen, "shared state needs the rbd backend");
		return NULL;
	}
	slash = strchr(name, '/');
	if (!slash || (size_t)(slash - name) >= sizeof(pool)) {
		snprintf(err, errlen, "shared state: bad image name %s", name);
		return NULL;
	}
	memcpy(pool, name, (size_t)(slash - name));
	pool[slash - name] = 0;
	s = calloc(1, sizeof(*s));
	rs = calloc(1, sizeof(*rs));
	if (!s || !rs || !(rs->rbuf = malloc(HDR + LUN_STORE_BLOB_MAX)) ||
	    !(rs->wbuf = malloc(HDR + LUN_STORE_BLOB_MAX))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	rs->s = s;
	rs->cluster = cluster;
	snprintf(rs->oid, sizeof(rs->oid), "tcq.lun.%s", slash + 1);
	lun_store_init(s, &rs_ops, rs, NULL);
	snprintf(s->name, sizeof(s->name), "rbd %s", name);
	rc = rados_ioctx_create(cluster, pool, &rs->io);
	if (rc < 0) {
		rs->io = NULL;
		snprintf(err, errlen, "shared state: pool %s: %s", pool,
			 strerror(-rc));
		goto fail;
	}
	rc = rs_create(rs);
	if (rc == 0)
		rc = rs_watch(rs);
	if (rc < 0) {
		snprintf(err, errlen, "shared state: %s/%s: %s", pool, rs->oid,
			 strerror(-rc));
		goto fail;
	}
	return s;
fail:
	if (rs && s && s->priv) {
		lun_store_close(s);	/* frees rs too */
		return NULL;
	}
	if (rs) {
		free(rs->rbuf);
		free(rs->wbuf);
	}
	free(rs);
	free(s);
	return NULL;
}

#endif /* HAVE_LIBRBD */
