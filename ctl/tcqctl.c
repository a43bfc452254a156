/*
 * tcqctl: the control CLI of tcqd. Sends one request line over tcqd's unix
 * control socket (target/ctl.c), reads the JSON answer and prints it as
 * text, or as JSON with --json. Exit status: 0 success, 1 an error from
 * tcqd or the socket, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>

#define DEFAULT_SOCKET "/run/tcqd.sock"
#define REPLY_MAX (64u << 20)	/* refuse absurd answers */
#define TIMEOUT_S 30

static void usage(FILE *f)
{
	fprintf(f,
"usage: tcqctl [-s SOCKET] [--json] COMMAND [ARGS]\n"
"\n"
"watching:\n"
"  stats [LUN]              per-LUN statistics: commands by task attribute,\n"
"                           in-flight I/O (now, peak, occupancy at submit),\n"
"                           latency percentiles, ORDERED drain time, flushes\n"
"  luns [LUN]               LUNs and their live settings\n"
"  targets                  targets, their LUNs and sessions\n"
"  sessions                 sessions and their negotiated parameters\n"
"  config                   the running configuration, as tcqd.conf text\n"
"  metrics                  the statistics as Prometheus text (also\n"
"                           stats --prometheus; tcqd --metrics serves it)\n"
"  reset [LUN]              zero the statistics\n"
"\n"
"live changes (sessions stay up; each is whole or not at all; the keys\n"
"are those of tcqd.conf, see tcqd.conf(5)):\n"
"  target add IQN [KEY=VALUE...]      a new target ([target] keys)\n"
"  target remove IQN [--force]        refused while it has sessions;\n"
"                                     --force asks them to log out\n"
"  lun add TARGET/N KEY=VALUE...      a new LUN: path=FILE or backend=SPEC,\n"
"                                     size=SIZE, create=yes, any [lun] key\n"
"  lun remove TARGET/N [--force]      refused with tasks in flight; --force\n"
"                                     aborts them as a LUN reset would\n"
"  lun resize TARGET/N SIZE [--shrink] a file grows (or shrinks); a block\n"
"                                     device or rbd image is re-read\n"
"  set LUN KEY=VALUE...               change [lun] keys: queue_depth,\n"
"                                     barrier, write_cache change in place;\n"
"                                     others re-create the LUN\n"
"  portal add|remove ADDR:PORT        listen on one more address, or stop\n"
"  acl add|remove TARGET NAME|NET     who may log in (an initiator name\n"
"                                     pattern, or ADDR[/BITS])\n"
"  chap set TARGET user=U secret=S [mutual_user=U mutual_secret=S]\n"
"  chap clear TARGET                  CHAP of a target (TARGET 'discovery':\n"
"                                     of discovery sessions)\n"
"  save [FILE]                        write the running configuration\n"
"                                     (default: tcqd's file), atomically, 0600\n"
"  reload                             read tcqd's file again and apply the\n"
"                                     difference (as SIGHUP does)\n"
"  crash LUN                          drop every unsaved write of a 'cache'\n"
"                                     backend LUN, as a power cut would\n"
"\n"
"LUN is TARGET/N, or just N when tcqd serves one target. Adding or\n"
"removing a LUN gives the target's initiators REPORTED LUNS DATA HAS\n"
"CHANGED; a resize gives CAPACITY DATA HAS CHANGED.\n"
"\n"
"options:\n"
"  -s, --socket PATH, --ctl PATH\n"
"                           tcqd's control socket (default $TCQ_CTL, else\n"
"                           " DEFAULT_SOCKET "; tcqd --ctl or ctl in [global])\n"
"  -j, --json               print tcqd's JSON answer\n"
"      --prometheus         with stats: Prometheus text, as metrics\n"
"  -h, --help               show this help\n");
}

static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "tcqctl: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nTry 'tcqctl --help'.\n");
	exit(2);
}

/* ---- talking to tcqd ----------------------------------------------------- */

