/*
 * ranks.h: `cnntop run --ranks N`, the MPI job started by cnntop itself
 * through the system's mpirun (or mpiexec), and its end said in one line.
 */
#ifndef CNNTOP_CMD_RANKS_H
#define CNNTOP_CMD_RANKS_H

#include <stddef.h>

#include "common/options.h"

/* The longest --mpirun-args, in characters and the end. */
#define RANKS_MAX_EXTRA 4096

/*
 * Runs `LAUNCHER -np N [--oversubscribe] --bind-to none [MPIRUN-ARGS] SELF
 * ARGS --dist mpi` where MPIRUN-ARGS are --mpirun-args's words (split on
 * spaces, no quoting), ARGS this command line's but --ranks and
 * --mpirun-args, `-x CNNTOP_DIST_LIVE` after --bind-to none when that
 * variable is set (the dashboard's live lines, cnntop/dist.h), --oversubscribe only
 * when N is more than the cores this process may use, and --bind-to none
 * so that each rank's threads default to the cores / N (OpenMPI binds a
 * rank to one core otherwise).  As root it sets OpenMPI's two
 * OMPI_ALLOW_RUN_AS_ROOT variables for the launcher alone, and says so.
 * Refuses, before anything runs (exit 2): a build without MPI, no
 * launcher on PATH, --dist given too, a batch that does not split, an
 * --mpirun-args of RANKS_MAX_EXTRA characters or more.  The
 * ranks' output passes through; the launcher's banners about a rank that
 * died or aborted become one line each ("cnntop: rank 1 died: signal 9
 * (Killed); mpirun ended the job").  SIGINT, SIGTERM and SIGHUP go to the
 * ranks on this machine (the launcher's children; the launcher itself
 * when it has none), which stop after the same step and finish.  Returns the launcher's exit
 * code (128 + signal when it was killed, or stopped by one passed on).
 */
int ranks_main(const Options *o, int argc, char **argv);

/* What ranks_main() refuses before anything runs, for a job of `ranks`
 * ranks at global batch `batch` (sweep --ranks checks its whole grid):
 * 0, or 2 after one line on stderr. */
int ranks_check(const Options *o, int batch, int ranks);

/* Why no job of several ranks can start here (a build without MPI, no
 * mpirun or mpiexec on PATH: "this cnntop was built without MPI"), or
 * NULL with the launcher's path in launcher (len bytes). */
const char *ranks_unavailable(char *launcher, size_t len);

#endif
