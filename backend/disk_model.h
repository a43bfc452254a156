/*
 * Device models for the disk backend (backend/disk.c): a rotating disk
 * (zoned geometry, a virtual head, a fitted seek curve, the drive's own
 * queue with fifo or sptf and an aging bound, read-ahead segments and a
 * volatile write cache) and a flash device (channels x dies with read
 * and program times, a queue of up to 1024 commands).
 *
 * The model is pure arithmetic on a clock the caller gives it: no
 * reactor, no lock, no system call. The backend drives it with
 * reactor_now_ns() under its mutex; the unit tests
 * (tests/unit/test_disk_model.c) drive it with a virtual clock, so they
 * are fast and exact. Times are nanoseconds; positions are 512-byte
 * sectors.
 *
 * Use: dm_init; dm_submit(req, now) for each command (its arrival); the
 * model's next event is dm_next(); dm_advance(now) runs every event up to
 * now and hands each finished request to the done list (req->done is its
 * completion time, never later than the now it was returned at, but
 * possibly earlier when the caller was late).
 */
#ifndef TCQ_BACKEND_DISK_MODEL_H
#define TCQ_BACKEND_DISK_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/list.h"

#define DM_SECTOR 512u
#define DM_MAX_ZONES 256
#define DM_MAX_SEGMENTS 64
#define DM_MAX_NCQ 32
#define DM_MAX_SSD_QUEUE 1024
#define DM_SSD_PAGE 4096u
#define DM_NONE UINT64_MAX

enum dm_kind { DM_HDD, DM_SSD };
enum dm_sched { DM_FIFO, DM_SPTF };
enum dm_elevator { DM_ELV_NONE, DM_ELV_DEADLINE, DM_ELV_CFQ };
enum dm_op { DM_READ, DM_WRITE, DM_FLUSH, DM_NOP };

/* Resolved parameters (presets applied): see disk.c for the keys. */
struct dm_params {
	int kind;		/* enum dm_kind */
	uint64_t seed;
	uint64_t overhead_ns;	/* controller time per command (a miss) */
	uint64_t iface_bps;	/* interface rate, bytes/s: caps every
				 * transfer to or from the host */
	/* hdd */
	uint64_t capacity;	/* bytes */
	uint32_t rpm;
	uint32_t heads;		/* recording surfaces */
	uint32_t zones;
	uint32_t spt_outer, spt_inner;	/* sectors per track, zone 0 and last */
	uint64_t track_seek_ns, avg_seek_ns, full_seek_ns;
	uint32_t ncq;		/* 1..32 commands at the drive */
	int sched;		/* enum dm_sched */
	uint64_t aging_ns;	/* sptf: serve the oldest once it waited this */
	int elevator;		/* enum dm_elevator: the host queue's order */
	bool readahead;
	uint32_t segments;
	uint64_t segment_size;	/* bytes */
	bool wcache;
	uint64_t hit_overhead_ns;	/* controller time of a cache hit or a
					 * cached write */
	uint64_t head_switch_ns;	/* to the next track of a transfer (the
					 * layout's skew: no revolution lost) */
	uint64_t destage_idle_ns;	/* an idle drive destages after this */
	uint32_t destage_pct;		/* ... or at once with this % dirty */
	/* ssd */
	uint32_t channels, dies;	/* dies per channel */
	uint64_t read_ns, program_ns;	/* per 4 KiB page, at the die */
	uint64_t channel_bps;	/* bus rate of one channel */
	uint32_t queue;		/* 1..1024 commands at the drive (tags) */
	uint64_t ctrl_iops;	/* ssd: the controller's ceiling, commands/s
				 * (0: none) */
};

struct dm_req {
	int op;			/* enum dm_op */
	bool fua;
	uint64_t lba;		/* sector */
	uint32_t nsect;
	void *ctx;		/* the caller's */
	const void *who;	/* the submitter (an I_T nexus), compared by
				 * the cfq elevator, never dereferenced */
	const void *cmd;	/* the command this is a piece of (pieces of
				 * one cut READ share it), for mean_commands;
				 * NULL: a whole command. Never dereferenced */
	/* Filled by the model. */
	uint64_t arrive;	/* dm_submit's now */
	uint64_t enter;		/* reached the drive's queue */
	uint64_t start;		/* service began */
	uint64_t done;		/* completion */
	bool hit;		/* served from the cache (read hit, cached write) */
	bool media;		/* paid the media (seek, rotation, transfer) */
	void *elv;		/* the elevator's (cfq: the request's queue) */
	struct list_node node;
};

