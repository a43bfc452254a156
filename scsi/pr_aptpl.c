/*
 * APTPL (SPC-4 5.13.4): the reservation state of a LUN without a store
 * survives power loss in the file STATE_DIR/TARGET-lunN.pr, TARGET the
 * target name with every byte but [A-Za-z0-9.-] turned into '_', N the
 * LUN in decimal. It is written whole to PATH.tmp, synced and renamed
 * over PATH after every change while APTPL is on, removed when a change
 * turns it off, and read back at start-up.
 *
 * The format: text, lines ending in "\n", fields separated by one space,
 * in this order:
 *   tcq-pr 1                        the first line, exactly
 *   generation G                    PRgeneration, decimal
 *   reservation T                   only while reserved: the type, decimal
 *                                   (1, 3, 5, 6, 7 or 8)
 *   reg KEY A H PORT                one per registration, in order: KEY
 *                                   16 lowercase hex digits, A ALL_TG_PT
 *                                   and H holder each 0 or 1, PORT the
 *                                   initiator port name to the line's end
 *                                   ("iname,i,0xISID" or "iname")
 * A RESERVE(6/10) reservation is not in it (it ends with its nexus), nor
 * APTPL itself (a file exists only while it is on).
 *
 * Reading is looser than writing, as sscanf is with these patterns:
 * other spacing, fewer or uppercase hex digits, text after a number;
 * after the first line any order, the last generation or reservation
 * line counting. Empty lines are skipped, any other line is refused
 * ("not a tcq reservation state file"). What is missing is zero (no
 * generation line: 0); an empty file is an empty state.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tcq/log.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"

#define APTPL_MAGIC "tcq-pr 1"

int pr_state_path(const struct lun *l, const char *dir, char *out,
		  size_t outlen)
{
	char name[SDEV_NAME_MAX];
	const char *tn = l->dev && l->dev->name[0] ? l->dev->name : "target";
	size_t i;
	int n;

	for (i = 0; tn[i] && i < sizeof(name) - 1; i++)
		name[i] = isalnum((unsigned char)tn[i]) || tn[i] == '.' ||
			  tn[i] == '-' ? tn[i] : '_';
	name[i] = 0;
	n = snprintf(out, outlen, "%s/%s-lun%llu.pr",
		     dir && *dir ? dir : PR_DEFAULT_STATE_DIR, name,
		     (unsigned long long)l->id);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

static const char *state_dir(const struct lun *l)
{
	const char *d = l->dev ? l->dev->state_dir : NULL;

	return d && *d ? d : PR_DEFAULT_STATE_DIR;
}

static void write_state(FILE *f, const struct pr_state *ps)
{
	fprintf(f, APTPL_MAGIC "\ngeneration %u\n", ps->generation);
	if (ps->resv)
		fprintf(f, "reservation %u\n", ps->type);
	for (unsigned i = 0; i < ps->nregs; i++)
		fprintf(f, "reg %016llx %d %d %s\n",
			(unsigned long long)ps->regs[i].key,
			ps->regs[i].all_tg_pt, ps->regs[i].holder,
			ps->regs[i].port);
}

int pr_aptpl_save(struct lun *l, const struct pr_state *ps)
{
	char path[512], tmp[520];
	FILE *f;
	int rc = 0;

	if (l->store)	/* the store is the persistent copy */
		return 0;
	if (pr_state_path(l, state_dir(l), path, sizeof(path)) < 0)
		return -1;
	if (!ps->aptpl) {
		if (unlink(path) < 0 && errno != ENOENT)
			log_warn("pr: %s: %s", path, strerror(errno));
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		log_err("pr: APTPL: %s: %s", tmp, strerror(errno));
		return -1;
	}
	write_state(f, ps);
	if (fflush(f) || fsync(fileno(f)))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		log_err("pr: APTPL: %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

/* One line (without its "\n") into ps; false when it is not one of the
 * file's. */
static bool read_line(struct pr_state *ps, const char *line, bool first)
{
	unsigned long long key;
	int atp, hold, off = 0;
	unsigned v;
	struct pr_reg *r;

	if (first)
		return strcmp(line, APTPL_MAGIC) == 0;
	if (sscanf(line, "generation %u", &v) == 1) {
		ps->generation = v;
		return true;
	}
	if (sscanf(line, "reservation %u", &v) == 1) {
		if (!pr_type_valid((uint8_t)v) || v > 0xff)
			return false;
		ps->resv = true;
		ps->type = (uint8_t)v;
		return true;
	}
	if (sscanf(line, "reg %llx %d %d %n", &key, &atp, &hold, &off) == 3 &&
	    off > 0) {
		if (ps->nregs == PR_REGS_MAX || !line[off] ||
		    strlen(line + off) >= PR_PORT_MAX)
			return false;
		r = &ps->regs[ps->nregs++];
		r->key = key;
		r->all_tg_pt = atp;
		r->holder = hold;
		pr_copy_port(r->port, line + off);
		return true;
	}
	return !line[0];
}

int pr_load(struct lun *l, const char *dir, char *err, size_t errlen)
{
	struct pr_state *ps = l->pr, nps;
	char path[512], line[PR_PORT_MAX + 64];
	unsigned lineno = 0;
	FILE *f;

	if (!ps || pr_state_path(l, dir, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "pr: no state for LUN %llu",
			 (unsigned long long)l->id);
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(&nps, 0, sizeof(nps));
	nps.aptpl = true;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!read_line(&nps, line, lineno == 1)) {
			fclose(f);
			snprintf(err, errlen,
				 "%s:%u: not a tcq reservation state file",
				 path, lineno);
			return -1;
		}
	}
	fclose(f);
	pthread_mutex_lock(&l->lock);
	pr_r2_clear(&nps);
	*ps = nps;
	pr_update_flag(l);
	pthread_mutex_unlock(&l->lock);
	log_info("pr: %s: %u registration%s, %s", path, nps.nregs,
		 nps.nregs == 1 ? "" : "s",
		 nps.resv ? "reserved" : "not reserved");
	return 0;
}
