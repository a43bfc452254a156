/*
 * What the files of the control socket share: ctl.c (the server: socket,
 * connections, the line protocol, the handlers of the command table),
 * ctl_luns.c (LUN lookup; luns, crash), ctl_stats.c (stats, reset,
 * metrics), ctl_sessions.c (sessions), ctl_live.c (live changes with set,
 * targets, save, reload, config) and metrics_prom.c (the Prometheus
 * text, which walks the LUNs with ctl_for_each_lun). Not for other
 * modules.
 */
#ifndef TCQ_CTL_PRIV_H
#define TCQ_CTL_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <json-c/json.h>
#include "tcq/ctl_cmds.h"

struct ctl_conn;
struct lun;

/* A command's work: argc within the command's bounds. Returns the reply,
 * or NULL when it comes later (ctl_on_every_reactor). */
typedef json_object *ctl_handler(struct ctl_conn *cc, char **argv,
				 int argc);

/* tcqd's handler of each row of the command table (tcq/ctl_cmds.h);
 * tests/unit/test_ctl_cmds.c checks there is one for every row. */
extern ctl_handler *const ctl_handlers[CTL_NCMDS];

/* "usage: " and the command's forms (all, or the one named form, see
 * ctl_cmd_def_usage), into buf, which it returns. */
const char *ctl_usage(enum ctl_cmd_id id, const char *form, char *buf,
		      size_t len);

/* ---- replies (ctl.c) ---- */
json_object *ctl_reply_ok(void);
json_object *ctl_reply_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void ctl_add_u64(json_object *o, const char *k, uint64_t v);
void ctl_add_str(json_object *o, const char *k, const char *v);
void ctl_add_bool(json_object *o, const char *k, bool v);
/* ns as microseconds, to 0.1 us. */
void ctl_add_us(json_object *o, const char *k, uint64_t ns);

/* Runs fn(arg) on every reactor, this one last, then answers cc
 * {"ok":true}. Returns NULL (the answer comes later) or an error reply. */
json_object *ctl_on_every_reactor(struct ctl_conn *cc, void (*fn)(void *),
				  void *arg);

/* An answer that comes later, once a live change completes: NULL when
 * out of memory. ctl_deferred_reply sends it (or drops it if the client
 * left) and frees op; on reactor 0. */
struct ctl_op;
struct ctl_op *ctl_defer(struct ctl_conn *cc);
void ctl_deferred_reply(struct ctl_op *op, json_object *reply);

/* ---- LUNs (ctl_luns.c) ---- */
/* Calls fn for every LUN of every target, or just for only. */
void ctl_for_each_lun(struct lun *only, void (*fn)(struct lun *l, void *a),
		      void *arg);
/* The identity and live settings of a LUN. */
json_object *ctl_lun_json(const struct lun *l);
/* {"ok":true,"luns":[...]}: what fn adds for each LUN, or for the one
 * argv[0] names (argc 0 or 1). */
json_object *ctl_reply_luns(char **argv, int argc,
			    void (*fn)(struct lun *l, void *array));

/* ---- the commands ---- */
json_object *ctl_cmd_luns(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_set(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_crash(struct ctl_conn *cc, char **argv, int argc);
/* ctl_record.c: the crash lab's recording, marks, and what stats shows
 * of it and of the durability audit */
json_object *ctl_cmd_record(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_mark(struct ctl_conn *cc, char **argv, int argc);
void ctl_record_stats(struct lun *l, json_object *o);
/* Waits until no record start copies a base (tcqd's stop). */
void ctl_record_quiesce(void);
json_object *ctl_cmd_stats(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_reset(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_metrics(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_sessions(struct ctl_conn *cc, char **argv, int argc);
/* ctl_live.c: live changes, save, reload, the running configuration */
json_object *ctl_cmd_target(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_targets(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_lun(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_portal(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_acl(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_chap(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_save(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_reload(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_config(struct ctl_conn *cc, char **argv, int argc);
json_object *ctl_cmd_isns(struct ctl_conn *cc, char **argv, int argc);
#endif
