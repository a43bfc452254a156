/*
 * A connection's send queue (conn.h): PDUs queue on tx.queue with their
 * digests and padding, and leave in one sendmsg() per reactor pass
 * (tx.flush), payload referenced, not copied, for Data-In; while the disks
 * are short of work a long queue goes out in slices, one per pass
 * (TX_SLICE).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "tcq/compiler.h"
#include "tcq/crc32c.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/conn_priv.h"
#include "target/session.h"

#define TX_IOV_MAX 256	/* one sendmsg carries a wave of 4K Data-In */
/* A sliced flush sends about TX_SLICE bytes (whole PDUs, at least one)
 * and yields to the next reactor pass, so that a command that arrived
 * meanwhile (the initiator answers the first status while the rest is
 * still queued) reaches the device before the rest of a wave of
 * completions is sent. It pays in two cases (conn_tx_slices):
 * - the session has at most TX_SLICE_FEW commands: the initiator's next
 *   command waits on this one's status, and a whole wave sent at once
 *   has it send its commands in bursts, with the device idle between;
 * - a command of this reactor waits on a device that has fewer than
 *   TX_SLICE_BUSY I/Os in flight: the next one is work it lacks.
 * Otherwise slicing costs more than it gains: each slice is a sendmsg, a
 * wake-up of the receiver and a pass that never sleeps. With the session's
 * reads served from read-ahead (no task I/O at the device) at 8 commands,
 * 128K reads took 125 us of tcqd CPU each sliced against 50 us whole
 * (docs/latency-path.md). A device that answers at once (null, ram: mean
 * service time under TX_SLICE_LAT_NS) never has a send sliced. */
#define TX_SLICE (128u << 10)
#define TX_SLICE_FEW 2
#define TX_SLICE_BUSY 8
#define TX_SLICE_LAT_NS 50000

bool conn_tx_slices(unsigned cmds_live, uint32_t io_inflight,
		    uint32_t io_task_inflight, int64_t io_lat_ns)
{
	if (io_lat_ns < TX_SLICE_LAT_NS)
		return false;
	return cmds_live <= TX_SLICE_FEW ||
	       (io_task_inflight > 0 && io_inflight < TX_SLICE_BUSY);
}

static struct txpdu *txpdu_get(struct conn *c)
{
	struct txpdu *t;

	if (!list_empty(&c->tx.spare)) {
		t = list_first_entry(&c->tx.spare, struct txpdu, node);
		list_del(&t->node);
	} else {
		t = malloc(sizeof(*t));
		if (!t)
			return NULL;
		list_init(&t->node);
	}
	t->data = NULL;
	t->data_len = 0;
	t->trailer_len = 0;
	t->own_data = false;
	t->cmd = NULL;
	t->last_of_cmd = false;
	return t;
}

static void txpdu_put(struct conn *c, struct txpdu *t)
{
	if (t->own_data)
		free((void *)t->data);
	t->own_data = false;
	list_add_head(&t->node, &c->tx.spare);
}

void conn_tx_drop_queue(struct conn *c)
{
	while (!list_empty(&c->tx.queue)) {
		struct txpdu *t = list_first_entry(&c->tx.queue, struct txpdu,
						   node);
		list_del(&t->node);
		if (t->cmd && !t->last_of_cmd)
			sess_cmd_din_gone(t->cmd, false);
		txpdu_put(c, t);
	}
	c->tx.head_sent = 0;
}

void conn_tx_free(struct conn *c)
{
	conn_tx_drop_queue(c);
	while (!list_empty(&c->tx.spare)) {
		struct txpdu *t = list_first_entry(&c->tx.spare, struct txpdu,
						   node);
		list_del(&t->node);
		free(t);
	}
}

/* Completes a PDU's framing (digests, padding) and queues it. */
void conn_queue_txpdu(struct conn *c, struct txpdu *t)
{
	uint32_t pad = pdu_pad(t->data_len);

	pdu_set_data_len(t->bhs, t->data_len);
	/* Framing is fixed at queueing: the final Login Response goes out
	 * without digests even though they apply to everything after it. */
	t->hdigest_len = 0;
	if (c->params.header_digest) {
		uint32_t d = crc32c(t->bhs, ISCSI_BHS_LEN);
		memcpy(t->hdigest, &d, 4);
		t->hdigest_len = 4;
	}
	memset(t->trailer, 0, sizeof(t->trailer));
	t->trailer_len = (uint8_t)pad;
	if (t->data_len && c->params.data_digest) {
		uint32_t crc = crc32c_update(0xffffffffu, t->data, t->data_len);
		uint32_t d;

		crc = crc32c_update(crc, t->trailer, pad);
		d = ~crc;
		memcpy(t->trailer + pad, &d, 4);
		t->trailer_len += 4;
	}
	list_add_tail(&t->node, &c->tx.queue);
	if (!c->tx.blocked)
		reactor_defer(c->r, &c->tx.flush);
}

struct txpdu *conn_txpdu_alloc(struct conn *c)
{
	return txpdu_get(c);
}

int conn_send_pdu(struct conn *c, const uint8_t *bhs, const void *data,
		  uint32_t len)
{
	struct txpdu *t;

	if (c->state == CONN_CLOSING)
		return -1;
	t = txpdu_get(c);
	if (!t)
		return -1;
	memcpy(t->bhs, bhs, ISCSI_BHS_LEN);
	if (len) {
		void *copy = malloc(len);

		if (!copy) {
			txpdu_put(c, t);
			return -1;
		}
		memcpy(copy, data, len);
		t->data = copy;
		t->own_data = true;
		t->data_len = len;
	}
	conn_queue_txpdu(c, t);
	return 0;
}

