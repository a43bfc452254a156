/*
 * What the files of live changes share: live.c (comparing and committing),
 * live_lun.c (releasing a LUN), live_target.c (releasing a target). Not
 * for other modules.
 */
#ifndef TCQ_LIVE_PRIV_H
#define TCQ_LIVE_PRIV_H
#include <stdbool.h>

struct lun;
struct reactor;
struct target;

struct reactor *live_reactor(int i);
int live_nreactors(void);

/* l is out of its target's map: every reactor lets go of it (aborting
 * its tasks first with abort), then it is destroyed and done(arg) runs
 * on reactor 0. */
void live_lun_release(struct lun *l, bool abort, void (*done)(void *arg),
		      void *arg);
/* Tasks on l now, over every nexus. */
unsigned live_lun_tasks(struct lun *l);

/* t is out of tcqd->targets: its sessions are asked to log out (then
 * closed), its LUNs released, and it is freed; done(arg) on reactor 0. */
void live_target_release(struct target *t, void (*done)(void *arg),
			 void *arg);
#endif
