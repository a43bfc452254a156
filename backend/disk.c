/*
 * disk: a device model as a backend. Data go to the base (default null,
 * of the model's capacity); timing comes from the model
 * (backend/disk_model.c: a rotating disk with presets hdd and hdd-15k,
 * or flash, ssd). Spec: "disk:model=hdd[,key=value...][,base=SPEC]".
 *
 * The drive is one device, so there is ONE model state per LUN, shared by
 * the LUN's per-reactor queues and guarded by a mutex (d->lock): a
 * submission or a timer takes it, advances the model to reactor_now_ns()
 * and puts the commands the model finished on their own queue's done
 * list. Each queue has a reactor timer (nanosecond deadlines on its
 * reactor's one timerfd, tcq/reactor.h): the thread that last ran the
 * model arms its own queue's timer at the model's next event, so someone
 * always wakes for it. A queue that gets work finished by another thread
 * is woken through its reactor's mailbox (reactor_send of a message the
 * queue owns, one on its way at a time). Until that wake-up has run, the
 * queue's own passes leave its done list to it: a wake-up on its way
 * always has I/O of its queue behind it, so the queue (which is closed
 * only with no I/O in flight) outlives it. The finished I/O then goes to
 * the base on its own reactor and completes through bdev_complete there.
 * Nothing ever sleeps; completions come from real timers.
 *
 * time_scale=K runs the model on a clock K times slower than the real
 * one (model time = real time / K, a timer for model time t fires at
 * t * K): every service time, transfer and rate of the drive is K times
 * longer, while the host (tcqd, the wire, the initiator) keeps its own
 * speed. A device far faster than this host can serve is so seen with
 * the host's share of each command made K times smaller: its shape
 * (IOPS by depth) is the modelled drive's, its figures are 1/K of it.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "backend/disk_model.h"
#include "backend/wrap.h"
#include "tcq/compiler.h"

#define UNSET UINT64_MAX
#define ENUM_UNSET (-1)

enum { MODEL_HDD, MODEL_HDD15K, MODEL_SSD };

struct disk_opts {
	int model;
	uint64_t capacity, rpm, heads, zones, spt_outer, spt_inner;
	uint64_t track_seek, avg_seek, full_seek, overhead;
	uint64_t ncq;
	int sched;
	uint64_t aging;
	int elevator;
	int readahead;
	uint64_t segments, segment_size;
	int wcache;
	uint64_t iface_rate;
	uint64_t hit_overhead, head_switch, destage_idle, destage_dirty;
	uint64_t channels, dies, read_us, program_us, channel_rate, queue;
	uint64_t ctrl_iops;
	uint64_t seed;
	uint64_t time_scale;
};

struct disk_q;

struct disk {
	struct bdev *base;	/* first: wrap_lba_status */
	struct disk_opts o;
	uint64_t scale;		/* time_scale: real ns per model ns */
	struct disk_model m;
	pthread_mutex_t lock;	/* m, queues, each dq's done, in_model,
				 * woken */
	struct list_node queues;
};

struct disk_io {
	struct dm_req r;
	struct bdev_io bio;	/* to the base */
	struct bdev_io *up;
	struct disk_q *dq;
	struct list_node link;	/* pool, done list */
};

struct disk_q {
	struct disk *d;
	struct bdev_queue *q, *bq;
	struct list_node link;	/* d->queues */
	struct list_node done;	/* model finished them (under d->lock) */
	struct list_node pool;	/* free disk_io (this reactor only) */
	struct bdev_cq errs;
	uint32_t in_model;	/* submitted, not finished (under d->lock) */
	bool woken;		/* wake on its way (under d->lock) */
	struct reactor_msg wake;
	struct reactor_timer timer;	/* the model's next event; touched
					 * on this queue's reactor only */
};

/* ---- presets (see the comment above disk_presets) --------------------- */

