/* The generic part of a LUN store: its worker thread (see lun_store.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include "scsi/lun_store.h"

void lun_store_init(struct lun_store *s, const struct lun_store_ops *ops,
		    void *priv, const char *name)
{
	s->ops = ops;
	s->priv = priv;
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "store");
	if (getrandom(&s->id, sizeof(s->id), 0) != (ssize_t)sizeof(s->id))
		s->id = (uint64_t)(uintptr_t)s ^ (uint64_t)time(NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	list_init(&s->jobs);
}

static void *worker(void *arg)
{
	struct lun_store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct lun_store_job *j;

		while (list_empty(&s->jobs) && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
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
