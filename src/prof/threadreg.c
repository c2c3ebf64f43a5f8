/*
 * threadreg.c: the registry of engine threads (see threadreg.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prof/threadreg.h"

void threadreg_init(ThreadReg *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
}

void threadreg_done(ThreadReg *r)
{
    pthread_mutex_destroy(&r->mu);
}

void threadreg_enter(ThreadReg *r, ThreadRole role, const char *name)
{
    int tid = counters_gettid();

    if (tid != getpid())
        pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < THREADREG_MAX; i++) {
        if (r->t[i].tid == 0) {
            r->t[i].tid = tid;
            r->t[i].role = role;
            snprintf(r->t[i].name, sizeof r->t[i].name, "%s", name);
            break;
        }
    }
    if (r->fn)
        r->fn(r->ud, tid, role, name, 1);
    pthread_mutex_unlock(&r->mu);
}

void threadreg_leave(ThreadReg *r)
{
    int tid = counters_gettid();

    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < THREADREG_MAX; i++) {
        if (r->t[i].tid == tid) {
            if (r->fn)
                r->fn(r->ud, tid, r->t[i].role, r->t[i].name, 0);
            r->t[i].tid = 0;
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
}

void threadreg_set_hook(ThreadReg *r, ThreadHook fn, void *ud)
{
    pthread_mutex_lock(&r->mu);
    r->fn = fn;
    r->ud = ud;
    for (int i = 0; fn && i < THREADREG_MAX; i++)
        if (r->t[i].tid)
            fn(ud, r->t[i].tid, r->t[i].role, r->t[i].name, 1);
    pthread_mutex_unlock(&r->mu);
}
