/* The daemon's runtime model: defaults, its lock, target lookup. */
#include <pthread.h>
#include <stddef.h>
#include <strings.h>
#include <stdint.h>
#include "target/target.h"

struct tcqd *tcqd;

static pthread_rwlock_t tcqd_lock = PTHREAD_RWLOCK_INITIALIZER;

void tcqd_read_lock(void)
{
	pthread_rwlock_rdlock(&tcqd_lock);
}

void tcqd_read_unlock(void)
{
	pthread_rwlock_unlock(&tcqd_lock);
}

void tcqd_write_lock(void)
{
	pthread_rwlock_wrlock(&tcqd_lock);
}

void tcqd_write_unlock(void)
{
	pthread_rwlock_unlock(&tcqd_lock);
}

void tcq_settings_default(struct tcq_settings *s)
{
	s->max_recv_dsl = 262144;
	s->max_burst = 1048576;
	s->first_burst = 65536;
	s->max_outstanding_r2t = 1;
	/* InitialR2T=No lets initiators send unsolicited Data-Out. */
	s->initial_r2t = false;
	s->immediate_data = true;
	s->cmd_window = 128;
	s->nop_interval_s = 30;
	s->nop_timeout_s = 15;
	s->login_timeout_s = 15;
	s->max_xfer_len = 8u << 20;
	s->threads = 0;
	s->io_engine = IO_ENGINE_AUTO;
	s->header_digest_allowed = true;
	s->data_digest_allowed = true;
	s->max_sessions = 0;
	s->login_idle_timeout_s = 5;
	s->max_pending_logins = 64;
	s->chap_algs[0] = CHAP_ALG_SHA3_256;
	s->chap_algs[1] = CHAP_ALG_SHA256;
	s->chap_algs[2] = CHAP_ALG_SHA1;
	s->chap_algs[3] = CHAP_ALG_MD5;
	s->nchap_algs = 4;
	s->ctl_path[0] = '\0';	/* no control socket */
}

/* iSCSI names compare after normalisation to lower case (RFC 3722), and
 * our names are ASCII, so a case-insensitive compare is that. */
struct target *target_find(const char *name)
{
	if (!tcqd || !name)
		return NULL;
	for (int i = 0; i < tcqd->ntargets; i++)
		if (strcasecmp(tcqd->targets[i]->dev.name, name) == 0)
			return tcqd->targets[i];
	return NULL;
}

struct target *target_get(const char *name)
{
	struct target *t;

	tcqd_read_lock();
	t = target_find(name);
	if (t)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
	tcqd_read_unlock();
	return t;
}

void target_hold(struct target *t)
{
	if (t)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
}

void target_put(struct target *t)
{
	if (t)
		__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
}

unsigned target_refs(const struct target *t)
{
	return __atomic_load_n(&t->refs, __ATOMIC_ACQUIRE);
}

/* ---- refused logins (metrics) ---- */

const char *const login_refusal_names[LOGIN_REFUSED_N] = {
	[LOGIN_REFUSED_CHAP] = "chap",
	[LOGIN_REFUSED_ACL] = "acl",
	[LOGIN_REFUSED_LIMIT] = "limit",
	[LOGIN_REFUSED_UNKNOWN_TARGET] = "unknown_target",
	[LOGIN_REFUSED_OTHER] = "other",
};

static uint64_t refused_all[LOGIN_REFUSED_N];

void target_count_refusal(struct target *t, enum login_refusal why)
{
	if ((unsigned)why >= LOGIN_REFUSED_N)
		why = LOGIN_REFUSED_OTHER;
	__atomic_add_fetch(&refused_all[why], 1, __ATOMIC_RELAXED);
	if (t)
		__atomic_add_fetch(&t->logins_refused[why], 1,
				   __ATOMIC_RELAXED);
}

void tcqd_refusals(uint64_t out[LOGIN_REFUSED_N])
{
	for (int i = 0; i < LOGIN_REFUSED_N; i++)
		out[i] = __atomic_load_n(&refused_all[i], __ATOMIC_RELAXED);
}