/*
 * Each preset is one drive, its keys from that drive's own documents;
 * docs/disk-models.md has the table (key, value, source and page, or
 * "assumed" and why) and the arithmetic below.
 *
 * hdd: Hitachi Deskstar 7K500 (HDS725050KLA360, 2005; the Hitachi drive
 * of axboe-2006). Its specification, 4.4.4 table 10: zone 0 76.3 MB/s
 * instantaneous, 64.8 sustained; zone 29 36.5 / 31.0; SATA 300 MB/s.
 * spt = rate / (512 * 120): 1242 outer, 594 inner, 30 zones. The
 * sustained rate is 512 * spt * heads / ((heads - 1) * head switch +
 * cylinder change + heads * T): both zones give 14.8 ms of switching a
 * cylinder, whatever the heads, so 1.48 ms a switch (the cylinder change
 * taken as one). 4.4.5.2: 4096 random reads in 55.5 s typical (1.05 T):
 * 12.90 ms each = overhead + 8.5 seek + 4.17 latency + transfers, so
 * overhead 0.23 ms. Track-to-track, full stroke, hit overhead, heads,
 * the cache's segments and the destage triggers are assumed.
 *
 * hdd-15k: Seagate Cheetah 15K.7 SAS (ST3600057SS, 2009; a 15K rpm
 * drive of bolkhovitin-2010's time). Product manual 100516226, 4.2.3:
 * sustainable 122..204 MB/s, SAS 600 MB/s, 2.0 ms average latency. spt
 * from the sustained rates (512 * 250 bytes a revolution per sector:
 * 1594 outer, 953 inner), head_switch 0 (the sustained rates already
 * hold the switches). avg_seek 3.3 ms: the Ultrastar 15K450's (same
 * class and year) for want of the 15K.7's seek table; the rest assumed.
 *
 * ssd: Micron RealSSD P320h (HHHL 350 GB, 2011; micron-2011's device).
 * Data sheet (realssd_p320h_hhhl_distribution.pdf) tables 1-2: 32 ONFI
 * 2.1 channels, 64 packages of 4 SLC dies (8 a channel), up to 256
 * outstanding commands (queue), random read 785K IOPS (ctrl_iops),
 * sequential read 3.2 GB/s (iface_rate), READ latency < 47 us (QD1, 512
 * bytes). ONFI 2.1's fastest bus is 200 MT/s (channel_rate). The page
 * times (SLC: read 25 us, program 200 us) and the controller's 10 us are
 * assumed. Arithmetic: a 512-byte read at depth 1 = 10 + 25 + 2.56 +
 * 0.16 = 37.7 us (< 47); 4K reads top out at min(785K, 3.2e9 / 4096 =
 * 781K, 256 dies / 45.5 us, 32 channels / 20.5 us) = 781K IOPS.
 */
static const struct disk_opts disk_presets[] = {
	[MODEL_HDD] = {
		.model = MODEL_HDD, .capacity = 500107862016ull, .rpm = 7200,
		.heads = 10, .zones = 30, .spt_outer = 1242, .spt_inner = 594,
		.track_seek = 1000000, .avg_seek = 8500000,
		.full_seek = 17000000, .overhead = 230000, .ncq = 32,
		.sched = DM_SPTF, .aging = 500000000, .readahead = 1,
		.segments = 16, .segment_size = 1 << 20, .wcache = 1,
		.iface_rate = 300, .hit_overhead = 100000,
		.head_switch = 1480000, .destage_idle = 10000000,
		.destage_dirty = 50,
	},
	[MODEL_HDD15K] = {
		.model = MODEL_HDD15K, .capacity = 600000000000ull,
		.rpm = 15000, .heads = 8, .zones = 16, .spt_outer = 1594,
		.spt_inner = 953, .track_seek = 200000, .avg_seek = 3300000,
		.full_seek = 7000000, .overhead = 100000, .ncq = 32,
		.sched = DM_SPTF, .aging = 500000000, .readahead = 1,
		.segments = 16, .segment_size = 1 << 20, .wcache = 1,
		.iface_rate = 600, .hit_overhead = 50000, .head_switch = 0,
		.destage_idle = 10000000, .destage_dirty = 50,
	},
	[MODEL_SSD] = {
		.model = MODEL_SSD, .capacity = 350000000000ull,
		.overhead = 10000, .iface_rate = 3200, .channels = 32,
		.dies = 8, .read_us = 25, .program_us = 200,
		.channel_rate = 200, .queue = 256, .ctrl_iops = 785000,
	},
};

