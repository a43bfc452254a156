/*
 * tcq-bench --job FILE: the subset of fio's job file syntax (fio's HOWTO,
 * "Job file format") that maps onto tcq-bench's options, turned into
 * those options ahead of the command line's, so one parser reads both and
 * the command line wins. An ini file: [global] and one job section,
 * "key=value" or a bare "key" (a flag), ';' and '#' comment lines; the
 * job's keys override [global]'s. Any other key is refused by name
 * (FILE:LINE), so nothing in a job is silently ignored.
 *
 * fio's units are kept: sizes take k/m/g/t (powers of 1024, as fio's
 * default kb_base), rate is bytes/s, runtime and ramp_time are seconds
 * (or s, m, h), thinktime microseconds (or us, ms, s).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_access.h"

#define JOB_MAX_KEYS 64

struct job_kv {
	char key[64];
	char *val;		/* NULL: a bare key */
	unsigned line;
	bool global;
};

struct job {
	const char *path;
	struct job_kv kv[JOB_MAX_KEYS];
	unsigned nkv;
	char **out;		/* the options made */
	int nout;
};

/* fio's keys, and tcq-bench's own: what each becomes. */
static const struct { const char *key, *opt; } job_map[] = {
	{ "bs", "--bs" }, { "blocksize", "--bs" }, { "iodepth", "--depth" },
	{ "rw", NULL }, { "readwrite", NULL }, { "rwmixread", "--mix" },
	{ "rwmixwrite", NULL }, { "size", NULL }, { "offset", "--offset" },
	{ "runtime", NULL }, { "ramp_time", NULL }, { "time_based", NULL },
	{ "rate", NULL }, { "rate_iops", "--rate-iops" },
	{ "random_distribution", "--dist" }, { "thinktime", "--thinktime" },
	{ "thinktime_blocks", "--thinktime-blocks" },
	{ "thinktime_spin", "--thinktime-spin" },
	{ "thinktime_blocks_type", "--thinktime-blocks-type" },
	{ "iodepth_low", "--depth-low" },
	{ "numjobs", "--sessions" }, { "randseed", "--seed" },
	{ "read_iolog", "--replay" }, { "replay_no_stall", NULL },
	{ "filename", NULL },
	{ "fsync", "--sync-every" },	/* a SYNCHRONIZE CACHE every N writes */
	/* tcq-bench's own: task attributes and SCSI command mixes */
	{ "ordered", "--ordered" }, { "hoq", "--hoq" },
	{ "fua", "--fua" }, { "sync_interval", "--sync-interval" },
	{ "unmap", "--unmap" }, { "write_same", "--write-same" },
	{ "write_same_unmap", "--write-same-unmap" }, { "caw", "--caw" },
	{ "xcopy", "--xcopy" },
};

/* The argv made: getopt points into it until the program ends. */
static char **job_argv;

static void job_argv_free(void)
{
	for (char **a = job_argv; a && *a; a++)
		free(*a);
	free(job_argv);
}

static int job_bad(const struct job *j, unsigned line, const char *fmt,
		   const char *what)
{
	if (line)
		fprintf(stderr, "tcq-bench: %s:%u: ", j->path, line);
	else	/* of the job as a whole */
		fprintf(stderr, "tcq-bench: %s: ", j->path);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* The entry of key: the job's, else [global]'s; NULL when neither. */
static struct job_kv *job_get(struct job *j, const char *key)
{
	struct job_kv *g = NULL;

	for (unsigned i = 0; i < j->nkv; i++)
		if (!strcmp(j->kv[i].key, key)) {
			if (!j->kv[i].global)
				return &j->kv[i];
			g = &j->kv[i];
		}
	return g;
}

static int job_set(struct job *j, const char *key, char *val, unsigned line,
		   bool global)
{
	unsigned i;

	for (i = 0; i < sizeof(job_map) / sizeof(job_map[0]); i++)
		if (!strcmp(job_map[i].key, key))
			break;
	if (i == sizeof(job_map) / sizeof(job_map[0]))
		return job_bad(j, line, "key '%s' is not one tcq-bench takes (tcq-bench(1), JOB FILES)", key);
	for (i = 0; i < j->nkv; i++)
		if (!strcmp(j->kv[i].key, key) && j->kv[i].global == global)
			break;
	if (i == JOB_MAX_KEYS)
		return job_bad(j, line, "too many keys%s", "");
	if (i == j->nkv)
		j->nkv++;
	else
		free(j->kv[i].val);
	snprintf(j->kv[i].key, sizeof(j->kv[i].key), "%s", key);
	j->kv[i].val = val ? strdup(val) : NULL;
	j->kv[i].line = line;
	j->kv[i].global = global;
	return val && !j->kv[i].val ? -1 : 0;
}

/* Reads the file into j->kv: 0, or -1 with the error printed. */
static int job_read(struct job *j)
{
	char buf[4096], *s, *eq;
	unsigned line = 0, jobs = 0;
	bool global = false, in_section = false;
	FILE *f = fopen(j->path, "r");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "tcq-bench: --job %s: %s\n", j->path,
			strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		line++;
		s = trim(buf);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			eq = strchr(s, ']');
			if (!eq || eq[1]) {
				rc = job_bad(j, line, "a section is [NAME]%s", "");
				continue;
			}
			*eq = 0;
			global = !strcmp(s + 1, "global");
			if (!global && jobs++)
				rc = job_bad(j, line, "a second job [%s]: tcq-bench runs one job a file", s + 1);
			in_section = true;
			continue;
		}
		if (!in_section) {
			rc = job_bad(j, line, "'%s' before any [section]", s);
			continue;
		}
		eq = strchr(s, '=');
		if (eq)
			*eq = 0;
		rc = job_set(j, trim(s), eq ? trim(eq + 1) : NULL, line,
			     global);
	}
	fclose(f);
	if (rc == 0 && !jobs)
		rc = job_bad(j, line, "no job section (only [global])%s", "");
	return rc;
}

