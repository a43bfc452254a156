/*
 * What the files of live changes share: live.c (comparing and committing),
 * live_lun.c (releasing a LUN), live_target.c (releasing a target),
 * live_reload.c (reload, and the hooks tcqd sets). Not for other modules.
 */
#ifndef TCQ_LIVE_PRIV_H
#define TCQ_LIVE_PRIV_H
#include <stdbool.h>

struct bdev;
struct cfg;
struct cfg_lun;
struct lun;
struct reactor;
struct target;

struct reactor *live_reactor(int i);
/* live_set_commit_notify's (live_reload.c), run by each commit. */
extern void (*live_commit_notify)(void);
int live_nreactors(void);

/* l is out of its target's map: every reactor lets go of it (aborting
 * its tasks first with abort), then it is destroyed and done(arg) runs
 * on reactor 0. */
void live_lun_release(struct lun *l, bool abort, void (*done)(void *arg),
		      void *arg);
/* A cdrom's disc (target/live_media.c). Whether path is the only key
 * that differs among those that re-create a LUN, both sections being
 * cdroms: its disc changes in place. */
bool live_media_only(const struct cfg *o, const struct cfg_lun *ol,
		     const struct cfg *n, const struct cfg_lun *nl);
/* Prepares the change: refused while an initiator prevents medium
 * removal (unless force); opens nl's image into *out (NULL: none). */
int live_media_prepare(struct target *t, struct lun *l,
		       const struct cfg_lun *nl, bool force, struct bdev **out,
		       char *err, size_t errlen);
/* Takes l's disc out now and puts nb in (NULL: none) once every reactor
 * has let go of the old one; done(arg) then, on reactor 0. */
void live_media_change(struct lun *l, struct bdev *nb,
		       void (*done)(void *arg), void *arg);
/* Tasks on l now, over every nexus. */
unsigned live_lun_tasks(struct lun *l);

/* t is out of tcqd->targets: its sessions are asked to log out (then
 * closed), its LUNs released, and it is freed; done(arg) on reactor 0. */
void live_target_release(struct target *t, void (*done)(void *arg),
			 void *arg);
#endif
