/*
 * tcqctl's live changes (ctl_priv.h): target, lun, portal, acl, chap and
 * set edit a copy of the running configuration with the config file's
 * own keys (cfg_set_pairs), the copy is checked as a file would be, and
 * live_apply makes it run (target/live.c); save, reload and config work
 * on the running configuration itself. Every answer of a change comes
 * once it is complete, with what changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcq/log.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "target/acl.h"
#include "target/config.h"
#include "target/isns.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"
#include "target/live.h"
#include "target/portal.h"
#include "target/session.h"
#include "target/target.h"

/* ---- options and names ------------------------------------------------- */

/* Takes --force and --shrink out of argv; -1 for any other option. */
static int take_flags(char **argv, int *argc, struct live_opts *o,
		      char *err, size_t errlen)
{
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--force"))
			o->force = true;
		else if (!strcmp(argv[i], "--shrink"))
			o->shrink = true;
		else if (!strncmp(argv[i], "--", 2)) {
			snprintf(err, errlen, "unknown option '%.32s' (--force, "
				 "--shrink)", argv[i]);
			return -1;
		} else
			argv[n++] = argv[i];
	}
	*argc = n;
	return 0;
}

/* "TARGET/N" into name and number; with one target, "N" will do. */
static int parse_lun_spec(const char *spec, char *name, size_t namelen,
			  unsigned *id, char *err, size_t errlen)
{
	const char *slash = strrchr(spec, '/'), *num = spec;
	char *end;
	unsigned long v;

	if (slash) {
		size_t n = (size_t)(slash - spec);

		if (n == 0 || n >= namelen) {
			snprintf(err, errlen, "'%.64s': bad target name", spec);
			return -1;
		}
		memcpy(name, spec, n);
		name[n] = '\0';
		num = slash + 1;
	} else if (tcqd->cfg->ntargets == 1) {
		snprintf(name, namelen, "%s", tcqd->cfg->targets[0]->name);
	} else {
		snprintf(err, errlen, "name the LUN as TARGET/N");
		return -1;
	}
	v = strtoul(num, &end, 10);
	if (*num < '0' || *num > '9' || *end || v >= TCQ_MAX_LUNS) {
		snprintf(err, errlen, "'%.64s' is not a LUN number (0..%d)", num,
			 TCQ_MAX_LUNS - 1);
		return -1;
	}
	*id = (unsigned)v;
	return 0;
}

/* ---- a change: copy, edit, check, apply --------------------------------- */

struct change {
	struct cfg *c;		/* the copy being edited */
	struct live_opts o;
	struct ctl_op *op;
	const char *what;	/* for the reply */
	char lun[TCQ_NAME_MAX + 8];	/* "TARGET/N" to describe, or "" */
};

static json_object *change_begin(struct change *ch, char *err,
				 size_t errlen)
{
	if (!tcqd || !tcqd->cfg)
		return ctl_reply_err("no running configuration");
	if (live_busy())
		return ctl_reply_err("an earlier change is still being "
				     "completed; try again in a moment");
	if (!(ch->c = malloc(sizeof(*ch->c))))
		return ctl_reply_err("out of memory");
	if (cfg_copy(ch->c, tcqd->cfg, err, errlen) < 0) {
		free(ch->c);
		ch->c = NULL;
		return ctl_reply_err("%s", err);
	}
	return NULL;
}

static json_object *change_fail(struct change *ch, const char *msg)
{
	json_object *r = ctl_reply_err("%s", msg);

	if (ch->c) {
		cfg_free(ch->c);
		free(ch->c);
	}
	return r;
}

/* The answer of a change: what changed, and for set the LUN as it is
 * now (what tcqctl set prints). */
struct answer {
	struct ctl_op *op;
	char lun[TCQ_NAME_MAX + 8];	/* "TARGET/N", or "" */
};

static void change_done(void *arg, int rc, const char *msg)
{
	struct answer *a = arg;
	json_object *r = ctl_reply_ok();
	char err[300];
	struct lun *l;

	ctl_add_str(r, "changed", *msg ? msg : "nothing");
	if (a->lun[0] && (l = ctl_find_lun(a->lun, err, sizeof(err))))
		json_object_object_add(r, "lun", ctl_lun_json(l));
	ctl_deferred_reply(a->op, r);
	free(a);
}