static int job_out(struct job *j, const char *opt, const char *val)
{
	char **n = realloc(j->out, (size_t)(j->nout + 3) * sizeof(*n));	/* and NULL */

	if (!n)
		return -1;
	j->out = n;
	j->out[j->nout] = strdup(opt);
	if (!j->out[j->nout])
		return -1;
	j->nout++;
	if (val) {
		j->out[j->nout] = strdup(val);
		if (!j->out[j->nout])
			return -1;
		j->nout++;
	}
	return 0;
}

/* A size with fio's suffixes (k, m, g, t; KiB, kb: powers of 1024). */
static int job_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;
	unsigned shift = 0;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || (shift && x > (UINT64_MAX >> shift)))
		return -1;
	*v = (uint64_t)x << shift;
	return 0;
}

/* Seconds, fio's runtime unit, or with s, m, h. */
static int job_secs(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *v < 0)
		return -1;
	if (!strcmp(end, "m") || !strcmp(end, "min"))
		*v *= 60;
	else if (!strcmp(end, "h"))
		*v *= 3600;
	else if (strcmp(end, "") && strcmp(end, "s") && strcmp(end, "sec"))
		return -1;
	return 0;
}

/* A bare key, or one set to 1 (fio's bool): true; 0: false. */
static int job_bool(const struct job_kv *kv, bool *b)
{
	if (!kv->val || !strcmp(kv->val, "1") || !strcmp(kv->val, "true")) {
		*b = true;
		return 0;
	}
	*b = false;
	return strcmp(kv->val, "0") && strcmp(kv->val, "false") ? -1 : 0;
}

/* The keys that are not one option for one value. */
static int job_special(struct job *j, bool *time_based)
{
	struct job_kv *kv;
	char num[64];
	uint64_t v;
	double d;
	bool b;

	if ((kv = job_get(j, "rw")) || (kv = job_get(j, "readwrite"))) {
		static const char *const ok[] = { "read", "write", "randread",
			"randwrite", "randrw" };
		unsigned i;

		for (i = 0; i < 5 && kv->val && strcmp(kv->val, ok[i]); i++)
			;
		if (i == 5 || !kv->val)
			return job_bad(j, kv->line, "rw=%s: tcq-bench runs read, write, randread, randwrite or randrw", kv->val ? kv->val : "");
		if (job_out(j, "--rw", kv->val))
			return -1;
	}
	if ((kv = job_get(j, "rwmixwrite"))) {
		if (!kv->val || job_size(kv->val, &v) || v > 100)
			return job_bad(j, kv->line, "rwmixwrite: a percentage%s", "");
		snprintf(num, sizeof(num), "%u", (unsigned)(100 - v));
		if (job_out(j, "--mix", num))
			return -1;
	}
	if ((kv = job_get(j, "runtime")) || (kv = job_get(j, "ramp_time"))) {
		for (int k = 0; k < 2; k++) {
			kv = job_get(j, k ? "ramp_time" : "runtime");
			if (!kv)
				continue;
			if (!kv->val || job_secs(kv->val, &d))
				return job_bad(j, kv->line, "%s: seconds (or with s, m, h) expected", kv->key);
			snprintf(num, sizeof(num), "%.9g", d);
			if (job_out(j, k ? "--ramp" : "--runtime", num))
				return -1;
		}
	}
	if ((kv = job_get(j, "time_based"))) {
		if (job_bool(kv, time_based))
			return job_bad(j, kv->line, "time_based: 0 or 1%s", "");
	}
	if ((kv = job_get(j, "rate"))) {
		if (!kv->val || job_size(kv->val, &v) || !v)
			return job_bad(j, kv->line, "rate=%s: bytes per second (one value: no separate read and write rates)", kv->val ? kv->val : "");
		snprintf(num, sizeof(num), "%.9g", (double)v / 1e6);
		if (job_out(j, "--rate", num))	/* MB/s: 10^6 bytes */
			return -1;
	}
	if ((kv = job_get(j, "replay_no_stall"))) {
		if (job_bool(kv, &b))
			return job_bad(j, kv->line, "replay_no_stall: 0 or 1%s", "");
		if (b && job_out(j, "--replay-no-stall", NULL))
			return -1;
	}
	return 0;
}

