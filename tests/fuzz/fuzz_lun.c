/*
 * The device server fixture of the parameter list harnesses (fuzz_lun.h).
 * Not a harness itself: it is linked into each of them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem */
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tcq/bufpool.h"
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/task.h"
#include "tests/fuzz/fuzz_lun.h"

/* A command that runs longer than this many reactor passes hangs. */
#define MAX_PASSES 100000

static struct {
	struct reactor r;
	struct bdev *bd;
	struct sdev dev;
	struct lun *lun;
	struct taskset *ts[FUZZ_LUN_NEXUSES];
	int nexus[FUZZ_LUN_NEXUSES];	/* their identities: the addresses */
} f;

/* The SPC-4 iSCSI initiator port names PERSISTENT RESERVE OUT and
 * EXTENDED COPY ask the transport for. */
static const char *port_name(const void *nexus)
{
	return nexus == &f.nexus[0] ? "iqn.2026-11.org.tcq:fuzz-a,i,0x800000000001"
				    : "iqn.2026-11.org.tcq:fuzz-b,i,0x800000000002";
}

static const struct sdev_ops ops = { .initiator_port = port_name };

static char dir[64];

/* Removes the APTPL files: each input starts without any. */
static void state_dir_clear(void)
{
	struct dirent *de;
	char path[sizeof(dir) + 256];
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

/* At exit: the APTPL files and their directory go. */
static void state_dir_remove(void)
{
	state_dir_clear();
	rmdir(dir);
}

/* APTPL state goes to a directory of this process, never the system's. */
static const char *state_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/tcq-fuzz-pr.%d", (int)getpid());
		if (mkdir(dir, 0700) < 0 && access(dir, W_OK) < 0)
			abort();
		atexit(state_dir_remove);
	}
	return dir;
}

struct run {
	struct tcq_task t;
	unsigned n;		/* its nexus */
	unsigned ndone;
};

static void task_done(struct tcq_task *t)
{
	((struct run *)t)->ndone++;
}

static void arrive(void *arg)
{
	struct run *c = arg;

	if (lun_task_arrive(c->t.lun ? f.ts[c->n] : NULL, &c->t))
		lun_task_data_ready(&c->t);
}

/* The device, over what the APTPL directory holds. */
static void open_lun(void)
{
	struct bdev_params bp = { .size = (uint64_t)FUZZ_LUN_BLOCKS *
					  FUZZ_LUN_BS, .queue_depth = 8 };
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct lun_params p;
	char err[256];

	if (getenv("FUZZ_VERBOSE") == NULL)
		log_set_level(LOG_ERR);
	memset(&f, 0, sizeof(f));
	if (reactor_init(&f.r, 0) < 0)
		abort();
	f.bd = bdev_open("ram", &bp, err, sizeof(err));
	if (!f.bd) {
		fprintf(stderr, "fuzz_lun: %s\n", err);
		abort();
	}
	strcpy(f.dev.name, "iqn.2026-11.org.tcq:fuzz");
	f.dev.tpgt = 1;
	f.dev.state_dir = state_dir();
	f.dev.ops = &ops;
	lun_params_default(&p, &f.dev, 0, f.bd);
	f.lun = lun_create(&p, err, sizeof(err));
	if (!f.lun) {
		fprintf(stderr, "fuzz_lun: %s\n", err);
		abort();
	}
	f.dev.luns[0] = f.lun;
	f.dev.nluns = 1;
	for (unsigned i = 0; i < FUZZ_LUN_NEXUSES; i++) {
		f.ts[i] = lun_nexus_join(f.lun, &f.r, &f.nexus[i]);
		if (!f.ts[i])
			abort();
	}
	/* SAM-5 5.14: each nexus hears of the power on first; that
	 * answer would otherwise be the first command's of every input. */
	for (unsigned i = 0; i < FUZZ_LUN_NEXUSES; i++)
		(void)fuzz_lun_run(i, tur, sizeof(tur), NULL);
}

void fuzz_lun_open(void)
{
	(void)state_dir();
	state_dir_clear();
	open_lun();
}

void fuzz_lun_reopen(void)
{
	fuzz_lun_close();
	open_lun();
}

void fuzz_lun_close(void)
{
	for (unsigned i = 0; i < FUZZ_LUN_NEXUSES; i++)
		lun_nexus_leave(f.ts[i]);
	/* What the nexuses' leaving posted runs before the LUN goes. */
	reactor_stop(&f.r);
	reactor_run(&f.r);
	lun_destroy(f.lun);
	bdev_close(f.bd);
	reactor_fini(&f.r);
	bufpool_thread_drain();
}