/* Checks the edited copy as a file is checked (written out and read
 * back), then applies it. The answer comes later. */
static json_object *change_commit(struct ctl_conn *cc, struct change *ch)
{
	struct cfg *checked = malloc(sizeof(*checked));
	char err[1024];
	struct ctl_op *op;

	if (!checked)
		return change_fail(ch, "out of memory");
	if (cfg_copy(checked, ch->c, err, sizeof(err)) < 0) {
		free(checked);
		return change_fail(ch, err);
	}
	cfg_free(ch->c);
	free(ch->c);
	ch->c = NULL;
	struct answer *a = calloc(1, sizeof(*a));

	if (!a || !(op = ctl_defer(cc))) {
		free(a);
		cfg_free(checked);
		free(checked);
		return ctl_reply_err("out of memory");
	}
	a->op = op;
	snprintf(a->lun, sizeof(a->lun), "%s", ch->lun);
	if (live_apply(checked, &ch->o, change_done, a, err,
		       sizeof(err)) < 0) {
		log_info("tcqctl %s refused: %s", ch->what, err);
		ctl_deferred_reply(op, ctl_reply_err("%s", err));
		free(a);
	}
	return NULL;
}

/* ---- target ------------------------------------------------------------- */

json_object *ctl_cmd_target(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "target" };
	char err[512];
	json_object *r;

	if (take_flags(argv, &argc, &ch.o, err, sizeof(err)) < 0)
		return ctl_reply_err("%s", err);
	if (argc < 2)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_TARGET, NULL, err,
						      sizeof(err)));
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	if (!strcmp(argv[0], "add")) {
		struct cfg_target *t = cfg_add_target(ch.c, argv[1], err,
						      sizeof(err));

		if (!t)
			return change_fail(&ch, err);
		if (cfg_set_pairs(ch.c, CFG_TARGET, t, argv + 2, argc - 2, err,
				  sizeof(err)) < 0)
			return change_fail(&ch, err);
	} else if (!strcmp(argv[0], "set")) {
		/* [target] keys in place: redirect (sessions already open
		 * stay), alias, CHAP, limits; others re-create it. */
		struct cfg_target *t = cfg_find_target(ch.c, argv[1]);

		if (argc < 3)
			return change_fail(&ch, ctl_usage(CTL_CMD_TARGET, "set",
							  err, sizeof(err)));
		if (!t) {
			snprintf(err, sizeof(err), "no target '%.230s'", argv[1]);
			return change_fail(&ch, err);
		}
		if (cfg_set_pairs(ch.c, CFG_TARGET, t, argv + 2, argc - 2, err,
				  sizeof(err)) < 0)
			return change_fail(&ch, err);
	} else if (!strcmp(argv[0], "remove")) {
		if (argc != 2)
			return change_fail(&ch, ctl_usage(CTL_CMD_TARGET,
							  "remove", err,
							  sizeof(err)));
		if (cfg_remove_target(ch.c, argv[1]) < 0) {
			snprintf(err, sizeof(err), "no target '%.230s'", argv[1]);
			return change_fail(&ch, err);
		}
	} else {
		return change_fail(&ch, "target: expected add, set or remove");
	}
	return change_commit(cc, &ch);
}

/* The iSNS registration's state, beside the targets it registers. */
static void isns_answer(json_object *r)
{
	struct isnsr_status st;
	json_object *o = json_object_new_object();

	isnsr_status(&st);
	if (!tcqd || !tcqd->set.isns[0])
		st.state = ISNSR_OFF;	/* the thread may not have seen it */
	ctl_add_str(o, "state", isnsr_state_name(st.state));
	ctl_add_str(o, "server", st.state == ISNSR_OFF ? "" : st.server);
	ctl_add_str(o, "error", st.error);
	ctl_add_u64(o, "targets", (uint64_t)st.targets);
	ctl_add_u64(o, "portals", (uint64_t)st.portals);
	ctl_add_u64(o, "period", st.period);
	ctl_add_u64(o, "failures", st.failures);
	json_object_object_add(r, "isns", o);
}

