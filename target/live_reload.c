/*
 * Reloading the configuration file (live.h): SIGHUP and tcqctl reload read
 * the file tcqd was started with again, put the command line's overrides
 * back on it, and apply it as any live change: whole or not at all, with
 * the file's own messages (file:line) when it has errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "target/config.h"
#include "target/live.h"
#include "target/live_priv.h"
#include "target/portal.h"
#include "target/target.h"

static struct {
	void (*fn)(struct cfg *c, const void *arg);
	const void *arg;
} overrides;

void live_set_overrides(void (*fn)(struct cfg *c, const void *arg),
			const void *arg)
{
	overrides.fn = fn;
	overrides.arg = arg;
}

static struct {
	void (*begin)(void), (*end)(void);
} notify;

void live_set_reload_notify(void (*begin)(void), void (*end)(void))
{
	notify.begin = begin;
	notify.end = end;
}

void (*live_commit_notify)(void);

void live_set_commit_notify(void (*fn)(void))
{
	live_commit_notify = fn;
}

/* The caller's done, after telling the service manager. */
struct reload_done {
	live_done_fn *done;
	void *arg;
};

static void reload_finished(void *arg, int rc, const char *msg)
{
	struct reload_done rd = *(struct reload_done *)arg;

	free(arg);
	if (notify.end)
		notify.end();
	if (rd.done)
		rd.done(rd.arg, rc, msg);
}

static int reload(live_done_fn *done, void *arg, char *err, size_t errlen);

int live_reload(live_done_fn *done, void *arg, char *err, size_t errlen)
{
	struct reload_done *rd = malloc(sizeof(*rd));
	int rc;

	if (!rd) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rd->done = done;
	rd->arg = arg;
	if (notify.begin)
		notify.begin();
	rc = reload(reload_finished, rd, err, errlen);
	if (rc < 0) {
		free(rd);
		if (notify.end)
			notify.end();
	}
	return rc;
}

static int reload(live_done_fn *done, void *arg, char *err, size_t errlen)
{
	struct cfg *n;

	if (!tcqd || !tcqd->cfg_path[0]) {
		snprintf(err, errlen, "tcqd was started without a configuration "
			 "file (--export): there is nothing to reload");
		return -1;
	}
	if (!(n = malloc(sizeof(*n)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cfg_init(n);
	if (cfg_load_file(n, tcqd->cfg_path) < 0) {
		size_t len = 0;

		len += (size_t)snprintf(err, errlen, "%s: %d error%s, nothing "
					"changed", tcqd->cfg_path, n->nerrors,
					n->nerrors == 1 ? "" : "s");
		for (int i = 0; i < n->nmsgs && len < errlen; i++)
			len += (size_t)snprintf(err + len, errlen - len, "\n%s",
						n->msgs[i]);
		cfg_free(n);
		free(n);
		return -1;
	}
	for (int i = 0; i < n->nmsgs; i++)
		log_warn("%s", n->msgs[i]);
	if (overrides.fn)
		overrides.fn(n, overrides.arg);
	return live_apply(n, NULL, done, arg, err, errlen);
}
