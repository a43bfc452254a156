/*
 * Live changes (DESIGN.md, "Live changes"): a new configuration replaces
 * the running one without a restart. Every change, from tcqctl or a
 * reload, is made the same way: the new configuration is a checked
 * struct cfg (so the file's keys, values and checks apply); live_apply
 * compares it with the running one key by key, prepares everything that
 * can fail (backends opened, portals bound) and only then commits, so a
 * change happens whole or not at all. What is let go of (LUNs, targets)
 * is released afterwards, asynchronously, reactor by reactor.
 */
#ifndef TCQ_LIVE_H
#define TCQ_LIVE_H
#include <stdbool.h>
#include <stddef.h>

struct cfg;
struct reactor;
struct lun;
struct tcqd;

struct live_opts {
	bool force;	/* abort a busy LUN's tasks, log out a removed
			 * target's sessions */
	bool shrink;	/* a LUN's size may go down */
};

/* Called once the change is complete (everything released), on reactor 0.
 * rc 0; msg says what changed ("" when nothing did). */
typedef void live_done_fn(void *arg, int rc, const char *msg);

/* The reactors the releases run on; before the first change. */
void live_init(struct reactor **rs, int n);

/*
 * On reactor 0: makes n (checked, owned by the callee from now on) the
 * running configuration. -1 with a message in err when it is refused
 * (nothing changed). 0 when committed: done runs once the releases end
 * (maybe before live_apply returns).
 */
int live_apply(struct cfg *n, const struct live_opts *o, live_done_fn *done,
	       void *arg, char *err, size_t errlen);
/* Whether a change is still being released (a new one is refused). */
bool live_busy(void);
/* On reactor 0: work that must not meet a live change (tcqctl record
 * start holds a LUN while it copies its base) keeps them refused from
 * begin to end. begin: -1 with err when a change is under way. */
int live_busy_begin(char *err, size_t errlen);
void live_busy_end(void);

/* Re-reads the file tcqd was started with and applies it (SIGHUP,
 * tcqctl reload). As live_apply; the file's errors name file:line. */
int live_reload(live_done_fn *done, void *arg, char *err, size_t errlen);
/* What the command line overrode in the file (tcqd --ctl, ...), applied
 * again to each file a reload reads. */
void live_set_overrides(void (*fn)(struct cfg *c, const void *arg),
			const void *arg);
/* Called as a reload begins and once it ended (applied or refused):
 * tcqd tells systemd RELOADING=1, then READY=1. */
void live_set_reload_notify(void (*begin)(void), void (*end)(void));
/* Called on reactor 0 after each committed change, once the new lists
 * and settings are in tcqd (tcqd: iSNS follows targets and portals). */
void live_set_commit_notify(void (*fn)(void));
/* Frees what live changes kept until exit (removed portals). */
void live_fini(void);
#endif
