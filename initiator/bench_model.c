/*
 * --ctl SOCKET: the device model's statistics of the LUN under test
 * (tcqd's disk backend), asked of tcqd's control socket before and after
 * each point (the luns command, through the common client of
 * tcq/ctl_client.h), so the JSON and --detail show per point the mean
 * drive and host queue of the model, its read-ahead hits, cached writes,
 * destages and busy dies: why a curve bends. The model's means are time
 * averages since the LUN opened; a point's is the difference of the two
 * snapshots' areas (mean x elapsed) over the difference of their times
 * (the ramp is in it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "tcq/ctl_client.h"
#include "tcq/ctl_cmds.h"
#include "initiator/bench.h"

#define CTL_TIMEOUT_S 10

/* The target name and LUN number of an iscsi:// URL (the last two path
 * components). */
static int url_lun(const char *url, char *iqn, size_t len, long *lun)
{
	const char *slash = strrchr(url, '/'), *prev;
	char *end;

	if (!slash || slash == url)
		return -1;
	*lun = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || *end)
		return -1;
	for (prev = slash - 1; prev > url && *prev != '/'; prev--)
		;
	if (*prev != '/' || (size_t)(slash - prev - 1) >= len)
		return -1;
	memcpy(iqn, prev + 1, (size_t)(slash - prev - 1));
	iqn[slash - prev - 1] = '\0';
	return 0;
}

static double num(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v)
						   : 0.0;
}

int bench_model_snap(const char *sock, const char *url,
		     struct bench_model_snap *s)
{
	char iqn[256], line[32], err[512], *txt;
	json_object *r, *luns, *m;
	long lun;
	int rc = -1;

	memset(s, 0, sizeof(*s));
	if (url_lun(url, iqn, sizeof(iqn), &lun) < 0)
		return -1;
	/* A failure leaves the point without the model's figures. */
	snprintf(line, sizeof(line), "%s\n", ctl_cmd_defs[CTL_CMD_LUNS].name);
	txt = ctl_client_request(sock, line, CTL_TIMEOUT_S, err, sizeof(err));
	if (!txt)
		return -1;
	r = json_tokener_parse(txt);
	free(txt);
	if (!r)
		return -1;
	if (json_object_object_get_ex(r, "luns", &luns) &&
	    json_object_is_type(luns, json_type_array)) {
		size_t n = json_object_array_length(luns);

		for (size_t i = 0; i < n; i++) {
			json_object *l = json_object_array_get_idx(luns, i), *t;
			const char *name;

			if (!json_object_object_get_ex(l, "target", &t))
				continue;
			name = json_object_get_string(t);
			if (!name || strcmp(name, iqn) || (long)num(l, "lun") != lun)
				continue;
			if (!json_object_object_get_ex(l, "model", &m))
				break;
			if (json_object_object_get_ex(m, "model", &t))
				snprintf(s->model, sizeof(s->model), "%s",
					 json_object_get_string(t));
			s->commands = num(m, "commands");
			s->read_hits = num(m, "read_hits");
			s->cached_writes = num(m, "cached_writes");
			s->destages = num(m, "destages");
			s->elapsed = num(m, "elapsed_ns");
			s->drive_area = num(m, "mean_drive_queue") * s->elapsed;
			s->host_area = num(m, "mean_host_queue") * s->elapsed;
			s->dies_area = num(m, "mean_busy_dies") * s->elapsed;
			s->cmd_area = num(m, "mean_commands") * s->elapsed;
			s->ok = true;
			rc = 0;
			break;
		}
	}
	json_object_put(r);
	return rc;
}

void bench_model_delta(const struct bench_model_snap *a,
		       const struct bench_model_snap *b,
		       struct bench_model_point *out)
{
	double dt = b->elapsed - a->elapsed;

	memset(out, 0, sizeof(*out));
	if (!a->ok || !b->ok)
		return;
	out->ok = true;
	snprintf(out->model, sizeof(out->model), "%s", b->model);
	out->commands = b->commands - a->commands;
	out->read_hits = b->read_hits - a->read_hits;
	out->cached_writes = b->cached_writes - a->cached_writes;
	out->destages = b->destages - a->destages;
	if (dt > 0) {
		out->mean_drive_queue = (b->drive_area - a->drive_area) / dt;
		out->mean_host_queue = (b->host_area - a->host_area) / dt;
		out->mean_busy_dies = (b->dies_area - a->dies_area) / dt;
		out->mean_commands = (b->cmd_area - a->cmd_area) / dt;
	}
}