/* The options with the model's preset under every key not given. */
static void disk_resolve(const struct disk_opts *o, struct disk_opts *r)
{
	const struct disk_opts *pre = &disk_presets[o->model];

	*r = *o;
#define TAKE(f) do { if (r->f == UNSET) r->f = pre->f; } while (0)
#define TAKE_ENUM(f) do { if (r->f == ENUM_UNSET) r->f = pre->f; } while (0)
	TAKE(capacity); TAKE(rpm); TAKE(heads); TAKE(zones);
	TAKE(spt_outer); TAKE(spt_inner); TAKE(track_seek); TAKE(avg_seek);
	TAKE(full_seek); TAKE(overhead); TAKE(ncq); TAKE(aging);
	TAKE(segments); TAKE(segment_size); TAKE(iface_rate);
	TAKE(channels); TAKE(dies); TAKE(read_us); TAKE(program_us);
	TAKE(channel_rate); TAKE(queue); TAKE(hit_overhead);
	TAKE(head_switch); TAKE(destage_idle); TAKE(destage_dirty);
	TAKE(ctrl_iops);
	TAKE_ENUM(sched); TAKE_ENUM(readahead); TAKE_ENUM(wcache);
	TAKE_ENUM(elevator);
#undef TAKE
#undef TAKE_ENUM
}

static void disk_params(const struct disk_opts *r, struct dm_params *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = r->model == MODEL_SSD ? DM_SSD : DM_HDD;
	p->seed = r->seed;
	p->overhead_ns = r->overhead;
	p->iface_bps = r->iface_rate * 1000000ull;
	p->capacity = r->capacity;
	p->rpm = (uint32_t)r->rpm;
	p->heads = (uint32_t)r->heads;
	p->zones = (uint32_t)r->zones;
	p->spt_outer = (uint32_t)r->spt_outer;
	p->spt_inner = (uint32_t)r->spt_inner;
	p->track_seek_ns = r->track_seek;
	p->avg_seek_ns = r->avg_seek;
	p->full_seek_ns = r->full_seek;
	p->ncq = (uint32_t)r->ncq;
	p->sched = r->sched;
	p->aging_ns = r->aging;
	p->elevator = r->elevator;
	p->readahead = r->readahead == 1;
	p->segments = (uint32_t)r->segments;
	p->segment_size = r->segment_size;
	p->wcache = r->wcache == 1;
	p->channels = (uint32_t)r->channels;
	p->dies = (uint32_t)r->dies;
	p->read_ns = r->read_us * 1000;
	p->program_ns = r->program_us * 1000;
	p->channel_bps = r->channel_rate * 1000000ull;
	p->queue = (uint32_t)r->queue;
	p->hit_overhead_ns = r->hit_overhead;
	p->head_switch_ns = r->head_switch;
	p->destage_idle_ns = r->destage_idle;
	p->destage_pct = (uint32_t)r->destage_dirty;
	p->ctrl_iops = r->ctrl_iops;
}

/* ---- timers ---------------------------------------------------------- */

/* The model's clock: the reactor's, slowed time_scale times. */
static uint64_t model_now(const struct disk *d)
{
	return reactor_now_ns() / d->scale;
}

/* t: the model's next event on its clock (DM_NONE: none); on dq's
 * reactor. A timer that fires no later than t is left alone: it wakes
 * disk_timer, which advances the model and arms it again for the next
 * event, so the model is never late and, with many commands in flight,
 * a submission moves no timer (and never costs the reactor a
 * timerfd_settime, a syscall that takes a hrtimer lock). */
