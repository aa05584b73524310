/* The read routes' thread pool (server/offload.h): a FIFO of jobs under one mutex. */
#include "server/offload.h"

#include <pthread.h>
#include <stdlib.h>

#include "util/log.h"
#include "util/strbuf.h"

struct job {
	void (*fn)(void *arg);
	void *arg;
	struct job *next;
};

struct offload {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stopping;
	pthread_t *threads;
	unsigned nr_threads;
};

static void *worker(void *arg)
{
	struct offload *o = arg;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		struct job *j = o->head;
		if (!j) {
			if (o->stopping)
				break;
			pthread_cond_wait(&o->cond, &o->lock);
			continue;
		}
		o->head = j->next;
		if (!o->head)
			o->tail = NULL;
		pthread_mutex_unlock(&o->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&o->lock);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

struct offload *offload__new(unsigned threads)
{
	struct offload *o = xcalloc(1, sizeof(*o));

	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	o->threads = xcalloc(threads ? threads : 1, sizeof(*o->threads));
	for (unsigned i = 0; i < (threads ? threads : 1); i++) {
		if (pthread_create(&o->threads[i], NULL, worker, o)) {
			log_warn("failed to start query thread %u of %u", i + 1, threads);
			break;
		}
		o->nr_threads++;
	}
	if (!o->nr_threads) {
		offload__stop(o);
		return NULL;
	}
	return o;
}

bool offload__run(struct offload *o, void (*fn)(void *arg), void *arg)
{
	struct job *j = xcalloc(1, sizeof(*j));
	bool queued = false;

	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&o->lock);
	if (!o->stopping) {
		if (o->tail)
			o->tail->next = j;
		else
			o->head = j;
		o->tail = j;
		queued = true;
		pthread_cond_signal(&o->cond);
	}
	pthread_mutex_unlock(&o->lock);
	if (!queued)
		free(j);
	return queued;
}

void offload__stop(struct offload *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	o->stopping = true;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	for (unsigned i = 0; i < o->nr_threads; i++)
		pthread_join(o->threads[i], NULL);
	free(o->threads);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	free(o);
}