json_object *ctl_cmd_targets(struct ctl_conn *cc, char **argv, int argc)
{
	json_object *r = ctl_reply_ok(), *a = json_object_new_array();

	for (int i = 0; tcqd && i < tcqd->ntargets; i++) {
		struct target *t = tcqd->targets[i];
		json_object *o = json_object_new_object();
		json_object *luns = json_object_new_array();

		ctl_add_str(o, "name", t->dev.name);
		ctl_add_u64(o, "tpgt", t->dev.tpgt);
		ctl_add_u64(o, "sessions", sess_logged_in(t));
		ctl_add_bool(o, "chap", t->chap.chap.user[0] != 0);
		if (t->redirect[0]) {	/* where its normal logins are sent */
			ctl_add_str(o, "redirect", t->redirect);
			ctl_add_bool(o, "redirect_permanent",
				     t->redirect_permanent);
		}
		for (int j = 0; j < sdev_nluns(&t->dev); j++)
			if (sdev_lun(&t->dev, (uint64_t)j))
				json_object_array_add(luns,
						      json_object_new_int(j));
		json_object_object_add(o, "luns", luns);
		json_object_array_add(a, o);
	}
	json_object_object_add(r, "targets", a);
	isns_answer(r);
	return r;
}

/* ---- isns ----------------------------------------------------------------- */

/* tcqctl isns HOST[:PORT]|off: the [global] isns key, as a change. */
json_object *ctl_cmd_isns(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "isns" };
	char err[512], word[TCQ_NAME_MAX + 16], *kv[1] = { word };
	json_object *r;

	if (strlen(argv[0]) >= TCQ_NAME_MAX)
		return ctl_reply_err("bad value for 'isns': longer than %d "
				     "bytes", TCQ_NAME_MAX - 1);
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	snprintf(word, sizeof(word), "isns=%s", argv[0]);
	if (cfg_set_pairs(ch.c, CFG_GLOBAL, &ch.c->set, kv, 1, err,
			  sizeof(err)) < 0)
		return change_fail(&ch, err);
	return change_commit(cc, &ch);
}

/* ---- lun ---------------------------------------------------------------- */

json_object *ctl_cmd_lun(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "lun" };
	char err[512], name[TCQ_NAME_MAX];
	struct cfg_lun *l;
	unsigned id;
	json_object *r;

	if (take_flags(argv, &argc, &ch.o, err, sizeof(err)) < 0)
		return ctl_reply_err("%s", err);
	if (argc < 2)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_LUN, NULL, err,
						      sizeof(err)));
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	if (parse_lun_spec(argv[1], name, sizeof(name), &id, err,
			   sizeof(err)) < 0)
		return change_fail(&ch, err);
	if (!strcmp(argv[0], "add")) {
		if (!cfg_find_target(ch.c, name)) {
			snprintf(err, sizeof(err), "no target '%s'", name);
			return change_fail(&ch, err);
		}
		if (argc < 3)
			return change_fail(&ch, "lun add: give path=FILE or "
					   "backend=SPEC (and size=SIZE)");
		if (!(l = cfg_add_lun(ch.c, name, id, err, sizeof(err))))
			return change_fail(&ch, err);
		if (cfg_set_pairs(ch.c, CFG_LUN, l, argv + 2, argc - 2, err,
				  sizeof(err)) < 0)
			return change_fail(&ch, err);
		/* cfg_finish links it to its target when checked. */
		return change_commit(cc, &ch);
	}
	if (!(l = cfg_find_lun(ch.c, name, id))) {
		snprintf(err, sizeof(err), "target %s has no LUN %u", name, id);
		return change_fail(&ch, err);
	}
	if (!strcmp(argv[0], "remove")) {
		if (argc != 2)
			return change_fail(&ch, ctl_usage(CTL_CMD_LUN, "remove",
							  err, sizeof(err)));
		cfg_remove_lun(ch.c, name, id);
	} else if (!strcmp(argv[0], "resize")) {
		char *kv[1], word[80];

		if (argc != 3)
			return change_fail(&ch, ctl_usage(CTL_CMD_LUN, "resize",
							  err, sizeof(err)));
		snprintf(word, sizeof(word), "size=%.64s", argv[2]);
		kv[0] = word;
		if (cfg_set_pairs(ch.c, CFG_LUN, l, kv, 1, err, sizeof(err)) < 0)
			return change_fail(&ch, err);
		if (l->size == 0)
			return change_fail(&ch, "lun resize: the size must be "
					   "above 0");
	} else {
		return change_fail(&ch, "lun: expected add, remove or resize");
	}
	return change_commit(cc, &ch);
}