static void arm_at(struct disk_q *dq, uint64_t t)
{
	struct reactor_timer *tm = &dq->timer;
	uint64_t s = dq->d->scale;

	if (t == DM_NONE) {
		reactor_timer_cancel(dq->q->reactor, tm);
		return;
	}
	t = t > UINT64_MAX / s ? UINT64_MAX : t * s;	/* real time */
	if (reactor_timer_armed(tm) && reactor_timer_deadline(tm) <= t)
		return;
	reactor_timer_arm_at(dq->q->reactor, tm, t);
}

static void disk_wake(void *arg);

/* Under d->lock: dq's reactor runs disk_wake soon (from any thread). */
static void wake(struct disk_q *dq)
{
	if (dq->woken)
		return;
	dq->woken = true;
	reactor_send(dq->q->reactor, &dq->wake, disk_wake, dq);
}

/* Under d->lock: the model's finished commands to their queues (waking
 * the other queues), self's own into mine unless a wake-up is on its way
 * to take them; self's timer at the next event. */
static void distribute(struct disk_q *self, struct list_node *fin,
		       struct list_node *mine)
{
	struct disk *d = self->d;

	while (!list_empty(fin)) {
		struct dm_req *r = list_first_entry(fin, struct dm_req, node);
		struct disk_io *dio = container_of(r, struct disk_io, r);

		list_del(&r->node);
		list_add_tail(&dio->link, &dio->dq->done);
		dio->dq->in_model--;
		if (dio->dq != self)
			wake(dio->dq);
	}
	while (!self->woken && !list_empty(&self->done)) {
		struct list_node *n = self->done.next;

		list_del(n);
		list_add_tail(n, mine);
	}
	arm_at(self, dm_next(&d->m));
}

/* ---- I/O --------------------------------------------------------------- */

static void disk_base_done(struct bdev_io *bio)
{
	struct disk_io *dio = container_of(bio, struct disk_io, bio);
	struct disk_q *dq = dio->dq;
	struct bdev_io *up = dio->up;
	int rc = bio->result;

	dio->up = NULL;
	list_add_head(&dio->link, &dq->pool);
	bdev_complete(up, rc);
}

/* On dq's reactor: the model is done with these; the data go to the
 * base. */
static void run_finished(struct disk_q *dq, struct list_node *mine)
{
	while (!list_empty(mine)) {
		struct disk_io *dio = list_first_entry(mine, struct disk_io,
						       link);
		struct bdev_io *up = dio->up, *bio = &dio->bio;

		list_del(&dio->link);
		bdev_io_forward(bio, up, disk_base_done, dq);
		bdev_submit(dq->bq, bio);
	}
}

/* On dq's reactor: the model to now, what it finished handed out. */
static void disk_run(struct disk_q *dq, bool woken)
{
	struct disk *d = dq->d;
	struct list_node fin, mine;

	list_init(&fin);
	list_init(&mine);
	pthread_mutex_lock(&d->lock);
	if (woken)
		dq->woken = false;	/* this is the wake-up: take done */
	dm_advance(&d->m, model_now(d), &fin);
	distribute(dq, &fin, &mine);
	pthread_mutex_unlock(&d->lock);
	run_finished(dq, &mine);
}

static void disk_timer(struct reactor_timer *t)
{
	disk_run(t->arg, false);
}

static void disk_wake(void *arg)
{
	disk_run(arg, true);
}