/* size (the region, and without time_based the I/O to do, as fio: size
 * bytes a job) and filename (the URL; fio escapes ':' as '\:'). */
static int job_region(struct job *j, bool time_based)
{
	struct job_kv *kv = job_get(j, "size"), *rt = job_get(j, "runtime");
	struct job_kv *bs = job_get(j, "bs"), *nj = job_get(j, "numjobs");
	struct job_kv *tb = job_get(j, "time_based");
	uint64_t size = 0, bsz = 4096, njobs = 1;
	char num[64], url[1024];
	size_t n = 0;

	if (kv && (!kv->val || job_size(kv->val, &size) || !size))
		return job_bad(j, kv->line, "size=%s: bytes expected (no %%)", kv->val ? kv->val : "");
	if (!bs)
		bs = job_get(j, "blocksize");
	if (bs && bs->val && job_size(bs->val, &bsz))
		bsz = 0;	/* refused with its key below */
	if (nj && nj->val)
		njobs = strtoull(nj->val, NULL, 10);
	if (time_based && !rt)
		return job_bad(j, tb ? tb->line : 0, "time_based without runtime%s", "");
	if (!kv && !time_based && !rt)
		return job_bad(j, 0, "neither size, time_based nor runtime: say how much to do%s", "");
	if (kv) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
		if (job_out(j, "--span", num))
			return -1;
	}
	if (kv && !time_based && bsz && njobs) {
		/* fio: each job does size bytes; --ios counts all sessions */
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)(size / bsz * njobs));
		if (job_out(j, "--ios", num) ||
		    (!rt && job_out(j, "--runtime", "86400")))
			return -1;
	}
	kv = job_get(j, "filename");
	if (kv) {
		for (const char *p = kv->val ? kv->val : ""; *p &&
		     n + 1 < sizeof(url); p++)
			if (!(p[0] == '\\' && p[1] == ':'))
				url[n++] = *p;
		url[n] = 0;
		if (!n)
			return job_bad(j, kv->line, "filename: a URL expected%s", "");
		if (job_out(j, "--url", url))
			return -1;
	}
	return 0;
}

/* The keys that are one option with the value as it is (sizes in
 * bytes). */
static int job_plain(struct job *j)
{
	static const char *const sizes[] = { "bs", "blocksize", "offset" };
	char num[64];
	uint64_t v;

	for (unsigned i = 0; i < sizeof(job_map) / sizeof(job_map[0]); i++) {
		struct job_kv *kv = job_get(j, job_map[i].key);
		const char *val;

		if (!job_map[i].opt || !kv)
			continue;
		if (!strcmp(job_map[i].key, "rwmixread") && job_get(j, "rwmixwrite"))
			continue;	/* one of them: rwmixwrite said it */
		if (!kv->val || !*kv->val)
			return job_bad(j, kv->line, "%s needs a value", kv->key);
		if (strchr(kv->val, ','))
			return job_bad(j, kv->line, "%s: one value for reads and writes (no ',')", kv->key);
		val = kv->val;
		for (unsigned k = 0; k < 3; k++)
			if (!strcmp(kv->key, sizes[k])) {
				if (job_size(kv->val, &v))
					return job_bad(j, kv->line, "%s: bytes expected", kv->key);
				snprintf(num, sizeof(num), "%llu",
					 (unsigned long long)v);
				val = num;
			}
		if (job_out(j, job_map[i].opt, val))
			return -1;
	}
	return 0;
}

int bench_job_expand(int *argc, char ***argv)
{
	struct job j = { 0 };
	bool time_based = false;
	int i, at = -1, skip = 0, rc;

	for (i = 1; i < *argc && at < 0; i++)
		if (!strcmp((*argv)[i], "--job") && i + 1 < *argc) {
			at = i;
			skip = 2;
			j.path = (*argv)[i + 1];
		} else if (!strncmp((*argv)[i], "--job=", 6)) {
			at = i;
			skip = 1;
			j.path = (*argv)[i] + 6;
		}
	if (at < 0)
		return 0;
	rc = job_read(&j);
	if (rc == 0 && job_out(&j, (*argv)[0], NULL))
		rc = -1;
	if (rc == 0)
		rc = job_special(&j, &time_based);
	if (rc == 0)
		rc = job_region(&j, time_based);
	if (rc == 0)
		rc = job_plain(&j);
	for (i = 1; rc == 0 && i < *argc; i++)
		if ((i < at || i >= at + skip) &&
		    job_out(&j, (*argv)[i], NULL))
			rc = -1;
	for (unsigned k = 0; k < j.nkv; k++)
		free(j.kv[k].val);
	if (rc) {
		for (i = 0; i < j.nout; i++)
			free(j.out[i]);
		free(j.out);
		return -1;
	}
	/* argv[0] was put first: the job's options, then the command's */
	j.out[j.nout] = NULL;
	*argc = j.nout;
	*argv = job_argv = j.out;
	atexit(job_argv_free);
	return 0;
}
