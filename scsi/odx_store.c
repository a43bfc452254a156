/*
 * The ODX token registry and the results held for RECEIVE ROD TOKEN
 * INFORMATION (scsi/odx_priv.h). One table for the whole process, under
 * one lock: ODX commands take it, and so does a write to a LUN while
 * that LUN has live tokens (an atomic count on the LUN lets every other
 * write pass without it).
 *
 * A token is 512 bytes (SPC-4 ROD token): ROD TYPE, ROD TOKEN LENGTH
 * (01F8h), the copy manager's ROD token identifier (a counter that
 * starts at a random value: unique), the creator logical unit (an
 * identification CSCD descriptor with the LUN's NAA designator), the
 * number of bytes represented, the device type specific data (READ
 * CAPACITY (16) data after its first field), and 352 random bytes from
 * byte 160: a token is only honoured when all 512 bytes match the one
 * made, so it cannot be guessed or altered (TOKEN CORRUPT).
 */
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/odx_priv.h"
#include "scsi/opcodes.h"
#include "scsi/sense.h"
#include "scsi/task.h"

#define ODX_SLOTS 512		/* tokens held, live or dead */
#define ODX_HELD 256		/* results held */
#define ODX_RANDOM_AT 160	/* first byte of the random part */

enum { TK_FREE, TK_LIVE, TK_EXPIRED, TK_CANCELLED, TK_DELETED };

struct odx_token {
	uint8_t state;
	struct lun *lun;
	uint64_t id;		/* COPY MANAGER ROD TOKEN IDENTIFIER */
	uint64_t made;		/* creation order: the oldest dead goes */
	uint64_t last;		/* last use, seconds */
	uint32_t secs;		/* inactivity timeout */
	uint32_t bs;
	uint64_t blocks;
	unsigned n;
	struct odx_range r[ODX_MAX_RANGES];
	uint8_t bytes[ODX_TOKEN_LEN];
};

struct odx_held {
	struct lun *lun;	/* NULL: free */
	void *nexus;
	uint32_t list_id;
	uint64_t seq;
	struct odx_result res;
};

static pthread_mutex_t odx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct odx_token tokens[ODX_SLOTS];
static struct odx_held held[ODX_HELD];
static uint64_t next_id, seq;
static bool id_seeded;
static uint64_t (*odx_clock)(void);

void odx_set_clock(uint64_t (*now)(void))
{
	odx_clock = now;
}

