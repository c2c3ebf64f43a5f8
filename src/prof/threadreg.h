/*
 * threadreg.h: the engine's threads, by role, for the profiler.
 *
 * Every engine thread that does the run's work (the trainer, compute
 * workers, loader workers) enters the registry when it starts and leaves
 * before it ends.  The engine's sampler thread does not register: it
 * reads the others' counters and is no part of the run.  A profiler hook
 * (engine_set_counters installs counters_thread_hook) hears of each, with
 * the thread's kernel id, so it can open counters per thread.  The hook is
 * called under the registry's lock, so it sees every thread exactly once
 * in order.
 */
#ifndef CNNTOP_THREADREG_H
#define CNNTOP_THREADREG_H

#include <pthread.h>

#include "cnntop/counters.h"

#define THREADREG_MAX 512

/* fn(ud, tid, role, name, 1) for a thread that starts, fn(..., 0) for one
 * about to end; it runs on the thread concerned (or, when the hook is set,
 * on the setter's thread for each thread alive).  Must be thread-safe. */
typedef void (*ThreadHook)(void *ud, int tid, ThreadRole role, const char *name, int starting);

typedef struct ThreadEntry {
    int tid;            /* kernel thread id, 0 for a free entry */
    ThreadRole role;
    char name[16];
} ThreadEntry;

typedef struct ThreadReg {
    pthread_mutex_t mu;
    ThreadEntry t[THREADREG_MAX];
    ThreadHook fn;
    void *ud;
} ThreadReg;

void threadreg_init(ThreadReg *r);
void threadreg_done(ThreadReg *r);

/* Registers the calling thread and names it `name` (e.g. "cnntop-load/2"),
 * unless it is the process's main thread, whose name stays the program's. */
void threadreg_enter(ThreadReg *r, ThreadRole role, const char *name);

/* Unregisters the calling thread. */
void threadreg_leave(ThreadReg *r);

/* Sets the hook and replays every registered thread to it. */
void threadreg_set_hook(ThreadReg *r, ThreadHook fn, void *ud);

#endif