static char *request(const char *path, const char *line)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = TIMEOUT_S };
	size_t len = 0, cap = 4096, n = strlen(line), off = 0;
	char *buf;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "tcqctl: %s: path too long\n", path);
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "tcqctl: cannot connect to %s: %s%s\n", path,
			strerror(errno), errno == ENOENT ?
			" (is tcqd running with --ctl? try -s PATH)" : "");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (off < n) {
		ssize_t w = send(fd, line + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "tcqctl: %s: send: %s\n", path,
				strerror(errno));
			close(fd);
			return NULL;
		}
		off += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	buf = malloc(cap);
	for (;;) {
		ssize_t r;

		if (!buf) {
			fprintf(stderr, "tcqctl: out of memory\n");
			close(fd);
			return NULL;
		}
		if (len + 1 == cap) {
			char *nb = cap >= REPLY_MAX ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				fprintf(stderr, "tcqctl: answer too large\n");
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "tcqctl: %s: %s\n", path,
				errno == EAGAIN ? "no answer (timed out)" :
				strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* ---- JSON helpers -------------------------------------------------------- */

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (o && json_object_object_get_ex(o, k, &v))
		return v;
	return NULL;
}

static int64_t geti(json_object *o, const char *k)
{
	return json_object_get_int64(get(o, k));
}

static double getd(json_object *o, const char *k)
{
	return json_object_get_double(get(o, k));
}

static const char *gets_(json_object *o, const char *k)
{
	const char *s = json_object_get_string(get(o, k));

	return s ? s : "";
}

/* ---- text output --------------------------------------------------------- */

static void print_lun_head(json_object *l)
{
	printf("LUN %s/%" PRId64 "  %s  %" PRId64 " x %" PRId64 " B  "
	       "queue_depth %" PRId64 "  barrier %s  write_cache %s\n",
	       gets_(l, "target"), geti(l, "lun"), gets_(l, "backend"),
	       geti(l, "blocks"), geti(l, "block_size"),
	       geti(l, "queue_depth"), gets_(l, "barrier"),
	       json_object_get_boolean(get(l, "write_cache")) ? "on" : "off");
	if (get(l, "model")) {
		json_object *m = get(l, "model");

		printf("  model %s: %" PRId64 " commands, mean drive queue "
		       "%.2f, host queue %.2f, read hits %" PRId64 ", cached "
		       "writes %" PRId64 ", destages %" PRId64 ", busy dies "
		       "%.1f\n", gets_(m, "model"), geti(m, "commands"),
		       json_object_get_double(get(m, "mean_drive_queue")),
		       json_object_get_double(get(m, "mean_host_queue")),
		       geti(m, "read_hits"), geti(m, "cached_writes"),
		       geti(m, "destages"),
		       json_object_get_double(get(m, "mean_busy_dies")));
	}
}

static void print_occupancy(json_object *arr)
{
	size_t n = json_object_array_length(arr);
	int64_t max = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t c = geti(json_object_array_get_idx(arr, i), "count");

		if (c > max)
			max = c;
	}
	if (!n)
		return;
	printf("  queue occupancy at submit (I/Os already in flight):\n");
	for (size_t i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i);
		int64_t lo = geti(b, "lo"), hi = geti(b, "hi"),
			c = geti(b, "count");
		int bar = max ? (int)((c * 40 + max - 1) / max) : 0;
		char label[48];

		if (lo == hi)
			snprintf(label, sizeof(label), "%" PRId64, lo);
		else
			snprintf(label, sizeof(label), "%" PRId64 "-%" PRId64,
				 lo, hi);
		printf("    %9s %12" PRId64 "  %.*s\n", label, c, bar,
		       "########################################");
	}
}

