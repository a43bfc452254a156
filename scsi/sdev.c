/* The SCSI target device: LUN lookup and the transport's ops. */
#include <stddef.h>
#include "scsi/lun.h"
#include "scsi/sdev.h"

struct lun *sdev_lun(const struct sdev *d, uint64_t nr)
{
	if (!d || nr >= SDEV_MAX_LUNS)
		return NULL;
	return __atomic_load_n(&d->luns[nr], __ATOMIC_ACQUIRE);
}

int sdev_nluns(const struct sdev *d)
{
	return d ? __atomic_load_n(&d->nluns, __ATOMIC_ACQUIRE) : 0;
}

void sdev_set_lun(struct sdev *d, unsigned nr, struct lun *l)
{
	if (nr >= SDEV_MAX_LUNS)
		return;
	__atomic_store_n(&d->luns[nr], l, __ATOMIC_RELEASE);
	if (l && (int)nr >= d->nluns)
		__atomic_store_n(&d->nluns, (int)nr + 1, __ATOMIC_RELEASE);
}

struct lun *sdev_map_lun(const struct sdev *d, const struct sdev_map *m,
			 uint64_t nr, bool *ro)
{
	*ro = false;
	if (!m)
		return sdev_lun(d, nr);
	if (nr >= SDEV_MAX_LUNS || !m->e[nr].used)
		return NULL;
	*ro = m->e[nr].ro;
	return sdev_lun(d, m->e[nr].lun);
}

int sdev_map_number(const struct sdev_map *m, unsigned lun, bool *ro)
{
	*ro = false;
	if (!m)
		return lun < SDEV_MAX_LUNS ? (int)lun : -1;
	for (int i = 0; i < m->n; i++) {
		if (m->e[i].used && m->e[i].lun == lun) {
			*ro = m->e[i].ro;
			return i;
		}
	}
	return -1;
}

const struct sdev_map *sdev_nexus_map(const struct sdev *d,
				      const void *nexus)
{
	if (nexus && d && d->ops && d->ops->lun_map)
		return d->ops->lun_map(nexus);
	return NULL;
}

const char *sdev_initiator_port(const struct lun *l, const void *nexus)
{
	const struct sdev *d = l ? l->dev : NULL;
	const char *p = NULL;

	if (nexus && d && d->ops && d->ops->initiator_port)
		p = d->ops->initiator_port(nexus);
	return p ? p : "";
}

