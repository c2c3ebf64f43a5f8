/*
 * limits.h: the largest values the engine accepts, for every layer and front end.
 */
#ifndef CNNTOP_LIMITS_H
#define CNNTOP_LIMITS_H

#ifdef __cplusplus
extern "C" {
#endif

#define CN_MAX_BATCH 65536
#define CN_MAX_THREADS 256
#define CN_MAX_WORKERS 64
#define CN_MAX_PREFETCH 256
/* Counts the engine holds, each with room to add one run to it: */
#define CN_MAX_EPOCHS 100000            /* RunConfig.epochs */
#define CN_MAX_STEPS 1000000000L        /* RunConfig.steps and eval_every */
#define CN_MAX_IMAGES 100000000L        /* images of a split, RunConfig.limit, test_limit */
#define CN_MAX_EPOCHS_DONE 1000000000L  /* epochs completed, across checkpoints */
#define CN_MAX_ADAM_STEPS 1000000000000000L /* Adam steps taken, across checkpoints */
#define CN_MAX_RUNS 10000               /* --runs and --warmup */
/* CPUs a machine may have as cnntop counts them (sysinfo_cores() says at
 * most this; Linux's own limit, NR_CPUS, is 8192 at most): what "every
 * core" (--threads 0) can come to. */
#define CN_MAX_CORES 65536

#ifdef __cplusplus
}
#endif
#endif
