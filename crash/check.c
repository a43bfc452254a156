/* Checkers on crash states, and failing states shrunk (check.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "crash/check.h"

/* s with every placeholder replaced; the values are shell-quoted. */
static int expand(const char *cmd, const char *const keys[],
		  const char *const vals[], int n, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *p = cmd; *p;) {
		int k;

		for (k = 0; k < n; k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				break;
		if (k == n) {
			if (o + 1 >= cap)
				return -1;
			out[o++] = *p++;
			continue;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = '\'';
		for (const char *v = vals[k]; *v; v++) {
			if (*v == '\'') {	/* ' -> '\'' */
				if (o + 4 >= cap)
					return -1;
				memcpy(out + o, "'\\''", 4);
				o += 4;
			} else {
				if (o + 1 >= cap)
					return -1;
				out[o++] = *v;
			}
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = '\'';
		p += strlen(keys[k]);
	}
	out[o] = 0;
	return 0;
}

static int run_shell(const char *line, bool verbose)
{
	pid_t pid;
	int st;

	/* What the report has buffered goes out once: a child would write it
	 * again (its freopen flushes the copy it inherited). */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!verbose) {
			freopen("/dev/null", "w", stdout);
			freopen("/dev/null", "w", stderr);
		}
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int check_state(struct checker *ck, struct img *im, const struct md_state *s,
		size_t index, int *which, char *err, size_t errlen)
{
	static const char *const keys[] = { "{image}", "{mark}", "{point}",
					    "{state}" };
	char point[32], state[32], line[8192];
	const char *vals[4] = { ck->image_path, ck->mark, point, state };

	snprintf(point, sizeof(point), "%llu",
		 (unsigned long long)im->m->c);
	snprintf(state, sizeof(state), "%zu", index);
	if (img_show(im, s, err, errlen) < 0)
		return -1;
	for (int i = 0; i < ck->ncmds; i++) {
		int rc;

		if (expand(ck->cmds[i], keys, vals, 4, line, sizeof(line))) {
			snprintf(err, errlen, "--cmd \"%s\": too long once "
				 "expanded", ck->cmds[i]);
			return -1;
		}
		rc = run_shell(line, ck->verbose);
		ck->runs++;
		if (rc < 0) {
			snprintf(err, errlen, "cannot run \"%s\": %s", line,
				 strerror(errno));
			return -1;
		}
		if (rc) {
			*which = i;
			return 1;
		}
	}
	return 0;
}

/* ---- delta debugging ------------------------------------------------- */

struct ddmin {
	struct checker *ck;
	struct img *im;
	const struct md_point *m;
	const uint8_t *orig;	/* the failing drop set */
	uint8_t *drop;		/* scratch */
	struct md_state s;
	long tried;
	char *err;
	size_t errlen;
};

/* Does dropping only the writes atoms[0..n) (as orig drops them) fail?
 * 1 yes, 0 no (or not allowed), -1 error. */
static int fails(struct ddmin *d, const uint32_t *atoms, size_t n)
{
	const struct md_point *m = d->m;
	int which;

	memset(d->drop, 0, m->tfirst[m->ntasks]);
	for (size_t i = 0; i < n; i++)
		for (uint32_t e = m->tfirst[atoms[i]];
		     e < m->tfirst[atoms[i] + 1]; e++)
			d->drop[e] = d->orig[e];
	st_from_drops(m, d->drop, &d->s);
	if (!model_allows(m, &d->s))
		return 0;
	d->tried++;
	return check_state(d->ck, d->im, &d->s, 0, &which, d->err, d->errlen);
}

long check_minimize(struct checker *ck, struct img *im,
		    const struct md_point *m, uint8_t *drop, char *err,
		    size_t errlen)
{
	size_t ne = m->tfirst[m->ntasks], nc = 0, n = 2;
	uint32_t *c = malloc((m->ntasks + 1) * sizeof(*c));
	uint32_t *t = malloc((m->ntasks + 1) * sizeof(*t));
	struct ddmin d = { ck, im, m, NULL, malloc(ne + 1), { NULL }, 0, err,
			   errlen };
	uint8_t *orig = malloc(ne + 1);
	long rc = -1;

	d.s.pick = malloc((m->nblocks + 1) * sizeof(*d.s.pick));
	if (!c || !t || !d.drop || !orig || !d.s.pick) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memcpy(orig, drop, ne);
	d.orig = orig;
	for (size_t k = 0; k < m->ntasks; k++)	/* the writes it drops */
		for (uint32_t e = m->tfirst[k]; e < m->tfirst[k + 1]; e++)
			if (drop[e]) {
				c[nc++] = (uint32_t)k;
				break;
			}
	/* Everything written may fail already: then nothing needs to go. */
	{
		int f = fails(&d, c, 0);

		if (f < 0)
			goto out;
		if (f == 1)
			nc = 0;
	}
	while (nc >= 2) {
		size_t chunk = (nc + n - 1) / n, i;
		int f = 0;

		for (i = 0; i < nc && !f; i += chunk) {	/* a subset */
			size_t len = i + chunk > nc ? nc - i : chunk;

			f = fails(&d, c + i, len);
			if (f == 1) {
				memmove(c, c + i, len * sizeof(*c));
				nc = len;
				n = 2;
			}
		}
		if (f < 0)
			goto out;
		if (f)
			continue;
		for (i = 0; i < nc && n > 2 && !f; i += chunk) {	/* its rest */
			size_t len = i + chunk > nc ? nc - i : chunk, tn = 0;

			for (size_t j = 0; j < nc; j++)
				if (j < i || j >= i + len)
					t[tn++] = c[j];
			f = fails(&d, t, tn);
			if (f == 1) {
				memcpy(c, t, tn * sizeof(*c));
				nc = tn;
				n = n - 1 > 2 ? n - 1 : 2;
			}
		}
		if (f < 0)
			goto out;
		if (f)
			continue;
		if (n >= nc)
			break;
		n = 2 * n < nc ? 2 * n : nc;
	}
	memset(drop, 0, ne);
	for (size_t i = 0; i < nc; i++)
		for (uint32_t e = m->tfirst[c[i]]; e < m->tfirst[c[i] + 1]; e++)
			drop[e] = orig[e];
	rc = d.tried;
out:
	free(c);
	free(t);
	free(d.drop);
	free(orig);
	free(d.s.pick);
	return rc;
}