/* tcqctl set LUN key=value...: any [lun] key of a running LUN (a key
 * that cannot change in place re-creates the LUN, refused when busy). */
json_object *ctl_cmd_set(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "set" };
	char err[512], name[TCQ_NAME_MAX];
	struct cfg_lun *l;
	unsigned id;
	json_object *r;

	if (take_flags(argv, &argc, &ch.o, err, sizeof(err)) < 0)
		return ctl_reply_err("%s", err);
	if (argc < 2)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_SET, NULL, err,
						      sizeof(err)));
	struct lun *running = ctl_find_lun(argv[0], err, sizeof(err));

	if (!running)
		return ctl_reply_err("%s", err);
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	if (parse_lun_spec(argv[0], name, sizeof(name), &id, err,
			   sizeof(err)) < 0)
		return change_fail(&ch, err);
	if (!(l = cfg_find_lun(ch.c, name, id))) {
		snprintf(err, sizeof(err), "target %s has no LUN %u", name, id);
		return change_fail(&ch, err);
	}
	snprintf(ch.lun, sizeof(ch.lun), "%s", argv[0]);
	/* tcqctl has always said on|off for write_cache: the file's
	 * yes|no parser takes both. */
	if (cfg_set_pairs(ch.c, CFG_LUN, l, argv + 1, argc - 1, err,
			  sizeof(err)) < 0)
		return change_fail(&ch, err);
	/* A write-through backend (rbd cache=none) reports WCE 0 whatever
	 * the key says: asking for it on is an error, not a no-op, as WCE
	 * would claim writes may be lost that never can be. */
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "write_cache=", 12) && l->write_cache &&
		    running->bdev && running->bdev->write_through)
			return change_fail(&ch, "write_cache on: the backend has "
					   "no volatile write cache");
	}
	return change_commit(cc, &ch);
}

/* ---- portal ------------------------------------------------------------- */

json_object *ctl_cmd_portal(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "portal" };
	char err[512];
	json_object *r;

	if (argc != 2 || (strcmp(argv[0], "add") && strcmp(argv[0], "remove")))
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_PORTAL, NULL, err,
						      sizeof(err)));
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	if (!strcmp(argv[0], "add")) {
		if (cfg_add_listen(ch.c, argv[1], err, sizeof(err)) < 0)
			return change_fail(&ch, err);
		return change_commit(cc, &ch);
	}
	/* By the address it listens on, or as configured. */
	const char *conf = NULL;

	for (int i = 0; i < tcqd->nportals; i++)
		if (!strcasecmp(tcqd->portals[i]->addr_text, argv[1]) ||
		    !strcasecmp(tcqd->portals[i]->conf_text, argv[1]))
			conf = tcqd->portals[i]->conf_text;
	if (!conf || cfg_remove_listen(ch.c, conf) < 0) {
		snprintf(err, sizeof(err), "no portal '%.64s'", argv[1]);
		return change_fail(&ch, err);
	}
	if (ch.c->nlisten == 0)
		return change_fail(&ch, "that is the last portal: add another "
				   "one first");
	return change_commit(cc, &ch);
}

/* ---- acl and chap ------------------------------------------------------- */

/* An initiator name pattern, or a network (ADDR[/BITS]). */
static bool is_network(const char *s)
{
	struct acl_net n;
	char err[160];

	return acl_parse_net(s, &n, err, sizeof(err)) == 0;
}

