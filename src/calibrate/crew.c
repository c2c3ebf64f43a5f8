/*
 * crew.c: T threads for one measurement (see crew.h for the design).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/crew.h"
#include "cnntop/limits.h"
#include "util/err.h"

/* The start gate: members wait until every thread exists (go = 1), or
 * leave at once when one could not be made (go = -1), so that no member is
 * ever left waiting at a barrier for a thread that does not exist. */
typedef struct CrewGate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} CrewGate;

typedef struct CrewArg {
    CrewFn fn;
    void *bench;
    int tid;
    CrewGate *gate;
} CrewArg;

static void *crew_main(void *p)
{
    CrewArg *a = p;
    int go;

    pthread_mutex_lock(&a->gate->mu);
    while (a->gate->go == 0)
        pthread_cond_wait(&a->gate->cv, &a->gate->mu);
    go = a->gate->go;
    pthread_mutex_unlock(&a->gate->mu);
    if (go > 0)
        a->fn(a->bench, a->tid);
    return NULL;
}

int crew_run(int T, CrewFn fn, void *bench, char *err, size_t errlen)
{
    pthread_t th[CN_MAX_THREADS];
    CrewArg args[CN_MAX_THREADS];
    CrewGate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    sigset_t async, old;
    int n = 1, rc = 0;

    sigfillset(&async);
    sigdelset(&async, SIGSEGV);
    sigdelset(&async, SIGBUS);
    sigdelset(&async, SIGFPE);
    sigdelset(&async, SIGILL);
    pthread_sigmask(SIG_SETMASK, &async, &old);
    for (; n < T; n++) {
        args[n] = (CrewArg){fn, bench, n, &gate};
        int e = pthread_create(&th[n], NULL, crew_main, &args[n]);
        if (e != 0) {
            rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: thread %d of %d: %s", n,
                         T, strerror(e));
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&gate.mu);
    gate.go = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    if (rc == 0)
        fn(bench, 0);
    for (int i = 1; i < n; i++)
        pthread_join(th[i], NULL);
    return rc;
}

int crew_window_alloc(CrewWindow *w, int T, char *err, size_t errlen)
{
    w->t0 = calloc((size_t)T, sizeof *w->t0);
    w->t1 = calloc((size_t)T, sizeof *w->t1);
    if (w->t0 && w->t1)
        return 0;
    free(w->t0);
    free(w->t1);
    w->t0 = w->t1 = NULL;
    return cn_fail(err, errlen, -CN_ENOMEM, "calibration: out of memory");
}

void crew_window_free(CrewWindow *w)
{
    free(w->t0);
    free(w->t1);
}

double crew_window_span(const CrewWindow *w, int T)
{
    double lo = w->t0[0], hi = w->t1[0];

    for (int m = 1; m < T; m++) {
        lo = w->t0[m] < lo ? w->t0[m] : lo;
        hi = w->t1[m] > hi ? w->t1[m] : hi;
    }
    return hi - lo;
}