static void print_stats(json_object *r)
{
	json_object *luns = get(r, "luns");
	size_t n = json_object_array_length(luns);

	if (get(r, "buffers_in_use"))
		printf("I/O buffers in use: %" PRId64 "\n",
		       geti(r, "buffers_in_use"));
	if (get(r, "memory")) {
		json_object *m = get(r, "memory");

		printf("memory: rss %" PRId64 " KiB, heap in use %" PRId64
		       " KiB, heap free %" PRId64 " KiB, pool cached %" PRId64
		       " KiB\n", geti(m, "rss_bytes") / 1024,
		       geti(m, "heap_in_use_bytes") / 1024,
		       geti(m, "heap_free_bytes") / 1024,
		       geti(m, "pool_cached_bytes") / 1024);
	}
	printf("\n");

	for (size_t i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(luns, i);
		json_object *c = get(l, "commands"), *f = get(l, "inflight"),
			    *lat = get(l, "latency_us"),
			    *d = get(l, "ordered_drain_us"),
			    *fl = get(l, "flushes"),
			    *pa = get(l, "path_mean_us");

		if (i)
			printf("\n");
		print_lun_head(l);
		printf("  commands   total %" PRId64 ": simple %" PRId64
		       ", ordered %" PRId64 ", head of queue %" PRId64
		       ", aca %" PRId64 "; completed %" PRId64 "\n",
		       geti(c, "total"), geti(c, "simple"), geti(c, "ordered"),
		       geti(c, "head_of_queue"), geti(c, "aca"),
		       geti(c, "completed"));
		printf("  in flight  now %" PRId64 ", peak %" PRId64
		       " (backend I/Os %" PRId64 ")\n", geti(f, "current"),
		       geti(f, "peak"), geti(f, "ios"));
		printf("  latency    p50 %.1f us, p99 %.1f us, p99.9 %.1f us"
		       " (%" PRId64 " commands, arrival to completion)\n",
		       getd(lat, "p50"), getd(lat, "p99"), getd(lat, "p99_9"),
		       geti(lat, "count"));
		if (geti(pa, "samples"))
			printf("  path       in %.1f, to submit %.1f, backend "
			       "%.1f, to status %.1f, out %.1f us (mean of %"
			       PRId64 " sampled)\n", getd(pa, "transport_in"),
			       getd(pa, "to_submit"), getd(pa, "backend"),
			       getd(pa, "to_status"), getd(pa, "transport_out"),
			       geti(pa, "samples"));
		printf("  ordered    %" PRId64 " drained: total %.1f us, mean "
		       "%.1f us, p99 %.1f us, max %.1f us\n", geti(d, "count"),
		       getd(d, "total"), getd(d, "mean"), getd(d, "p99"),
		       getd(d, "max"));
		printf("  flushes    %" PRId64 " (%" PRId64 " for barriers)\n",
		       geti(fl, "total"), geti(fl, "barrier"));
		print_occupancy(get(f, "occupancy_at_submit"));
	}
}

static void print_luns(json_object *r)
{
	json_object *luns = get(r, "luns");
	size_t n = json_object_array_length(luns);

	for (size_t i = 0; i < n; i++)
		print_lun_head(json_object_array_get_idx(luns, i));
}

static void print_sessions(json_object *r)
{
	json_object *ss = get(r, "sessions");
	size_t n = json_object_array_length(ss);

	if (n == 0)
		printf("no sessions\n");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(ss, i);
		json_object *p = get(s, "params");

		printf("TSIH %" PRId64 "  %s  %s  ISID %s  target %s  peer %s"
		       "  reactor %" PRId64 "\n", geti(s, "tsih"),
		       gets_(s, "type"), gets_(s, "initiator"),
		       gets_(s, "isid"),
		       *gets_(s, "target") ? gets_(s, "target") : "-",
		       gets_(s, "peer"), geti(s, "reactor"));
		printf("   ");
		json_object_object_foreach(p, k, v)
			printf(" %s=%s", k, json_object_get_string(v));
		printf("\n");
	}
}

/* What a live change did, one part per line. */
static void print_changed(json_object *r)
{
	const char *m = gets_(r, "changed");

	while (*m) {
		const char *e = strstr(m, "; ");
		int n = e ? (int)(e - m) : (int)strlen(m);

		printf("%.*s\n", n, m);
		m += n;
		if (e)
			m += 2;
	}
}

