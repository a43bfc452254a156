/*
 * What the parts of the device model share (disk_model.c: the interface,
 * accounting and the rotating disk's service; disk_model_geom.c: its
 * geometry and seek curve; disk_model_ssd.c: flash; disk_cfq.c: the cfq
 * elevator behind disk_elevator.c). Not for the backend: disk.c uses
 * disk_model.h only.
 */
#ifndef TCQ_BACKEND_DISK_MODEL_PRIV_H
#define TCQ_BACKEND_DISK_MODEL_PRIV_H
#include "backend/disk_model.h"

#define DM_NS 1000000000.0

static inline uint64_t dm_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- disk_model.c ---- */
/* The queue-length areas up to t (the time averages of dm_get_stats). */
void dm_acc(struct disk_model *m, uint64_t t);
/* r leaves the drive at t, counted, onto done. */
void dm_finish(struct disk_model *m, struct dm_req *r, uint64_t t,
	       struct list_node *done);

/* ---- disk_model_geom.c ---- */
/* Zones, cylinders, the spindle's phase (from the seed) and the seek
 * curve's fit for m->p; 0, or -1 with a message naming the key. */
int dm_geom_init(struct disk_model *m, char *err, size_t errlen);
/* Angle of lba on its track, of the spindle at t; in [0, 1). */
double dm_angle_of(const struct disk_model *m, uint64_t lba);
double dm_angle_at(const struct disk_model *m, uint64_t t);
/* Sectors the head reads per ns in the zone of lba. */
double dm_sect_per_ns(const struct disk_model *m, uint64_t lba);
/* Media transfer of n sectors at lba; n sectors over the interface. */
uint64_t dm_xfer_ns(const struct disk_model *m, uint64_t lba, uint32_t n);
uint64_t dm_iface_ns(const struct disk_model *m, uint32_t n);

/* ---- disk_cfq.c (the elevator=cfq side of disk_elevator.c) ---- */
void dm_cfq_add(struct disk_model *m, struct dm_req *r, uint64_t t);
struct dm_req *dm_cfq_pick(struct disk_model *m, uint64_t t);
void dm_cfq_done(struct disk_model *m, struct dm_req *r, uint64_t t);
uint64_t dm_cfq_wake(const struct disk_model *m, uint64_t t);

/* ---- disk_model_ssd.c ---- */
/* Checks the flash keys and allocates the dies' and channels' clocks. */
int dm_ssd_init(struct disk_model *m, char *err, size_t errlen);
/* Runs every flash event due by now (dm_advance for DM_SSD). */
void dm_ssd_advance(struct disk_model *m, uint64_t now,
		    struct list_node *done);
#endif