struct dm_stats {
	uint64_t commands;	/* completed */
	uint64_t reads, writes, flushes;
	uint64_t read_hits;	/* reads served by read-ahead */
	uint64_t cached_writes;	/* writes completed in the write cache */
	uint64_t media_ops;	/* seek+rotate+transfer, destages included */
	uint64_t destages;
	double mean_drive_queue;	/* time average of commands at the drive,
					 * in service included */
	double mean_host_queue;		/* ... waiting for a drive slot */
	double mean_commands;		/* time average of the commands in the
					 * model (host queue and drive), a
					 * command's pieces counted once: what
					 * Little's law divides by commands/s */
	double mean_busy_dies;		/* ssd: time average */
	double busy_fraction;		/* hdd: mechanism busy, 0..1 */
	uint64_t elapsed_ns;	/* since the first command */
};

struct dm_zone {
	uint64_t first_lba, nsect;
	uint32_t spt;
	uint32_t first_cyl;
};

struct dm_segment {
	uint64_t start;		/* first valid sector */
	uint64_t end;		/* end of valid data when not prefetching */
	uint64_t cap_end;	/* start + segment size: prefetch stops here */
	bool active;		/* the head is prefetching into it */
	uint64_t t0, lba0;	/* prefetch: head at lba0 at t0, reading on */
	uint64_t used;		/* LRU stamp */
	bool valid;
};

struct dm_extent {
	uint64_t lba;
	uint32_t nsect;
	uint64_t since;		/* entered the cache */
	struct list_node node;
};

/* Reserved intervals of one resource (an ssd channel, the interface),
 * sorted by start: a transfer takes the first gap long enough. */
struct dm_busy {
	uint64_t (*iv)[2];	/* [start, end) */
	uint32_t n, cap;
};

/* The cfq elevator's queues (disk_cfq.c): one per submitter for sync
 * requests, one shared by every async write, as Linux 2.6.29 keeps them
 * per process and per priority. */
#define DM_CFQ_QUEUES 64

struct dm_cfq_queue {
	const void *who;
	bool taken, sync;
	bool on_rr;		/* has requests: on the service tree */
	bool slice_new;		/* no completion yet in this slice */
	bool wait_request;	/* idling for its next request */
	bool fifo_checked;	/* this slice looked at its fifo */
	bool idle_window;	/* may idle (think time, seekiness) */
	uint32_t queued;	/* in the host queue */
	uint32_t dispatched;	/* at the drive */
	int64_t rb_key;		/* service tree order (ns), then rb_seq */
	uint64_t rb_seq;
	int64_t slice_resid;
	uint64_t slice_end;
	/* the submitter's history (Linux's cfq_io_context) */
	uint64_t last_end;	/* its last sync completion */
	uint64_t last_pos;	/* where its last request ended */
	uint64_t ttime_samples, ttime_total, ttime_mean;
	uint64_t seek_samples, seek_total, seek_mean;
};

struct dm_cfq {
	struct dm_cfq_queue q[DM_CFQ_QUEUES];
	struct dm_cfq_queue *active;
	uint32_t busy_queues;	/* on the service tree */
	uint32_t sync_flight;	/* sync requests at the drive */
	uint64_t last_pos;	/* where the last dispatch ended */
	uint64_t idle_until;	/* idle timer (DM_NONE: not armed) */
	uint64_t seq;
};

