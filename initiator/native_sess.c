/*
 * Session state of the native initiator: command slots, the pending queue
 * (commands waiting for the CmdSN window), completion and failure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "initiator/native_sess.h"
#include "tcq/log.h"

/* Room for a full PDU of max_recv_dsl with the largest AHS and digests,
 * plus slack so many small PDUs arrive per read. */
#define RX_SLACK (64 * 1024)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int native_sess_init(struct engine *e, uint32_t depth)
{
	if (depth == 0)
		depth = 1;
	if (depth > NATIVE_MAX_DEPTH)
		depth = NATIVE_MAX_DEPTH;
	e->ncmds = depth;
	e->cmds = calloc(depth, sizeof(*e->cmds));
	e->tx_cap = 2 * depth + 64;
	e->tx = calloc(e->tx_cap, sizeof(*e->tx));
	e->rx_cap = e->p.max_recv_dsl + RX_SLACK;
	e->rx = malloc(e->rx_cap);
	if (!e->cmds || !e->tx || !e->rx)
		return -ENOMEM;
	for (uint32_t i = 0; i < depth; i++) {
		e->cmds[i].next = i + 1 < depth ? (int32_t)i + 1 : -1;
		/* Generation starts at 1 so no ITT is ever 0 by accident. */
		e->cmds[i].itt = i | 1u << 16;
	}
	e->free_head = 0;
	e->pend_head = e->pend_tail = -1;
	e->rx_phase = RX_HDR;
	return 0;
}

void native_sess_free(struct engine *e)
{
	for (uint32_t i = 0; i < e->tx_count; i++)
		free(e->tx[(e->tx_head + i) % e->tx_cap].owned);
	free(e->cmds);
	free(e->tx);
	free(e->rx);
	e->cmds = NULL;
	e->tx = NULL;
	e->rx = NULL;
}

int native_sess_submit_cdb(struct engine *e, struct bench_io *io,
			   const uint8_t *cdb, uint32_t edtl, bool read,
			   bool write)
{
	struct native_cmd *c;
	int32_t idx;

	if (e->failed)
		return e->failed;
	idx = e->free_head;
	if (idx < 0)
		return -EBUSY;
	c = &e->cmds[idx];
	e->free_head = c->next;
	c->io = io;
	c->edtl = edtl;
	memcpy(c->cdb, cdb, 16);
	c->read = read;
	c->write = write;
	c->attr = io->attr ? io->attr : ISCSI_ATTR_SIMPLE;
	c->busy = true;
	c->done_pending = false;
	c->next_datasn = 0;
	c->received = 0;
	c->tx_refs = 0;
	for (int i = 0; i <= NATIVE_MAX_R2T; i++) {
		c->streams[i].active = false;
		c->streams[i].cmd = c;
	}
	c->next = -1;
	if (e->pend_tail >= 0)
		e->cmds[e->pend_tail].next = idx;
	else
		e->pend_head = idx;
	e->pend_tail = idx;
	e->inflight++;
	io->status = 0;
	io->sense_key = io->asc = io->ascq = 0;
	io->t_submit_ns = mono_ns();
	return 0;
}

/* Drops the command's Data-Out streams that have not been sent. */
static void streams_drop(struct engine *e, struct native_cmd *c)
{
	struct native_stream **pp = &e->st_head, *last = NULL;

	while (*pp) {
		if ((*pp)->cmd == c) {
			(*pp)->active = false;
			*pp = (*pp)->next;
		} else {
			last = *pp;
			pp = &(*pp)->next;
		}
	}
	e->st_tail = last;
}

void native_stream_push(struct engine *e, struct native_stream *s)
{
	s->active = true;
	s->next = NULL;
	if (e->st_tail)
		e->st_tail->next = s;
	else
		e->st_head = s;
	e->st_tail = s;
}

/* Returns the slot to the free list and reports the I/O. */
void native_cmd_release(struct engine *e, struct native_cmd *c)
{
	struct bench_io *io = c->io;
	int32_t idx = (int32_t)(c - e->cmds);

	c->busy = false;
	c->done_pending = false;
	c->io = NULL;
	/* A new generation so late PDUs for the old ITT are caught. */
	c->itt = (uint32_t)idx | ((((c->itt >> 16) + 1) & 0x7fff) | 1) << 16;
	c->next = e->free_head;
	e->free_head = idx;
	e->inflight--;
	io->t_done_ns = mono_ns();
	if (io->done)
		io->done(io);
}

void native_cmd_complete(struct engine *e, struct native_cmd *c, int status,
			 uint32_t statsn)
{
	c->io->status = status;
	c->io->seq = statsn;
	streams_drop(e, c);
	if (c->tx_refs)
		c->done_pending = true;	/* payload still queued for send */
	else
		native_cmd_release(e, c);
}

/* Takes a pending (never sent) command off the pending FIFO. */
struct native_cmd *native_pend_pop(struct engine *e)
{
	struct native_cmd *c;

	if (e->pend_head < 0)
		return NULL;
	c = &e->cmds[e->pend_head];
	e->pend_head = c->next;
	if (e->pend_head < 0)
		e->pend_tail = -1;
	return c;
}

void native_sess_abort_all(struct engine *e, int err)
{
	struct native_cmd *c;

	/* Queued PDUs no longer matter: drop their references. */
	for (uint32_t i = 0; i < e->tx_count; i++) {
		struct native_txpdu *t = &e->tx[(e->tx_head + i) % e->tx_cap];

		free(t->owned);
		t->owned = NULL;
		if (t->cmd)
			t->cmd->tx_refs--;
	}
	e->tx_count = 0;
	e->tx_off = 0;
	e->st_head = e->st_tail = NULL;
	e->pend_head = e->pend_tail = -1;
	for (uint32_t i = 0; i < e->ncmds; i++) {
		c = &e->cmds[i];
		if (!c->busy)
			continue;
		if (!c->done_pending) {
			c->io->status = err;
			c->io->seq = 0;
		}
		c->tx_refs = 0;
		native_cmd_release(e, c);
	}
}

void native_sess_fail(struct engine *e, int err)
{
	if (e->failed)
		return;
	e->failed = err;
	log_err("native: connection to %s:%u failed: %s", e->url.host,
		e->url.port, strerror(-err));
	native_sess_abort_all(e, err);
}