/* acl set TARGET INITIATOR-NAME KEY=VALUE...: the keys of its
 * [initiator] section (made if missing); acl clear: the section goes. */
static json_object *acl_initiator(struct ctl_conn *cc, struct change *ch,
				  char **argv, int argc)
{
	bool set = !strcmp(argv[0], "set");
	struct cfg_initiator *ci;
	char err[700];

	if (!cfg_find_target(ch->c, argv[1])) {
		snprintf(err, sizeof(err), "no target '%.230s'", argv[1]);
		return change_fail(ch, err);
	}
	ci = cfg_find_initiator(ch->c, argv[1], argv[2]);
	if (!set) {
		if (!ci) {
			snprintf(err, sizeof(err), "target %.230s has no "
				 "[initiator] section for '%.230s'", argv[1],
				 argv[2]);
			return change_fail(ch, err);
		}
		cfg_remove_initiator(ch->c, argv[1], argv[2]);
		return change_commit(cc, ch);
	}
	if (!ci && !(ci = cfg_add_initiator(ch->c, argv[1], argv[2], err,
					    sizeof(err))))
		return change_fail(ch, err);
	/* luns= replaces the map (several luns= words add up). */
	for (int i = 3; i < argc; i++) {
		if (!strncmp(argv[i], "luns=", 5)) {
			ci->has_map = false;
			ci->nmap = 0;
		}
	}
	if (cfg_set_pairs(ch->c, CFG_INITIATOR, ci, argv + 3, argc - 3, err,
			  sizeof(err)) < 0)
		return change_fail(ch, err);
	return change_commit(cc, ch);
}

json_object *ctl_cmd_acl(struct ctl_conn *cc, char **argv, int argc)
{
	struct change ch = { .what = "acl" };
	char err[512], word[300], *kv[1] = { word };
	struct cfg_target *t;
	json_object *r;
	bool net;

	if (argc >= 4 && !strcmp(argv[0], "set")) {
		if ((r = change_begin(&ch, err, sizeof(err))))
			return r;
		return acl_initiator(cc, &ch, argv, argc);
	}
	if (argc == 3 && !strcmp(argv[0], "clear")) {
		if ((r = change_begin(&ch, err, sizeof(err))))
			return r;
		return acl_initiator(cc, &ch, argv, argc);
	}
	if (argc != 3 || (strcmp(argv[0], "add") && strcmp(argv[0], "remove")))
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_ACL, NULL, err,
						      sizeof(err)));
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	if (!(t = cfg_find_target(ch.c, argv[1]))) {
		snprintf(err, sizeof(err), "no target '%.230s'", argv[1]);
		return change_fail(&ch, err);
	}
	net = is_network(argv[2]);
	if (!strcmp(argv[0], "add")) {
		snprintf(word, sizeof(word), "%s=%s", net ? "allow_network" :
			 "allow_initiator", argv[2]);
		if (cfg_set_pairs(ch.c, CFG_TARGET, t, kv, 1, err,
				  sizeof(err)) < 0)
			return change_fail(&ch, err);
	} else if ((net ? acl_remove_net(&t->acl, argv[2]) :
		    acl_remove_name(&t->acl, argv[2])) < 0) {
		snprintf(err, sizeof(err), "target %s: '%.230s' is not in its "
			 "ACL", t->name, argv[2]);
		return change_fail(&ch, err);
	}
	return change_commit(cc, &ch);
}

/* chap set TARGET user=U secret=S [mutual_user=U mutual_secret=S];
 * chap clear TARGET. TARGET "discovery" is discovery sessions' CHAP. */