static void disk_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct disk_q *dq = q->priv;
	struct disk *d = dq->d;
	struct list_node fin, mine;
	struct disk_io *dio;
	uint64_t sect;

	if (!list_empty(&dq->pool)) {
		dio = list_first_entry(&dq->pool, struct disk_io, link);
		list_del(&dio->link);
	} else if (!(dio = calloc(1, sizeof(*dio)))) {
		bdev_cq_push(&dq->errs, io, -ENOMEM);
		return;
	}
	dio->up = io;
	dio->dq = dq;
	memset(&dio->r, 0, sizeof(dio->r));
	dio->r.ctx = dio;
	dio->r.who = io->submitter;
	dio->r.cmd = io->command;
	dio->r.lba = io->offset / DM_SECTOR;
	sect = (io->len + DM_SECTOR - 1) / DM_SECTOR;
	dio->r.nsect = sect ? (sect > UINT32_MAX ? UINT32_MAX : (uint32_t)sect) : 1;
	dio->r.fua = io->flags & BDEV_FUA;
	switch (io->op) {
	case BDEV_READ:
		dio->r.op = DM_READ;
		break;
	case BDEV_WRITE:
	case BDEV_COMPARE_AND_WRITE:
	case BDEV_WRITE_SAME:
		dio->r.op = DM_WRITE;
		break;
	case BDEV_FLUSH:
		dio->r.op = DM_FLUSH;
		break;
	default:	/* DISCARD, WRITE_ZEROES: the controller's time only */
		dio->r.op = DM_NOP;
		break;
	}
	list_init(&fin);
	list_init(&mine);
	pthread_mutex_lock(&d->lock);
	dq->in_model++;
	dm_submit(&d->m, &dio->r, model_now(d), &fin);
	distribute(dq, &fin, &mine);
	pthread_mutex_unlock(&d->lock);
	run_finished(dq, &mine);
}

/* ---- setup ------------------------------------------------------------- */

static void disk_queue_fini(struct bdev_queue *q)
{
	struct disk_q *dq = q->priv;
	struct disk *d;

	if (!dq)
		return;
	d = dq->d;
	pthread_mutex_lock(&d->lock);
	if (list_linked(&dq->link)) {
		struct list_node *n;

		list_del(&dq->link);
		/* A queue with commands in the model watches its next event
		 * from now on (its I/O in flight keeps it open until the
		 * wake-up ran). With none, no one needs to: the next
		 * submission runs every event due at its own time. */
		list_for_each(n, &d->queues) {
			struct disk_q *o = list_entry(n, struct disk_q, link);

			if (o->in_model) {
				wake(o);
				break;
			}
		}
	}
	pthread_mutex_unlock(&d->lock);
	/* No I/O in flight: no wake-up is on its way to dq. */
	reactor_timer_cancel(q->reactor, &dq->timer);
	wrap_queue_put_base(d->base, dq->bq, q->reactor);
	while (!list_empty(&dq->pool)) {
		struct disk_io *dio = list_first_entry(&dq->pool,
						       struct disk_io, link);

		list_del(&dio->link);
		free(dio);
	}
	bdev_cq_fini(&dq->errs);
	free(dq);
	q->priv = NULL;
}

static int disk_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct disk *d = b->priv;
	struct disk_q *dq = calloc(1, sizeof(*dq));

	if (!dq)
		return -1;
	dq->d = d;
	dq->q = q;
	reactor_timer_init(&dq->timer, disk_timer, dq);
	list_init(&dq->link);
	list_init(&dq->done);
	list_init(&dq->pool);
	bdev_cq_init(&dq->errs, q->reactor, true);
	q->priv = dq;
	dq->bq = bdev_queue_get(d->base, q->reactor);
	if (!dq->bq) {
		disk_queue_fini(q);
		return -1;
	}
	pthread_mutex_lock(&d->lock);
	list_add_tail(&dq->link, &d->queues);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static void disk_close(struct bdev *b)
{
	struct disk *d = b->priv;

	if (!d)
		return;
	bdev_close(d->base);
	dm_fini(&d->m);
	pthread_mutex_destroy(&d->lock);
	free(d);
	b->priv = NULL;
}

