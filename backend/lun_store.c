/* The generic part of a LUN store: its worker thread (see lun_store.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include "backend/lun_store.h"

void lun_store_init(struct lun_store *s, const struct lun_store_ops *ops,
		    void *priv, const char *name)
{
	s->ops = ops;
	s->priv = priv;
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "store");
	if (getrandom(&s->id, sizeof(s->id), 0) != (ssize_t)sizeof(s->id))
		s->id = (uint64_t)(uintptr_t)s ^ (uint64_t)time(NULL);
	pthread_condattr_t ca;

	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	list_init(&s->jobs);
	s->refresh_ms = LUN_STORE_REFRESH_MS;
}

/* Waits for a job or stop; false when refresh_ms passed without one. */
static bool wait_job(struct lun_store *s)
{
	struct timespec dl;

	if (!s->on_idle || !s->refresh_ms) {
		while (list_empty(&s->jobs) && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		return true;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += s->refresh_ms / 1000;
	dl.tv_nsec += (long)(s->refresh_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	while (list_empty(&s->jobs) && !s->stop)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &dl) ==
		    ETIMEDOUT)
			return !list_empty(&s->jobs) || s->stop;
	return true;
}

static void *worker(void *arg)
{
	struct lun_store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct lun_store_job *j;

		if (!wait_job(s)) {
			pthread_mutex_unlock(&s->lock);
			s->on_idle(s->arg);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (list_empty(&s->jobs))
			break;	/* stopping, and nothing left to run */
		j = list_first_entry(&s->jobs, struct lun_store_job, node);
		list_del(&j->node);
		pthread_mutex_unlock(&s->lock);
		j->fn(j);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int lun_store_start(struct lun_store *s)
{
	sigset_t all, old;
	int rc;

	/* Process signals go to the daemon's signalfd, not here. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, worker, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -1;
	s->started = true;
	return 0;
}

void lun_store_queue(struct lun_store *s, struct lun_store_job *j)
{
	if (!s->started) {	/* start-up, before the worker: run here */
		j->fn(j);
		return;
	}
	pthread_mutex_lock(&s->lock);
	list_add_tail(&j->node, &s->jobs);
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void lun_store_close(struct lun_store *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	if (s->ops && s->ops->close)
		s->ops->close(s);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
