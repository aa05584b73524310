/* Uploads to a store that acknowledges its puts later (store__put_async: ClickHouse's
 * group commit). A put that waited on its HTTP thread held that thread, and the thread's
 * other connections, until ClickHouse answered: a batch then took at most --threads
 * uploads, however many were in flight. Here the handler starts its puts and answers;
 * the connection is suspended (as the offloaded reads' are) until the store reports
 * every put done, and only then does the 2xx go out, or the first failure's error
 * instead. So a 2xx still means the store acknowledged the upload.
 *
 * Bounds: at most --max-waiting-uploads puts wait at once (503 beyond, the agents'
 * spool retries), and the store bounds the rows it holds for them (-EBUSY: 503). */
#include "server/http.h"

#include <errno.h>
#include <string.h>

#include "util/log.h"

void ingest__acks_init(struct put_acks *a, struct server *srv, struct MHD_Connection *conn)
{
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->srv = srv;
	a->conn = conn;
}

void ingest__acks_release(struct put_acks *a)
{
	pthread_mutex_destroy(&a->lock);
}

/* One put of srv no longer waits for the store. */
static void unwait(struct server *srv)
{
	pthread_mutex_lock(&srv->waiting_lock);
	if (!--srv->waiting)
		pthread_cond_broadcast(&srv->waiting_cond);
	pthread_mutex_unlock(&srv->waiting_lock);
}

/* The store's report of one put (any thread). */
static void put_done(void *arg, int ret, const char *err)
{
	struct put_acks *a = arg;
	struct server *srv = a->srv;
	struct MHD_Connection *conn = a->conn;
	bool resume;

	if (ret)
		log_error("%s", err);
	pthread_mutex_lock(&a->lock);
	if (ret && !a->ret) {
		a->ret = ret;
		snprintf(a->err, sizeof(a->err), "%s", err);
	}
	resume = !--a->pending && a->suspended;
	pthread_mutex_unlock(&a->lock);
	/* a is not touched after this: once pending is 0 its handler may go on and free it
	 * (not suspended), or it is freed only after the resume below */
	if (resume)
		MHD_resume_connection(conn);
	unwait(srv);
}

int ingest__put_async(struct request *r, const struct store_put *put, char *err, size_t errlen)
{
	struct server *srv = r->srv;
	struct put_acks *a = r->acks;
	unsigned max = srv->opts.max_waiting_uploads ? srv->opts.max_waiting_uploads
						     : SERVER_DEFAULT_WAITING_UPLOADS;
	int ret;

	pthread_mutex_lock(&srv->waiting_lock);
	bool room = srv->waiting < max;
	if (room)
		srv->waiting++;
	pthread_mutex_unlock(&srv->waiting_lock);
	if (!room) {
		errmsg(err, errlen, "failed to store profile: %u uploads already wait for the store "
		       "to acknowledge them (--max-waiting-uploads); retry later", max);
		return -EBUSY;
	}
	pthread_mutex_lock(&a->lock);
	a->pending++;
	pthread_mutex_unlock(&a->lock);
	ret = store__put_async(srv->store, put, put_done, a, err, errlen);
	if (ret) {	/* refused at once: done is never called */
		pthread_mutex_lock(&a->lock);
		a->pending--;
		pthread_mutex_unlock(&a->lock);
		unwait(srv);
	}
	return ret;
}

bool ingest__acks_suspend(struct put_acks *a)
{
	bool wait;

	pthread_mutex_lock(&a->lock);
	wait = a->pending > 0;
	if (wait) {
		/* under the lock: the last put_done resumes only after this */
		a->suspended = true;
		MHD_suspend_connection(a->conn);
	}
	pthread_mutex_unlock(&a->lock);
	return wait;
}

void ingest__acks_answer(struct put_acks *a, struct response *resp)
{
	if (a->ret && resp->status < 400)
		resp__error(resp, ingest__put_status(a->ret), "%s", a->err);
}

void ingest__acks_drain(struct server *srv)
{
	pthread_mutex_lock(&srv->waiting_lock);
	while (srv->waiting)
		pthread_cond_wait(&srv->waiting_cond, &srv->waiting_lock);
	pthread_mutex_unlock(&srv->waiting_lock);
}