static void print_targets(json_object *r)
{
	json_object *ts = get(r, "targets");
	size_t n = json_object_array_length(ts);

	if (n == 0)
		printf("no targets\n");
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		json_object *luns = get(t, "luns");
		size_t nl = json_object_array_length(luns);

		printf("%s  tpgt %" PRId64 "  sessions %" PRId64 "  chap %s  luns",
		       gets_(t, "name"), geti(t, "tpgt"), geti(t, "sessions"),
		       json_object_get_boolean(get(t, "chap")) ? "on" : "off");
		for (size_t j = 0; j < nl; j++)
			printf("%s%d", j ? "," : " ",
			       json_object_get_int(json_object_array_get_idx(luns, j)));
		printf("%s\n", nl ? "" : " none");
	}
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *sock = getenv("TCQ_CTL");
	const char *pos[32];
	char line[4096];
	size_t ll = 0;
	int npos = 0, rc;
	bool json = false, prom = false;
	json_object *r;
	char *txt;

	if (!sock || !*sock)
		sock = DEFAULT_SOCKET;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-s") || !strcmp(a, "--socket") ||
		    !strcmp(a, "--ctl")) {	/* tcqd's own name for it */
			if (++i == argc)
				die_usage("%s needs a path", a);
			sock = argv[i];
		} else if (!strncmp(a, "--socket=", 9)) {
			sock = a + 9;
		} else if (!strncmp(a, "--ctl=", 6)) {
			sock = a + 6;
		} else if (!strcmp(a, "--force") || !strcmp(a, "--shrink")) {
			/* options of a change: tcqd reads them */
			if (npos == (int)(sizeof(pos) / sizeof(pos[0])))
				die_usage("too many arguments%s", "");
			pos[npos++] = a;
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--prometheus")) {
			prom = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			die_usage("unknown option '%s'", a);
		} else {
			if (npos == (int)(sizeof(pos) / sizeof(pos[0])))
				die_usage("too many arguments%s", "");
			pos[npos++] = a;
		}
	}
	if (npos == 0)
		die_usage("no command given%s", "");
	/* stats --prometheus is the metrics command (all LUNs, text). */
	if (prom && (strcmp(pos[0], "stats") || npos > 1))
		die_usage("--prometheus goes with stats (all LUNs)%s", "");
	if (prom)
		pos[0] = "metrics";
	/* The request is one line of space-separated words. */
	for (int i = 0; i < npos; i++) {
		size_t n = strlen(pos[i]);

		if (!n || strpbrk(pos[i], " \t\r\n"))
			die_usage("'%s': arguments may not be empty or contain "
				  "white space", pos[i]);
		if (ll + n + 2 > sizeof(line))
			die_usage("request too long%s", "");
		if (i)
			line[ll++] = ' ';
		memcpy(line + ll, pos[i], n);
		ll += n;
	}
	line[ll++] = '\n';
	line[ll] = '\0';

	txt = request(sock, line);
	if (!txt)
		return 1;
	r = json_tokener_parse(txt);
	if (!r || !json_object_is_type(r, json_type_object)) {
		fprintf(stderr, "tcqctl: malformed answer from tcqd: %.200s\n",
			txt);
		free(txt);
		json_object_put(r);
		return 1;
	}
	free(txt);
	if (!json_object_get_boolean(get(r, "ok"))) {
		fprintf(stderr, "tcqctl: %s\n", get(r, "error") ?
			gets_(r, "error") : "request failed");
		if (json)
			printf("%s\n", json_object_to_json_string_ext(
				       r, JSON_C_TO_STRING_PRETTY));
		json_object_put(r);
		return 1;
	}
	rc = 0;
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(
			       r, JSON_C_TO_STRING_PRETTY |
			       JSON_C_TO_STRING_SPACED));
	} else if (!strcmp(pos[0], "metrics")) {
		fputs(gets_(r, "text"), stdout);	/* raw, as /metrics */
	} else if (!strcmp(pos[0], "stats")) {
		print_stats(r);
	} else if (!strcmp(pos[0], "luns")) {
		print_luns(r);
	} else if (!strcmp(pos[0], "sessions")) {
		print_sessions(r);
	} else if (!strcmp(pos[0], "set")) {
		print_lun_head(get(r, "lun"));
		print_changed(r);
	} else if (get(r, "changed")) {
		print_changed(r);
	} else if (!strcmp(pos[0], "config")) {
		fputs(gets_(r, "text"), stdout);
	} else if (!strcmp(pos[0], "targets")) {
		print_targets(r);
	} else if (!strcmp(pos[0], "save")) {
		printf("saved to %s\n", gets_(r, "file"));
	} else if (!strcmp(pos[0], "crash")) {
		printf("crashed: %" PRId64 " unsaved block%s dropped\n",
		       geti(r, "dropped_blocks"),
		       geti(r, "dropped_blocks") == 1 ? "" : "s");
	} else {
		printf("ok\n");
	}
	json_object_put(r);
	return rc;
}