uint32_t conn_next_statsn(struct conn *c)
{
	return c->statsn++;
}

void conn_send_reject(struct conn *c, const uint8_t *bad_bhs, uint8_t reason)
{
	conn_send_reject_sn(c, bad_bhs, reason, 0);
}

void conn_send_reject_sn(struct conn *c, const uint8_t *bad_bhs,
			 uint8_t reason, uint32_t datasn)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_reject rj = {
		.reason = reason,
		.data_len = ISCSI_BHS_LEN,
		.datasn = datasn,
	};

	rj.statsn = conn_next_statsn(c);
	rj.expcmdsn = sess_exp_cmdsn(c);
	rj.maxcmdsn = sess_max_cmdsn(c);
	pdu_encode_reject(bhs, &rj);
	log_warn("%s: reject %s PDU (ITT 0x%08x), reason 0x%02x",
		 c->peer_text, pdu_opcode_name(pdu_opcode(bad_bhs)),
		 pdu_itt(bad_bhs), reason);
	conn_send_pdu(c, bhs, bad_bhs, ISCSI_BHS_LEN);
}

_Static_assert(offsetof(struct txpdu, hdigest) ==
	       offsetof(struct txpdu, bhs) + ISCSI_BHS_LEN,
	       "header digest follows the BHS: one iovec covers both");

/* One sendmsg() over the queue, up to about limit bytes (whole PDUs, at
 * least one); retires sent PDUs and returns the bytes sent in *sent_out. */
static int conn_tx_once(struct conn *c, size_t limit, size_t *sent_out)
{
	struct iovec iov[TX_IOV_MAX];
	struct msghdr msg = { .msg_iov = iov };
	struct list_node *pos;
	int n = 0;
	uint32_t skip = c->tx.head_sent;
	size_t total = 0;
	ssize_t sent;

	*sent_out = 0;
	list_for_each(pos, &c->tx.queue) {
		struct txpdu *t = list_entry(pos, struct txpdu, node);
		struct iovec parts[3] = {
			{ t->bhs, ISCSI_BHS_LEN + t->hdigest_len },
			{ (void *)t->data, t->data_len },
			{ t->trailer, t->trailer_len },
		};

		if (n > TX_IOV_MAX - 3 || total >= limit)
			break;
		total += parts[0].iov_len + parts[1].iov_len + parts[2].iov_len;
		for (int i = 0; i < 3; i++) {
			if (!parts[i].iov_len)
				continue;
			if (skip >= parts[i].iov_len) {
				skip -= (uint32_t)parts[i].iov_len;
				continue;
			}
			iov[n].iov_base = (char *)parts[i].iov_base + skip;
			iov[n].iov_len = parts[i].iov_len - skip;
			skip = 0;
			n++;
		}
	}
	if (!n)
		return 0;
	msg.msg_iovlen = (size_t)n;
	sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (sent < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 1;
		if (errno == EINTR)
			return 2;
		return -1;
	}
	*sent_out = (size_t)sent;
	/* Retire whole PDUs covered by the bytes sent. */
	uint64_t left = (uint64_t)sent + c->tx.head_sent;
	while (!list_empty(&c->tx.queue)) {
		struct txpdu *t = list_first_entry(&c->tx.queue, struct txpdu,
						   node);
		uint64_t size = ISCSI_BHS_LEN + t->hdigest_len +
				t->data_len + t->trailer_len;

		if (left < size)
			break;
		left -= size;
		list_del(&t->node);
		if (t->cmd && t->last_of_cmd)
			sess_cmd_sent(t->cmd);
		else if (t->cmd)
			sess_cmd_din_gone(t->cmd, true);
		txpdu_put(c, t);
	}
	c->tx.head_sent = (uint32_t)left;
	return list_empty(&c->tx.queue) ? 0 : 2;
}

void conn_tx_last_try(struct conn *c)
{
	size_t sent;

	if (list_empty(&c->tx.queue))
		return;
	while (conn_tx_once(c, SIZE_MAX, &sent) == 2)
		;
}

void conn_tx_flush(struct reactor_defer *d)
{
	struct conn *c = d->arg;
	int rc;

	size_t budget = conn_tx_slices(sess_cmds_live(c), c->r->io_inflight,
				       c->r->io_task_inflight,
				       c->r->io_lat_ns) ? TX_SLICE : SIZE_MAX;
	size_t sent;

	if (c->state == CONN_CLOSING)
		return;
	do {
		rc = conn_tx_once(c, budget, &sent);
		budget -= MIN(budget, sent);
	} while (rc == 2 && budget);
	if (rc < 0) {
		conn_close(c, "send failed");
		return;
	}
	if (rc == 2) {
		/* Slice used up: the rest goes after the next epoll round. */
		reactor_defer_next(c->r, &c->tx.flush);
		if (c->tx.blocked) {
			c->tx.blocked = false;
			reactor_mod_fd(c->r, &c->rfd, EPOLLIN);
		}
		return;
	}
	if (rc == 1 && !c->tx.blocked) {
		c->tx.blocked = true;
		reactor_mod_fd(c->r, &c->rfd, EPOLLIN | EPOLLOUT);
	} else if (rc == 0 && c->tx.blocked) {
		c->tx.blocked = false;
		reactor_mod_fd(c->r, &c->rfd, EPOLLIN);
	}
	if (rc == 0 && c->state == CONN_LOGGED_OUT)
		conn_close(c, "logged out");
}