/* SAM-5 statuses a device server may end a command with here. */
static void check_answer(const struct tcq_task *t)
{
	switch (t->status) {
	case SAM_STAT_GOOD:
	case SAM_STAT_RESERVATION_CONFLICT:
		return;
	case SAM_STAT_CHECK_CONDITION:
		/* SPC-4 4.5: fixed (70h, 18 bytes) or descriptor (72h, 8
		 * bytes and its descriptors) sense data. */
		if ((t->sense[0] & 0x7f) == 0x70 ? t->sense_len < 18 :
		    (t->sense[0] & 0x7f) != 0x72 || t->sense_len < 8)
			abort();
		return;
	default:
		abort();
	}
}

uint8_t fuzz_lun_run(unsigned n, const uint8_t *cdb, uint16_t cdb_len,
		     struct fuzz_io *io)
{
	static struct fuzz_io none;
	struct run *c = calloc(1, sizeof(*c));
	struct tcq_task *t;
	uint8_t status;
	int i;

	if (!c)
		abort();
	if (!io) {
		none = (struct fuzz_io){ 0 };
		io = &none;
	}
	t = &c->t;
	lun_task_init(t);
	memcpy(t->cdb, cdb, cdb_len);
	t->cdb_len = cdb_len < 16 ? 16 : cdb_len;
	t->lun = f.lun;
	t->dev = &f.dev;
	c->n = n % FUZZ_LUN_NEXUSES;
	t->tag = 0x10 + c->n;
	t->nexus = &f.nexus[c->n];
	t->attr = TASK_ATTR_SIMPLE;
	t->done = task_done;
	if (io->out) {
		t->dir_out = true;
		t->exp_len = io->out_len;
		t->buf = bufpool_alloc(io->out_len ? io->out_len : 1);
		if (!t->buf)
			abort();
		t->buf_len = io->out_len;
		memcpy(t->buf, io->out, io->out_len);
	} else {
		t->dir_in = true;
		t->exp_len = io->in_len ? io->in_len : 65536;
	}
	if (reactor_post(&f.r, arrive, c) < 0)
		abort();
	for (i = 0; i < MAX_PASSES && !c->ndone; i++) {
		reactor_stop(&f.r);
		reactor_run(&f.r);
	}
	/* One more pass: a second done() would show now. */
	reactor_stop(&f.r);
	reactor_run(&f.r);
	if (c->ndone != 1)
		abort();	/* never ended (a hang), or ended twice */
	check_answer(t);
	status = t->status;
	io->key = 0;
	io->asc = 0;
	io->got = 0;
	if (status == SAM_STAT_CHECK_CONDITION) {
		/* Fixed sense: key in byte 2, ASC/ASCQ in 12-13;
		 * descriptor sense: 1 and 2-3. */
		bool fixed = (t->sense[0] & 0x7f) == 0x70;

		io->key = t->sense[fixed ? 2 : 1] & 0x0f;
		io->asc = (uint16_t)(t->sense[fixed ? 12 : 2] << 8 |
				     t->sense[fixed ? 13 : 3]);
	} else if (io->in && t->dir_in && t->buf) {
		if (t->data_in_len > t->exp_len)
			abort();	/* more Data-In than the initiator asked */
		io->got = t->data_in_len < io->in_len ? t->data_in_len
						       : io->in_len;
		memcpy(io->in, t->buf, io->got);
	}
	if (t->dir_out && t->buf)
		bufpool_free(t->buf, t->buf_len ? t->buf_len : 1);
	else
		lun_task_release(t);
	free(c);
	return status;
}

const uint8_t *fuzz_lun_naa(void)
{
	return f.lun->naa;
}

void fuzz_split(const uint8_t *data, size_t size, unsigned max,
		void (*fn)(unsigned i, const uint8_t *p, size_t len))
{
	size_t sl = strlen(FUZZ_SEP);

	for (unsigned i = 0; i < max; i++) {
		const uint8_t *end = memmem(data, size, FUZZ_SEP, sl);
		size_t len = end ? (size_t)(end - data) : size;

		fn(i, data, len);
		if (!end)
			return;
		data += len + sl;
		size -= len + sl;
	}
}
