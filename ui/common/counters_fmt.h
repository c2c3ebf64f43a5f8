/*
 * counters_fmt.h: a counters block in the manner of `perf stat`, for the
 * summaries of the headless commands.
 *
 *           1,234.56 msec task-clock        #  3.71 CPUs utilized
 *      3,123,456,789      instructions      #  1.23 insn per cycle  (scaled from 37%)
 *    <not supported>      cycles            no PMU exposed to this machine (a virtual machine?)
 *   scheduler: run-queue wait 3% of thread time, 1,234 ctx switches/s (...)
 *
 * One block per thread role that ran (compute threads, loader threads).
 */
#ifndef CNNTOP_COUNTERS_FMT_H
#define CNNTOP_COUNTERS_FMT_H

#include <stddef.h>
#include <stdio.h>

#include "cnntop/counters.h"

/* Writes v rounded to `decimals` places with thousands separators
 * ("1,234,567", "1,234.56") into buf. */
void counters_fmt_number(char *buf, size_t len, double v, int decimals);

/*
 * Prints one role's block: its n readings with derived figures (wall_ns:
 * the time they cover, for rates; 0: rates n/a) and, when s is not NULL,
 * the scheduler line.  Writes nothing else; reads nothing from the kernel.
 */
void counters_fmt_role(FILE *f, ThreadRole role, const CounterReading *r, int n, double wall_ns,
                       const CounterSched *s);

/* The same block under any title ("main process", for cnntop exec). */
void counters_fmt_block(FILE *f, const char *title, const CounterReading *r, int n,
                        double wall_ns, const CounterSched *s);

/* A role's title in the block: "compute (trainer threads)", "loader threads". */
const char *counters_fmt_role_title(ThreadRole role);

#endif