static int disk_stats(struct bdev *b, struct bdev_model_stats *out)
{
	struct disk *d = b->priv;
	struct dm_stats st;

	pthread_mutex_lock(&d->lock);
	dm_get_stats(&d->m, model_now(d), &st);
	pthread_mutex_unlock(&d->lock);
	memset(out, 0, sizeof(*out));
	out->model = d->o.model == MODEL_SSD ? "ssd" :
		     d->o.model == MODEL_HDD15K ? "hdd-15k" : "hdd";
	out->commands = st.commands;
	out->read_hits = st.read_hits;
	out->cached_writes = st.cached_writes;
	out->media_ops = st.media_ops;
	out->destages = st.destages;
	out->mean_drive_queue = st.mean_drive_queue;
	out->mean_host_queue = st.mean_host_queue;
	out->mean_commands = st.mean_commands;
	out->mean_busy_dies = st.mean_busy_dies;
	out->busy_fraction = st.busy_fraction;
	out->elapsed_ns = st.elapsed_ns * d->scale;	/* real time */
	return 0;
}

static const struct bdev_ops disk_ops = {
	.name = "disk",
	.queue_init = disk_queue_init,
	.queue_fini = disk_queue_fini,
	.submit = disk_submit,
	.close = disk_close,
	.lba_status = wrap_lba_status,
	.read_sync = wrap_read_sync,
	.resize = wrap_resize,
	.space = wrap_space,
	.model_stats = disk_stats,
};

/* Every key unset: the model's preset decides (disk_resolve). */
static const struct disk_opts disk_defaults = {
	.model = MODEL_HDD,
	.capacity = UNSET, .rpm = UNSET, .heads = UNSET, .zones = UNSET,
	.spt_outer = UNSET, .spt_inner = UNSET, .track_seek = UNSET,
	.avg_seek = UNSET, .full_seek = UNSET, .overhead = UNSET,
	.ncq = UNSET, .sched = ENUM_UNSET, .aging = UNSET,
	.elevator = ENUM_UNSET, .readahead = ENUM_UNSET, .segments = UNSET, .segment_size = UNSET,
	.wcache = ENUM_UNSET, .iface_rate = UNSET, .channels = UNSET,
	.dies = UNSET, .read_us = UNSET, .program_us = UNSET,
	.channel_rate = UNSET, .queue = UNSET, .seed = 1, .time_scale = 1,
	.hit_overhead = UNSET, .head_switch = UNSET, .destage_idle = UNSET,
	.destage_dirty = UNSET, .ctrl_iops = UNSET,
};

static const struct bdev_opt_word disk_models[] = {
	{ "hdd", MODEL_HDD }, { "hdd-15k", MODEL_HDD15K },
	{ "ssd", MODEL_SSD }, { NULL, 0 },
};

static const struct bdev_opt_word disk_scheds[] = {
	{ "fifo", DM_FIFO }, { "sptf", DM_SPTF },
	{ "default", ENUM_UNSET }, { NULL, 0 },
};

static const struct bdev_opt_word disk_elevators[] = {
	{ "none", DM_ELV_NONE }, { "deadline", DM_ELV_DEADLINE },
	{ "cfq", DM_ELV_CFQ }, { "default", ENUM_UNSET }, { NULL, 0 },
};

static const struct bdev_opt_word disk_onoff[] = {
	{ "off", 0 }, { "on", 1 }, { "default", ENUM_UNSET }, { NULL, 0 },
};

#define K(name, field) .key = name, .offset = offsetof(struct disk_opts, field)