static uint64_t odx_now(void)
{
	struct timespec ts;

	if (odx_clock)
		return odx_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void live_add(struct lun *l, int d)
{
	__atomic_add_fetch(&l->odx_live, d, __ATOMIC_RELAXED);
}

/* tk stops being live (lock held). */
static void tk_kill(struct odx_token *tk, uint8_t why)
{
	if (tk->state == TK_LIVE)
		live_add(tk->lun, -1);
	tk->state = why;
}

/* A live token past its inactivity timeout expires (lock held). */
static void tk_age(struct odx_token *tk, uint64_t now)
{
	if (tk->state == TK_LIVE && now - tk->last > tk->secs)
		tk_kill(tk, TK_EXPIRED);
}

static int fill_random(uint8_t *p, size_t n)
{
	while (n) {
		ssize_t got = getrandom(p, n, 0);
		if (got <= 0)
			return -1;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* A free slot, else the oldest dead one; NULL when all are live. With
 * *live set to the live tokens of l (lock held). */
static struct odx_token *tk_slot(struct lun *l, unsigned *live)
{
	struct odx_token *best = NULL;
	uint64_t now = odx_now();

	*live = 0;
	for (unsigned i = 0; i < ODX_SLOTS; i++) {
		struct odx_token *tk = &tokens[i];
		tk_age(tk, now);
		if (tk->state == TK_LIVE) {
			*live += tk->lun == l;
			continue;
		}
		if (!best || (best->state != TK_FREE &&
			      (tk->state == TK_FREE || tk->made < best->made)))
			best = tk;
	}
	return best;
}

static void tk_write(struct odx_token *tk, const struct lun *l)
{
	uint8_t *b = tk->bytes;

	memset(b, 0, ODX_TOKEN_LEN);
	put_be32(b, ODX_ROD_PIT_VULN);
	put_be16(b + 6, ODX_TOKEN_LEN - 8);	/* ROD TOKEN LENGTH */
	put_be64(b + 8, tk->id);
	/* CREATOR LOGICAL UNIT DESCRIPTOR: identification CSCD (E4h). */
	b[16] = 0xe4;
	b[17] = PDT_DIRECT_ACCESS;
	b[20] = 0x01;			/* binary */
	b[21] = 0x03;			/* logical unit, NAA */
	b[23] = 16;
	memcpy(b + 24, l->naa, 16);
	put_be24(b + 45, l->block_size);	/* DISK BLOCK LENGTH */
	/* NUMBER OF BYTES REPRESENTED (16 bytes). */
	put_be64(b + 56, tk->blocks * l->block_size);
	/* DEVICE TYPE SPECIFIC DATA: READ CAPACITY (16) data from byte 8. */
	put_be32(b + 96, l->block_size);
	b[101] = l->lbppbe & 0x0f;
}

struct exec_rc odx_token_create(struct lun *l, const struct odx_range *r,
				unsigned n, uint64_t blocks, uint32_t secs,
				uint8_t token[ODX_TOKEN_LEN])
{
	struct exec_rc full = exec_sense(SK_ILLEGAL_REQUEST,
		ASC_INSUFFICIENT_RESOURCES_TO_CREATE_ROD_TOKEN);
	uint8_t rnd[ODX_TOKEN_LEN - ODX_RANDOM_AT];
	unsigned live;

	if (fill_random(rnd, sizeof(rnd)) < 0)
		return exec_target_failure();
	pthread_mutex_lock(&odx_lock);
	struct odx_token *tk = tk_slot(l, &live);
	if (!tk || live >= ODX_TOKENS_PER_LUN) {
		pthread_mutex_unlock(&odx_lock);
		return full;
	}
	if (!id_seeded) {
		memcpy(&next_id, rnd, sizeof(next_id));
		id_seeded = true;
	}
	tk->state = TK_LIVE;
	tk->lun = l;
	tk->id = next_id++;
	tk->made = ++seq;
	tk->last = odx_now();
	tk->secs = secs;
	tk->bs = l->block_size;
	tk->blocks = blocks;
	tk->n = n;
	memcpy(tk->r, r, n * sizeof(*r));
	tk_write(tk, l);
	memcpy(tk->bytes + ODX_RANDOM_AT, rnd, sizeof(rnd));
	memcpy(token, tk->bytes, ODX_TOKEN_LEN);
	live_add(l, 1);
	pthread_mutex_unlock(&odx_lock);
	return EXEC_OK;
}

/* The slot of token's identifier, or NULL (lock held). */
static struct odx_token *tk_find(const uint8_t *token)
{
	uint64_t id = get_be64(token + 8);

	for (unsigned i = 0; i < ODX_SLOTS; i++)
		if (tokens[i].state != TK_FREE && tokens[i].id == id)
			return &tokens[i];
	return NULL;
}

static struct exec_rc invalid_token(uint8_t ascq)
{
	return exec_sense(SK_ILLEGAL_REQUEST,
			  (uint16_t)(ASC_INVALID_TOKEN_OPERATION | ascq));
}

/* Why tk (or no token) cannot be used (lock held). */
static struct exec_rc tk_check(const struct odx_token *tk,
			       const uint8_t *token)
{
	if (get_be32(token) != ODX_ROD_PIT_VULN)
		return invalid_token(ODX_TOKEN_UNSUPPORTED_TYPE);
	if (get_be16(token + 6) != ODX_TOKEN_LEN - 8)
		return invalid_token(ODX_TOKEN_INVALID_LENGTH);
	if (!tk)
		return invalid_token(ODX_TOKEN_UNKNOWN);
	if (memcmp(tk->bytes, token, ODX_TOKEN_LEN))
		return invalid_token(ODX_TOKEN_CORRUPT);
	switch (tk->state) {
	case TK_EXPIRED:
		return invalid_token(ODX_TOKEN_EXPIRED);
	case TK_CANCELLED:
		return invalid_token(ODX_TOKEN_CANCELLED);
	case TK_DELETED:
		return invalid_token(ODX_TOKEN_DELETED);
	default:
		return EXEC_OK;
	}
}

struct exec_rc odx_token_resolve(const uint8_t *token, uint64_t rod_block,
				 struct odx_src *src, uint64_t *total,
				 uint32_t *bs)
{
	struct exec_rc rc;

	pthread_mutex_lock(&odx_lock);
	struct odx_token *tk = tk_find(token);
	uint64_t now = odx_now();
	if (tk)
		tk_age(tk, now);
	rc = tk_check(tk, token);
	if (!exec_failed(rc)) {
		tk->last = now;
		*total = tk->blocks;
		*bs = tk->bs;
		src->lun = tk->lun;
		src->run = 0;
		for (unsigned i = 0; i < tk->n; i++) {
			if (rod_block < tk->r[i].blocks) {
				src->lba = tk->r[i].lba + rod_block;
				src->run = tk->r[i].blocks - rod_block;
				break;
			}
			rod_block -= tk->r[i].blocks;
		}
	}
	pthread_mutex_unlock(&odx_lock);
	return rc;
}

void odx_token_delete(const uint8_t *token)
{
	pthread_mutex_lock(&odx_lock);
	struct odx_token *tk = tk_find(token);
	if (tk && !memcmp(tk->bytes, token, ODX_TOKEN_LEN))
		tk_kill(tk, TK_DELETED);
	pthread_mutex_unlock(&odx_lock);
}

/* ---- invalidation ------------------------------------------------------ */

void odx_note_range(struct lun *l, uint64_t lba, uint64_t blocks)
{
	if (!__atomic_load_n(&l->odx_live, __ATOMIC_RELAXED) || !blocks)
		return;
	pthread_mutex_lock(&odx_lock);
	for (unsigned i = 0; i < ODX_SLOTS; i++) {
		struct odx_token *tk = &tokens[i];
		if (tk->state != TK_LIVE || tk->lun != l)
			continue;
		for (unsigned j = 0; j < tk->n; j++) {
			const struct odx_range *r = &tk->r[j];
			if (lba < r->lba + r->blocks &&
			    r->lba < lba + MIN(blocks, UINT64_MAX - lba)) {
				tk_kill(tk, TK_CANCELLED);
				break;
			}
		}
	}
	pthread_mutex_unlock(&odx_lock);
}

void odx_note_write(struct tcq_task *t)
{
	const struct opc_entry *e = t->req.cmd;
	struct lun *l = t->lun;

	if (!l || !e || !__atomic_load_n(&l->odx_live, __ATOMIC_RELAXED))
		return;
	if (e->exec == sbc_write_using_token)
		return;		/* cancels by its own ranges */
	if (e->flags & (OPC_F_RANGE_IN_DATA | OPC_F_SANITIZE)) {
		odx_note_range(l, 0, UINT64_MAX);	/* UNMAP, SANITIZE */
		return;
	}
	if (e->access != CDB_ACCESS_WRITE)
		return;
	uint64_t blocks = t->req.blocks;
	/* WRITE SAME with NUMBER OF LOGICAL BLOCKS 0: to the last block. */
	if (!blocks && (e->op == SOP_WRITE_SAME_10 ||
			e->op == SOP_WRITE_SAME_16))
		blocks = UINT64_MAX;
	odx_note_range(l, t->req.lba, blocks);
}

void odx_lun_gone(struct lun *l)
{
	pthread_mutex_lock(&odx_lock);
	for (unsigned i = 0; i < ODX_SLOTS; i++)
		if (tokens[i].state != TK_FREE && tokens[i].lun == l) {
			tk_kill(&tokens[i], TK_FREE);
			tokens[i].lun = NULL;
		}
	for (unsigned i = 0; i < ODX_HELD; i++)
		if (held[i].lun == l)
			held[i].lun = NULL;
	pthread_mutex_unlock(&odx_lock);
}

/* ---- results ----------------------------------------------------------- */

void odx_nexus_gone(struct lun *l, void *nexus)
{
	pthread_mutex_lock(&odx_lock);
	for (unsigned i = 0; i < ODX_HELD; i++)
		if (held[i].lun == l && held[i].nexus == nexus)
			held[i].lun = NULL;
	pthread_mutex_unlock(&odx_lock);
}

static struct odx_held *held_find(struct lun *l, void *nexus, uint32_t id)
{
	for (unsigned i = 0; i < ODX_HELD; i++)
		if (held[i].lun == l && held[i].nexus == nexus &&
		    held[i].list_id == id)
			return &held[i];
	return NULL;
}

void odx_result_put(struct lun *l, void *nexus, uint32_t list_id,
		    const struct odx_result *res)
{
	pthread_mutex_lock(&odx_lock);
	struct odx_held *h = held_find(l, nexus, list_id);
	for (unsigned i = 0; !h && i < ODX_HELD; i++)
		if (!held[i].lun)
			h = &held[i];
	if (!h) {		/* all held: the oldest goes */
		h = &held[0];
		for (unsigned i = 1; i < ODX_HELD; i++)
			if (held[i].seq < h->seq)
				h = &held[i];
	}
	h->lun = l;
	h->nexus = nexus;
	h->list_id = list_id;
	h->seq = ++seq;
	h->res = *res;
	pthread_mutex_unlock(&odx_lock);
}

bool odx_result_take(struct lun *l, void *nexus, uint32_t list_id,
		     struct odx_result *res)
{
	pthread_mutex_lock(&odx_lock);
	struct odx_held *h = held_find(l, nexus, list_id);
	if (h) {
		*res = h->res;
		h->lun = NULL;
	}
	pthread_mutex_unlock(&odx_lock);
	return h != NULL;
}

void odx_result_fail(struct tcq_task *t, uint8_t sa, uint32_t list_id,
		     struct exec_rc rc, uint64_t blocks)
{
	struct odx_result res;

	memset(&res, 0, sizeof(res));
	res.sa = sa;
	res.status = ODX_CS_ERROR;
	res.scsi_status = rc.status;
	res.blocks = blocks;
	if (rc.status == SAM_STAT_CHECK_CONDITION)
		res.sense_len = sense_build(res.sense, false, &rc.si);
	odx_result_put(t->lun, t->nexus, list_id, &res);
}
