/*
 * test_dist_probe.c: the all-reduce probe (dist_probe_allreduce) times the
 * link, not one rank's clock.  Started alone, it starts itself again as 2
 * ranks through mpirun (skipped, 77, without MPI or mpirun) and gives
 * their exit status.  Rank 1 arrives 1.5 s late: with the barrier before
 * each sample, no rank's time holds that wait (a 4 KB all-reduce of 2
 * ranks on one machine is far under the 1 s bound, loaded or not); with
 * the maximum over the ranks, both ranks get the same figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/dist.h"
#include "dist/dist.h"

/* name=value, after what name holds already (":" between). */
static void env_add(const char *name, const char *value)
{
    const char *old = getenv(name);
    char buf[1024];

    snprintf(buf, sizeof buf, "%s%s%s", value, old && *old ? ":" : "", old ? old : "");
    setenv(name, buf, 1);
}

/* Runs this program as 2 ranks; their exit status, or 77 without mpirun.
 * A sanitizer build: what OpenMPI keeps at its end is not cnntop's leak
 * (lsan_mpi.supp, as test_dist.sh says it). */
static int launch(const char *self)
{
    int status;
    pid_t pid;

    setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 1);
    env_add("ASAN_OPTIONS", "fast_unwind_on_malloc=0");
    env_add("LSAN_OPTIONS", "suppressions=" CNNTOP_LSAN_MPI_SUPP ":print_suppressions=0");

    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    setenv("CNNTOP_TEST_RANK", "1", 1);
    fflush(NULL);
    if ((pid = fork()) == 0) {
        execlp("mpirun", "mpirun", "--oversubscribe", "-np", "2", self, (char *)NULL);
        _exit(errno == ENOENT ? 77 : 127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 1;
    if (WEXITSTATUS(status) == 77)
        printf("SKIP: no mpirun (install openmpi-bin)\n");
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    float v[1024] = {0};
    double best = -1, all[2] = {-1, -1};
    char err[256];

    (void)argc;
    if (!dist_available())
        check_skip("built without MPI");
    if (!getenv("CNNTOP_TEST_RANK"))
        return launch(argv[0]);
    if (dist_start(err, sizeof err) != 0 || dist_size() != 2) {
        fprintf(stderr, "test_dist_probe: not 2 ranks: %s\n", err);
        return 1;
    }
    if (dist_rank() == 1) {
        struct timespec late = {1, 500 * 1000 * 1000};
        nanosleep(&late, NULL);
    }
    CHECK_INT(dist_probe_allreduce(v, sizeof v / sizeof *v, 1, &best, err, sizeof err), ==, 0);
    CHECK(v[0] == 0.0f && v[1023] == 0.0f);
    CHECK_INT(dist_gather_doubles(&best, 1, all, err, sizeof err), ==, 0);
    if (dist_rank() == 0) {
        printf("probe: rank 0 %.6f s, rank 1 %.6f s\n", all[0], all[1]);
        CHECK(all[0] > 0 && all[0] == all[1]); /* the slowest rank's, on every rank */
        CHECK(all[0] < 1.0);                   /* not rank 1's lateness */
    }
    int rc = dist_rank() == 0 ? check_report() : 0;
    dist_finish();
    return rc;
}