static const struct bdev_opt disk_keys[] = {
	{ K("model", model), .type = BDEV_OPT_ENUM, .words = disk_models,
	  .help = "hdd (Deskstar 7K500, 2005), hdd-15k (Cheetah 15K.7, "
		  "2009), ssd (Micron P320h, 2011); the other keys override "
		  "its preset" },
	{ K("capacity", capacity), .type = BDEV_OPT_SIZE, .min = 1 << 20,
	  .help = "the modelled drive's size (default base null of this "
		  "size; a base may be smaller, not larger)" },
	{ K("rpm", rpm), .type = BDEV_OPT_UINT, .min = 1000, .max = 30000,
	  .help = "hdd: spindle speed" },
	{ K("heads", heads), .type = BDEV_OPT_UINT, .min = 1, .max = 64,
	  .help = "hdd: recording surfaces (tracks per cylinder)" },
	{ K("zones", zones), .type = BDEV_OPT_UINT, .min = 1,
	  .max = DM_MAX_ZONES,
	  .help = "hdd: zones of equal cylinder count, sectors per track "
		  "linear from spt_outer to spt_inner" },
	{ K("spt_outer", spt_outer), .type = BDEV_OPT_UINT, .min = 16,
	  .max = 100000, .help = "hdd: sectors per track, outer zone" },
	{ K("spt_inner", spt_inner), .type = BDEV_OPT_UINT, .min = 16,
	  .max = 100000, .help = "hdd: sectors per track, inner zone" },
	{ K("track_seek", track_seek), .type = BDEV_OPT_TIME,
	  .help = "hdd: one-cylinder seek" },
	{ K("avg_seek", avg_seek), .type = BDEV_OPT_TIME,
	  .help = "hdd: mean seek over random LBA pairs (curve fitted)" },
	{ K("full_seek", full_seek), .type = BDEV_OPT_TIME,
	  .help = "hdd: full-stroke seek" },
	{ K("overhead", overhead), .type = BDEV_OPT_TIME,
	  .help = "controller time per command (a media access; ssd: "
		  "every command)" },
	{ K("hit_overhead", hit_overhead), .type = BDEV_OPT_TIME,
	  .help = "hdd: controller time of a cache hit or a cached write" },
	{ K("head_switch", head_switch), .type = BDEV_OPT_TIME,
	  .help = "hdd: a transfer's move to the next track (the layout "
		  "is skewed by it)" },
	{ K("ncq", ncq), .type = BDEV_OPT_UINT, .min = 1, .max = DM_MAX_NCQ,
	  .help = "hdd: commands at the drive; more wait in the host queue" },
	{ K("sched", sched), .type = BDEV_OPT_ENUM, .words = disk_scheds,
	  .help = "hdd: the drive's order: fifo, or sptf (shortest "
		  "positioning time first)" },
	{ K("aging", aging), .type = BDEV_OPT_TIME,
	  .help = "hdd sptf: a command that waited this long goes first "
		  "(0: never)" },
	{ K("elevator", elevator), .type = BDEV_OPT_ENUM,
	  .words = disk_elevators,
	  .help = "hdd: the host queue's order before the drive: none "
		  "(arrival), deadline (Linux's: sector order, expiry) or "
		  "cfq (Linux 2.6.29's: time slices per I_T nexus, idling)" },
	{ K("readahead", readahead), .type = BDEV_OPT_ENUM,
	  .words = disk_onoff,
	  .help = "hdd: read on after a read into a cache segment" },
	{ K("segments", segments), .type = BDEV_OPT_UINT, .min = 1,
	  .max = DM_MAX_SEGMENTS, .help = "hdd: cache segments" },
	{ K("segment_size", segment_size), .type = BDEV_OPT_SIZE,
	  .min = 4096, .max = 1ull << 30, .help = "hdd: bytes per segment" },
	{ K("wcache", wcache), .type = BDEV_OPT_ENUM, .words = disk_onoff,
	  .help = "hdd: volatile write cache (FUA and FLUSH pay the media)" },
	{ K("destage_idle", destage_idle), .type = BDEV_OPT_TIME,
	  .help = "hdd wcache: an idle drive destages after this" },
	{ K("destage_dirty", destage_dirty), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 100, .help = "hdd wcache: destage at once with this % of "
			      "the cache dirty" },
	{ K("iface_rate", iface_rate), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 100000, .help = "interface rate in MB/s: no transfer to "
				 "or from the host is faster" },
	{ K("channels", channels), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 256, .help = "ssd: flash channels" },
	{ K("dies", dies), .type = BDEV_OPT_UINT, .min = 1, .max = 64,
	  .help = "ssd: dies per channel" },
	{ K("read_us", read_us), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 100000, .help = "ssd: page read at the die, us" },
	{ K("program_us", program_us), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 100000, .help = "ssd: page program at the die, us" },
	{ K("channel_rate", channel_rate), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 100000, .help = "ssd: MB/s of one channel's bus" },
	{ K("queue", queue), .type = BDEV_OPT_UINT, .min = 1,
	  .max = DM_MAX_SSD_QUEUE,
	  .help = "ssd: commands at the drive (its tags: ahci 32); more "
		  "wait in the host queue" },
	{ K("ctrl_iops", ctrl_iops), .type = BDEV_OPT_UINT, .max = 100000000,
	  .help = "ssd: the controller's ceiling, commands a second (0: "
		  "none)" },
	{ K("seed", seed), .type = BDEV_OPT_UINT, .flags = BDEV_OPT_ANY_BASE,
	  .help = "seed of the spindle's phase (service is deterministic)" },
	{ K("time_scale", time_scale), .type = BDEV_OPT_UINT, .min = 1,
	  .max = 1000,
	  .help = "run the drive K times slower than real time (every "
		  "service time x K, IOPS / K) while the host keeps its "
		  "speed: a device faster than the host, seen without the "
		  "host's limit" },
};

