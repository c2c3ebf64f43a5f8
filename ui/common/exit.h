/*
 * exit.h: the exit codes every command and the dashboard return, so that
 * scripts can tell a bad command line from a run that failed.
 */
#ifndef CNNTOP_COMMON_EXIT_H
#define CNNTOP_COMMON_EXIT_H

enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,     /* a run could not start or finish (bad data, I/O) */
    EXIT_USAGE = 2,    /* bad command line */
    EXIT_DIVERGED = 3  /* training produced a non-finite loss */
};

#endif
