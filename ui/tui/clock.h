/*
 * clock.h: the clocks the dashboard reads, in seconds as doubles.
 */
#ifndef CNNTOP_TUI_CLOCK_H
#define CNNTOP_TUI_CLOCK_H

/* CLOCK_MONOTONIC: for ticks, messages' age and a run's wall time. */
double clock_mono(void);

/* The calling thread's CPU time (the UI thread's cost). */
double clock_thread_cpu(void);

/* The process's user + system CPU time, every thread. */
double clock_process_cpu(void);

#endif
