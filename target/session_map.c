/*
 * A session's LUN map (session_priv.h): its initiator's [initiator]
 * section on the target (target/initiator.h), copied at login and again
 * on the session's own reactor once the target's sections were replaced,
 * so the data path looks LUNs up without a lock (sess_lun) and the old
 * copy is freed where it was read.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "scsi/sdev.h"
#include "scsi/ua.h"
#include "target/initiator.h"
#include "target/session.h"
#include "target/session_priv.h"

static bool same_map(const struct sdev_map *a, const struct sdev_map *b)
{
	if (!a || !b)
		return a == b;
	return a->n == b->n &&
	       !memcmp(a->e, b->e, sizeof(a->e[0]) * (size_t)a->n);
}

/* SPC-4 5.14, 6.33: the inventory this nexus sees changed: REPORTED
 * LUNS DATA HAS CHANGED on every LUN it now reaches, whichever number
 * it uses, so that it rescans. A LUN it reaches for the first time is
 * joined here, and reports POWER ON, RESET first. */
static void announce(struct session *s)
{
	const struct sdev *d = &s->target->dev;
	int n = s->map ? s->map->n : sdev_nluns(d);

	for (int i = 0; i < n; i++) {
		bool ro;
		struct lun *l = sdev_map_lun(d, s->map, (uint64_t)i, &ro);
		struct taskset *ts = l ? sess_taskset(s, l) : NULL;

		if (ts)
			ua_establish(ts, ASC_REPORTED_LUNS_CHANGED);
	}
}

bool sess_map_load(struct session *s, bool announce_change)
{
	struct sdev_map *m;
	uint64_t gen;
	int rc;

	tcqd_read_lock();
	gen = __atomic_load_n(&s->target->inits_gen, __ATOMIC_ACQUIRE);
	rc = tinit_map_copy(s->target, s->iname, &m);
	tcqd_read_unlock();
	if (rc < 0) {
		log_err("session TSIH %u: out of memory copying its LUN map",
			s->tsih);
		return false;
	}
	s->map_gen = gen;
	if (same_map(m, s->map)) {
		free(m);
		return true;
	}
	free(s->map);
	s->map = m;
	if (announce_change) {
		log_info("session TSIH %u of %s: its LUN map changed", s->tsih,
			 s->iname);
		announce(s);
	}
	return true;
}

const struct sdev_map *sess_lun_map(const void *nexus)
{
	return ((const struct session *)nexus)->map;
}