json_object *ctl_cmd_chap(struct ctl_conn *cc, char **argv, int argc)
{
	static const char *const short_names[] = {
		"user", "secret", "mutual_user", "mutual_secret" };
	struct change ch = { .what = "chap" };
	char err[512], words[8][320], *kv[8];
	bool disc;
	struct cfg_target *t = NULL;
	json_object *r;

	if (argc < 2 || (strcmp(argv[0], "set") && strcmp(argv[0], "clear")) ||
	    (!strcmp(argv[0], "clear") && argc != 2) || argc > 2 + 8)
		return ctl_reply_err("%s", ctl_usage(CTL_CMD_CHAP, NULL, err,
						      sizeof(err)));
	if ((r = change_begin(&ch, err, sizeof(err))))
		return r;
	disc = !strcmp(argv[1], "discovery");
	if (!disc && !(t = cfg_find_target(ch.c, argv[1]))) {
		snprintf(err, sizeof(err), "no target '%.230s'", argv[1]);
		return change_fail(&ch, err);
	}
	struct auth_chap_cfg *a = disc ? &ch.c->set.discovery_chap : &t->chap;

	/* set replaces the whole CHAP setting of the target. */
	memset(a, 0, sizeof(*a));
	if (!strcmp(argv[0], "clear"))
		return change_commit(cc, &ch);
	for (int i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t kl = eq ? (size_t)(eq - argv[i]) : 0;
		bool known = false;

		for (int j = 0; j < 4 && eq; j++) {
			if (strlen(short_names[j]) != kl ||
			    strncmp(argv[i], short_names[j], kl))
				continue;
			/* user= is chap_user in the file, and so on. */
			snprintf(words[i - 2], sizeof(words[0]), "%s%s_%s",
				 disc ? "discovery_" : "",
				 j < 2 ? "chap" : "mutual_chap",
				 j % 2 ? "secret" : "user");
			snprintf(words[i - 2] + strlen(words[i - 2]),
				 sizeof(words[0]) - strlen(words[i - 2]), "=%s",
				 eq + 1);
			known = true;
		}
		if (!known) {
			snprintf(err, sizeof(err), "chap set: '%.*s' is not user, "
				 "secret, mutual_user or mutual_secret",
				 eq ? (int)kl : 32, argv[i]);
			return change_fail(&ch, err);
		}
		kv[i - 2] = words[i - 2];
	}
	if (cfg_set_pairs(ch.c, disc ? CFG_GLOBAL : CFG_TARGET,
			  disc ? (void *)&ch.c->set : (void *)t, kv, argc - 2,
			  err, sizeof(err)) < 0)
		return change_fail(&ch, err);
	return change_commit(cc, &ch);
}

/* ---- save, reload, config ----------------------------------------------- */

json_object *ctl_cmd_save(struct ctl_conn *cc, char **argv, int argc)
{
	const char *path = argc ? argv[0] : tcqd ? tcqd->cfg_path : "";
	char err[512];
	json_object *r;

	if (!tcqd || !tcqd->cfg)
		return ctl_reply_err("no running configuration");
	if (!path[0])
		return ctl_reply_err("save: tcqd was started without a file "
				     "(--export): name one");
	if (cfg_save(tcqd->cfg, path, err, sizeof(err)) < 0)
		return ctl_reply_err("save: %s", err);
	log_info("tcqctl: configuration saved to %s", path);
	r = ctl_reply_ok();
	ctl_add_str(r, "file", path);
	return r;
}

json_object *ctl_cmd_reload(struct ctl_conn *cc, char **argv, int argc)
{
	struct answer *a = calloc(1, sizeof(*a));
	char err[4096];

	if (!a || !(a->op = ctl_defer(cc))) {
		free(a);
		return ctl_reply_err("out of memory");
	}
	if (live_reload(change_done, a, err, sizeof(err)) < 0) {
		log_err("reload refused: %s", err);
		ctl_deferred_reply(a->op, ctl_reply_err("%s", err));
		free(a);
	}
	return NULL;
}

json_object *ctl_cmd_config(struct ctl_conn *cc, char **argv, int argc)
{
	char *text;
	json_object *r;

	if (!tcqd || !tcqd->cfg)
		return ctl_reply_err("no running configuration");
	if (!(text = cfg_format(tcqd->cfg, NULL)))
		return ctl_reply_err("out of memory");
	r = ctl_reply_ok();
	ctl_add_str(r, "text", text);
	free(text);
	return r;
}