struct disk_model {
	struct dm_params p;
	uint64_t now;		/* model clock: last advance */
	bool started;
	uint64_t t_first;
	/* queues */
	struct list_node host;	/* beyond the drive's queue, arrival order */
	uint64_t elv_pos;	/* elevator: where the last dispatch ended */
	uint32_t elv_batch;	/* ... dispatches since the fifo was checked */
	struct dm_cfq cfq;	/* elevator=cfq */
	struct list_node drive;	/* at the drive, arrival order */
	uint32_t nhost, ndrive;	/* ndrive counts the one in service */
	uint32_t ncmd;		/* commands with a piece in the model */
	/* hdd geometry and mechanism */
	struct dm_zone zone[DM_MAX_ZONES];
	uint32_t cylinders;
	uint64_t rot_ns;	/* one revolution */
	double phase;		/* angle at t = 0, from the seed */
	double seek_k, seek_x0;	/* the fitted curve (disk_model_geom.c) */
	double seek_p;		/* its power: 1/2, or less past the root */
	uint32_t head_cyl;
	uint64_t head_lba;	/* where the last media transfer ended */
	struct dm_req *cur;	/* in service (NULL: none, or a destage) */
	bool busy;
	uint64_t busy_end;
	uint64_t idle_since;	/* no command since (DM_NONE: busy) */
	uint64_t wake;		/* idle: look at the cache again then */
	struct dm_extent *destaging;
	/* caches */
	struct dm_segment seg[DM_MAX_SEGMENTS];
	uint64_t lru;
	struct list_node dirty;	/* write cache, oldest first */
	uint64_t dirty_sect, dirty_max;
	struct list_node extent_free;
	/* ssd */
	uint64_t *die_free;	/* time each die is free again */
	struct dm_busy *ch_busy;	/* per channel: its reserved times */
	struct dm_busy iface_busy;	/* the host interface's */
	uint64_t ctrl_free;	/* the controller's next free slot */
	struct list_node inflight;	/* ssd: by done time */
	/* statistics */
	struct dm_stats st;
	uint64_t acc_t;
	double area_drive, area_host, area_cmd, busy_ns, die_busy_ns;
};

/* The next command of the host queue for the drive under the host's
 * elevator (disk_elevator.c), still on m->host; NULL when empty, or when
 * the elevator holds the drive idle for now (cfq's idling: dm_elevator_wake
 * says until when). */
struct dm_req *dm_elevator_pick(struct disk_model *m, uint64_t t);
/* r joined the host queue at t (after list_add_tail to m->host). */
void dm_elevator_add(struct disk_model *m, struct dm_req *r, uint64_t t);
/* r left the drive at t (after m->ndrive dropped). */
void dm_elevator_done(struct disk_model *m, struct dm_req *r, uint64_t t);
/* When the elevator wants to be asked again (its idle timer), if later
 * than t; DM_NONE: no wish. */
uint64_t dm_elevator_wake(const struct disk_model *m, uint64_t t);

/* Checks and resolves p (geometry, the seek fit). 0, or -1 with a message
 * naming the bad key in err. */
int dm_init(struct disk_model *m, const struct dm_params *p, char *err,
	    size_t errlen);
void dm_fini(struct disk_model *m);

/* A command arrives at now (>= every earlier now). Events due by now run
 * first; what they finish goes to done. */
void dm_submit(struct disk_model *m, struct dm_req *r, uint64_t now,
	       struct list_node *done);
/* Runs every event due by now; finished requests go to done (in
 * completion order). */
void dm_advance(struct disk_model *m, uint64_t now, struct list_node *done);
/* The time of the next event, DM_NONE when idle. */
uint64_t dm_next(const struct disk_model *m);
/* Statistics up to now. */
void dm_get_stats(struct disk_model *m, uint64_t now, struct dm_stats *st);

/* ---- the model's arithmetic, for tests and listings ------------------- */

/* Seek time over d cylinders (0: none). */
uint64_t dm_seek_ns(const struct disk_model *m, uint32_t d);
/* The cylinder and sectors per track of lba. */
uint32_t dm_cyl(const struct disk_model *m, uint64_t lba, uint32_t *spt);
/* Media rate of the zone holding lba, bytes/s: spt * 512 * rpm / 60. */
double dm_media_rate(const struct disk_model *m, uint64_t lba);
/* Positioning time (seek + rotational latency) to lba from the head's
 * position at t. */
uint64_t dm_position_ns(const struct disk_model *m, uint64_t t,
			uint64_t lba);
#endif