const struct bdev_opts_def bdev_disk_opts = {
	.backend = "disk", .opts = disk_keys,
	.nopts = ARRAY_SIZE(disk_keys), .size = sizeof(struct disk_opts),
	.defaults = &disk_defaults, .wraps = true, .default_base = "null",
};

struct bdev *bdev_disk_open(const char *opts, const struct bdev_params *p,
			    char *err, size_t errlen)
{
	struct disk *d = calloc(1, sizeof(*d));
	struct bdev_params bp = *p;
	struct disk_opts r;
	struct dm_params mp;
	const char *basespec;
	struct bdev *base, *b;
	char sub[200];

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->o = disk_defaults;
	if (bdev_opts_parse(&bdev_disk_opts, opts, &d->o, &basespec, err,
			    errlen) < 0)
		goto fail;
	disk_resolve(&d->o, &r);
	disk_params(&r, &mp);
	if (dm_init(&d->m, &mp, err, errlen) < 0)
		goto fail;
	if (!*basespec)
		basespec = "null";
	/* a bare null base without a LUN size: the whole modelled drive */
	if (!strcmp(basespec, "null") && !bp.size)
		bp.size = r.capacity;
	bp.queue_depth = BDEV_DEPTH_UNBOUNDED;	/* ours is the LUN's */
	base = bdev_open(basespec, &bp, sub, sizeof(sub));
	if (!base) {
		snprintf(err, errlen, "disk: base: %s", sub);
		goto fail_model;
	}
	if (base->size > r.capacity) {
		snprintf(err, errlen, "disk: capacity %llu is smaller than the "
			 "base (%llu bytes)", (unsigned long long)r.capacity,
			 (unsigned long long)base->size);
		bdev_close(base);
		goto fail_model;
	}
	bp.size = base->size;
	bp.block_size = base->block_size;
	bp.queue_depth = p->queue_depth;
	b = bdev_alloc(&disk_ops, &bp, base->size, err, errlen);
	if (!b) {
		bdev_close(base);
		goto fail_model;
	}
	b->read_only = p->read_only || base->read_only;
	b->thin = base->thin;
	b->direct = base->direct;
	/* no volatile cache in the model (hdd wcache=off; the flash model
	 * completes a write once programmed): a completed write is durable
	 * as far as the drive goes, the LUN reports WCE 0 */
	b->write_through = mp.kind == DM_SSD || !mp.wcache;
	d->base = base;
	d->scale = d->o.time_scale;
	pthread_mutex_init(&d->lock, NULL);
	list_init(&d->queues);
	b->priv = d;
	return b;
fail_model:
	dm_fini(&d->m);
fail:
	free(d);
	return NULL;
}
