/* The SCSI target device: LUN lookup and the transport's ops. */
#include <stddef.h>
#include "scsi/lun.h"
#include "scsi/sdev.h"

struct lun *sdev_lun(const struct sdev *d, uint64_t nr)
{
	if (!d || nr >= (uint64_t)d->nluns || nr >= SDEV_MAX_LUNS)
		return NULL;
	return d->luns[nr];
}

const char *sdev_initiator_port(const struct lun *l, const void *nexus)
{
	const struct sdev *d = l ? l->dev : NULL;
	const char *p = NULL;

	if (nexus && d && d->ops && d->ops->initiator_port)
		p = d->ops->initiator_port(nexus);
	return p ? p : "";
}

void sdev_abort_tasks(struct lun *l, const char *iport, const void *except)
{
	struct sdev *d = l->dev;

	if (d && d->ops && d->ops->abort_tasks)
		d->ops->abort_tasks(d, l, iport, except);
}
