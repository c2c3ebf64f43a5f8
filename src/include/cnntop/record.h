/*
 * record.h: the record of one `cnntop run`, and its exports.
 *
 * A RunRecord holds everything a run produced: when and how it was started,
 * its configuration, the machine, the training and evaluation figures, the
 * per-epoch and per-interval series, the segments, the per-layer profile,
 * the counters and, for --runs R, each repeat.  record_fill() builds it
 * from a finished run (the engine's figures are plain structs of engine.h,
 * copied in); the front end adds what only it knows, and exports it
 * as JSON (schema "cnntop.run/1"), CSV (one row per interval sample) or
 * Markdown; several records (a sweep) export together.  record_load_json()
 * reads a JSON export back, which is what `cnntop report` does.
 *
 * Ownership: a RunRecord owns its strings and arrays; record_init() makes an
 * empty one, record_done() frees what it holds.  The record_add_* functions
 * copy their arguments.  Figures that are unknown are NAN (floating point)
 * or -1 (counts), never 0; exports write them as null (JSON) or an empty cell
 * (CSV, Markdown).
 *
 * Every export is written atomically (temporary file in the same directory,
 * fsync, rename) and refuses to replace an existing file unless `force` is
 * set.  Functions return 0 or a negative CN_E* code with a one-line message
 * in err that names the file and the problem.
 */
#ifndef CNNTOP_RECORD_H
#define CNNTOP_RECORD_H

#include <stddef.h>

#include "cnntop/calibrate.h"
#include "cnntop/counters.h"
#include "cnntop/engine.h"
#include "cnntop/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECORD_SCHEMA "cnntop.run/1"     /* "schema" of a run export */
#define RECORD_SWEEP_SCHEMA "cnntop.sweep/1" /* "schema" of a sweep export */

/* One finished epoch. */
typedef struct RecordEpoch {
    int epoch;        /* 0-based, of this run */
    double loss;      /* mean training loss over the epoch's steps */
    double accuracy;  /* test accuracy at the epoch's end, 0..1; NAN: not evaluated */
    double wall;      /* seconds since training started, at the epoch's end */
} RecordEpoch;

/* One evaluation on the test set made during training: at each epoch's
 * end, and every N steps with --eval-every N. */
typedef struct RecordEval {
    long step;        /* steps of the run done */
    int epoch;        /* 0-based epoch it ended (epoch_end) or fell in */
    int epoch_end;    /* 1: at the end of an epoch */
    double wall;      /* training seconds up to it (evaluation time excluded) */
    double accuracy;  /* 0..1 */
    double loss;      /* mean test cross-entropy */
} RecordEval;

/* One interval sample with the figures the engine's Sample lacks. */
typedef struct RecordSample {
    Sample s;         /* as engine_samples() gave it */
    int epoch;        /* 0-based epoch the sample fell in; -1: unknown */
    double ipc;       /* instructions per cycle of the compute threads; NAN: not counted */
    double miss_rate; /* cache misses / cache references, 0..1; NAN: not counted */
} RecordSample;

/* One layer and direction of the step, over the run. */
typedef struct RecordLayer {
    char name[32];    /* e.g. "conv2 bwd" */
    double seconds;   /* wall time summed over the run's steps */
    long calls;       /* times it ran */
    double flops;     /* the model's floating-point operations (the direct convolution's
                         count, PyTorch's) summed over the run; NAN: unknown */
    double gflops;    /* flops / seconds / 1e9: the model's rate; NAN: unknown */
    double flops_executed;  /* those the engine ran (fewer in the Winograd layers); NAN: unknown */
    double gflops_executed; /* flops_executed / seconds / 1e9; NAN: unknown */
    double bytes;     /* moved to or from memory on paper over the run (LayerTime);
                         NAN: unknown (an exec record's layer, an older record) */
    double ipc;       /* the trainer thread's instructions / cycles in it; NAN: not counted */
    double miss_rate; /* its cache-misses / cache-references; NAN: not counted */
    char kind[24];    /* an exec record's row: the module's class, e.g. "Conv2d"; "" else */
} RecordLayer;

/* An exec record's model as the hook's layer window measured it
 * (have_model): its rows are the record's layers, "NAME fwd" and "NAME
 * bwd" per leaf module, over `steps` steps. */
typedef struct RecordModel {
    int first;            /* the window's first optimizer step, 1-based */
    long steps;           /* steps the window measured */
    double step_in;       /* median s of a step in the window; NAN: not said */
    double step_out;      /* median s of a step after it; NAN: none came */
    long steps_out;       /* steps after it that step_out covers; -1: none */
} RecordModel;

/* What became of a counter. */
typedef enum RecordCounterStatus {
    RECORD_CTR_OK,          /* counted (perhaps scaled for multiplexing) */
    RECORD_CTR_UNAVAILABLE, /* could not be opened: no PMU, permission, unknown event */
    RECORD_CTR_NOT_COUNTED  /* opened, but never ran (multiplexed out) */
} RecordCounterStatus;

/* One counter of one thread role, over the run. */
typedef struct RecordCounter {
    ThreadRole role;      /* CN_ROLE_TRAIN or CN_ROLE_LOAD */
    char name[64];        /* e.g. "instructions", "task-clock" */
    double value;         /* scaled count; NAN unless status is RECORD_CTR_OK */
    char unit[16];        /* e.g. "msec", "" for plain counts */
    double scaled;        /* time running / time enabled, 0..1; NAN: unknown */
    RecordCounterStatus status;
    char reason[CTR_REASON_LEN]; /* why not counted, e.g. "perf_event_paranoid is 3"; for
                             a counted one a note or "" */
    CtrStatus ctr_status; /* the counter set's own status (status says it in three) */
    CtrKind kind;         /* what the derived figures take it for (by its encoding) */
} RecordCounter;

/* One thread role of a run's counter set: what the counters block says
 * beside the counters (the threads, the time the rates cover, the
 * scheduler's figures). */
typedef struct RecordRole {
    ThreadRole role;      /* CN_ROLE_TRAIN or CN_ROLE_LOAD */
    double wall;          /* seconds the role's counters cover (for rates) */
    CounterSched sched;   /* counters_sched() at the run's end (sched.threads 0: none ran);
                             the record keeps the members the block prints */
} RecordRole;

/* One process of an exec run's tree as the summary's table shows it
 * (ProcInfo, cnntop/proctree.h, at the run's end). */
typedef struct RecordProc {
    int pid, ppid;
    int role;             /* a ProcRole: PROC_ROLE_MAIN, _WORKER, _OTHER */
    char comm[32];        /* /proc/<pid>/comm */
    int threads;          /* threads seen */
    double cpu;           /* s user + system of its threads */
    double cpu_util;      /* cpu / wall: CPUs it kept busy */
    double wall;          /* s from when it was found to its end */
    uint64_t minflt, majflt; /* page faults */
    long hwm_kib;         /* peak resident set (VmHWM), KiB; 0: unknown */
} RecordProc;

/* One process role of an exec run: what its counters block says beside
 * the counters (as RecordRole for a run's thread roles). */
typedef struct RecordExecRole {
    int role;             /* a ProcRole */
    int procs;            /* processes of the role seen; 0: none ran */
    double wall;          /* seconds the role's counters cover (for rates) */
    CounterSched sched;   /* proctree_sched() at the run's end; the members the block prints */
} RecordExecRole;

/* One rank of a data-parallel job (a process that joined torch.distributed),
 * as the Python hook saw it. */
typedef struct RecordExecRank {
    int rank, world;      /* its rank, the world size it joined */
    int pid;              /* its process; 0: unknown */
    int threads;          /* torch.get_num_threads() in it; -1: not said */
    int loader_workers;   /* its DataLoader's num_workers; -1: not said */
    long batches;         /* batches its DataLoader gave */
    double images;        /* samples in its window (after its first batch); NAN: no rate */
    double window;        /* s its window spans; NAN: no rate */
    double images_per_s;  /* images / window; NAN: no rate */
    double data_wait_share; /* share of the window next() waited, 0..1; NAN: no rate */
    double coll;          /* s in torch.distributed's collectives (overlaps merged) */
} RecordExecRank;

/* One of --runs R repeats of the configuration. */
typedef struct RecordRepeat {
    double wall;          /* seconds of training, wall clock */
    double images_per_s;  /* training images / wall */
    double user, system;  /* CPU seconds of the process during training */
    double accuracy;      /* test accuracy, 0..1; NAN: not evaluated */
    int exit_code;        /* what `cnntop run` would have returned for it: 0, 3 (diverged), 128+sig */
} RecordRepeat;

/* What `cnntop exec` learnt of the command it ran (have_exec). */
typedef struct RecordExec {
    char *command;        /* the command profiled, shell-quoted */
    int status;           /* its exit status; -1: killed by a signal */
    int signal;           /* the signal that killed it; 0: it exited */
    double wall;          /* s from its exec to its exit */
    double images_per_s;  /* the Python hook's DataLoader rate; NAN: no hook figures */
    double data_wait_share; /* share of the hook's window next() waited, 0..1; NAN: none */
    long batches;         /* batches the hook saw; -1: no hook figures */
    int loader_workers;   /* num_workers the DataLoader was given (the hook); -1: unknown */
    char torch[32];       /* torch's version the hook reported, e.g. "1.13.1"; "": no hook */
    int worker_procs;     /* data-loader worker processes followed; -1: unknown */
    int busy_threads;     /* main-process threads busy more than 10% of the time (the
                             verdict's compute threads); -1: unknown */
    int runs;             /* measured runs the figures cover (sweep --cmd): exec_counters
                             and batches summed over them, wall, images_per_s and
                             data_wait_share averaged; 1 for one exec; -1: unknown */
    long hook_rejected;   /* lines the hook's pipe carried that were rejected (summed
                             over the runs); -1: the hook was not offered */
    char hook_why[160];   /* the first rejected line's number and reason; "": none */
    char py_error[192];   /* the hook's first uncaught exception of a Python process:
                             "AttributeError at torch/x.py:to_map"; "": none */
    double images;        /* samples in the hook's window (after the first batch); NAN:
                             no rate (below: the same) */
    double window;        /* s the window spans */
    double wait;          /* s next() waited in it */
    double step_s;        /* mean s between batches */
    double first_wait;    /* s the first batch took */
    double cpu;           /* s user + system of the followed processes; NAN: unknown */
    long minflt, majflt;  /* their page faults; -1: unknown */
    int dropped;          /* threads that could not be followed (the sums are partial);
                             -1: unknown */
    char dropped_why[128];/* the first reason, or "" */
    char *progress;       /* --progress's pattern as given; NULL: no --progress */
    long progress_matches;/* output records that matched with a number; -1: no --progress */
    double progress_last, progress_mean, progress_min, progress_max; /* their numbers */
} RecordExec;

typedef struct RunRecord {
    char version[32];      /* cnntop version, e.g. "0.1.0" */
    char date[32];         /* start, ISO 8601 UTC, e.g. "2025-01-31T12:00:00Z" */
    char *command;         /* the command line, shell-quoted; NULL: unknown */
    char *label;           /* a short name for tables, e.g. "batch 64, 2 workers"; NULL: derived */
    RunConfig config;      /* as run; config.data_dir points at data_dir below */
    char *data_dir;        /* the data directory actually used */
    long train_images;     /* training images after --limit; -1: unknown */
    long test_images;      /* test images after --test-limit; -1: unknown */
    int threads_used;      /* compute threads in effect (config.threads may be 0); in an
                              exec record torch.get_num_threads() as the hook saw it;
                              -1: unknown */
    char gemm_path[CN_GEMM_PATH_LEN]; /* where the Winograd GEMMs ran (machine_gemm_path),
                              e.g. "openblas", "native AVX-512"; "" unknown */
    MachineInfo machine;
    double peak_gflops;    /* measured SGEMM rate at the model's shapes (the nearest
                              calibrated batch); NAN: not calibrated */
    double fma_peak_gflops;/* FP32 FMA peak of one process's compute threads (a rank's
                              in a distributed job: record_job_peak() is the job's;
                              calibrate_peak());
                              NAN: not calibrated or none measured */
    char fma_peak_isa[16]; /* its vector width, e.g. "AVX-512"; "" unknown */
    double sketch_gflops;  /* the compute rate of the time on paper: the FMA peak, or
                              where none was measured the SGEMM rate at the run's batch
                              (calibrate_sketch_gflops()); NAN: not calibrated */
    double triad_gbps;     /* the calibrated memory bandwidth (the triad), GB/s, of the
                              time on paper; NAN: not calibrated */
    double flops_per_image;/* training FLOPs per image (forward + backward) as PyTorch
                              counts them, the model's: 46.2e6 */
    double flops_executed_per_image; /* FLOPs the step executes per image (Winograd's
                              convolutions do fewer); NAN: unknown */
    TrainStats train;
    int have_eval;         /* 1 when eval holds an evaluation */
    EvalResult eval;
    long peak_rss_kib;     /* peak resident memory; -1: unknown */
    double loader_samples_per_s; /* what the loader alone could deliver (LiveStats); NAN: unknown */
    double run_queue_wait; /* share of the threads' time waiting for a CPU
                              (counters_wait_share), 0..1; NAN: unknown */
    double ipc;            /* instructions / cycles of the compute threads over the
                              run (counters_derive); NAN: see ipc_na */
    char ipc_na[192];      /* why ipc is NAN, e.g. "cycles not supported: no PMU
                              exposed ..."; "" when known or never counted */
    double miss_rate;      /* cache-misses / cache-references of the compute
                              threads, 0..1; NAN: see miss_rate_na */
    char miss_rate_na[192];
    int interrupted;       /* 1 if stopped by a signal */
    int exit_code;         /* what `cnntop run` returned: 0, 3 (diverged), 128+signal */
    char *error;           /* why the run failed (e.g. diverged); NULL: it did not */

    RecordEpoch *epochs;     size_t n_epochs, cap_epochs;
    RecordSample *samples;   size_t n_samples, cap_samples;
    Segment *segments;       size_t n_segments, cap_segments;
    RecordLayer *layers;     size_t n_layers, cap_layers;
    RecordCounter *counters; size_t n_counters, cap_counters;
    RecordRole *roles;       size_t n_roles, cap_roles; /* the counter set's roles */
    RecordRepeat *repeats;   size_t n_repeats, cap_repeats;
    RecordEval *evals;       size_t n_evals, cap_evals;
    int have_dist;           /* 1: a data-parallel run (train.dist holds the job's figures) */
    DistRank *dist_ranks;    size_t n_dist_ranks, cap_dist_ranks; /* each rank's, by rank */
    double target_accuracy;  /* --target-accuracy, 0..1; NAN: none */
    double time_to_target;   /* training seconds to first reach it; NAN: not reached or none */
    int have_train;          /* 1 (record_init): config, data and train are cnntop's own
                                training; 0: an exec record, where they do not apply */
    int have_exec;           /* 1: exec below holds a `cnntop exec` run */
    RecordExec exec;
    RecordCounter *exec_counters; size_t n_exec_counters, cap_exec_counters;
                             /* per process role (ProcRole in .role) of an exec run */
    int have_model;          /* 1: model holds the layer window of an exec run (the
                                layers are its rows, flops_per_image its count) */
    RecordModel model;
    RecordExecRole *exec_roles; size_t n_exec_roles, cap_exec_roles; /* each ProcRole's */
    RecordProc *exec_procs;  size_t n_exec_procs, cap_exec_procs; /* the tree's processes,
                                at most PROC_MAX_PROCS, in the order found */
    RecordExecRank *exec_ranks;  size_t n_exec_ranks, cap_exec_ranks; /* a data-parallel job's
                                ranks, in the order they joined */
} RunRecord;

/* The processes whose compute a job's peak adds up: a distributed run's
 * ranks (run --dist), an exec job's torch.distributed ranks; 1 for one
 * process. */
int record_job_ranks(const RunRecord *r);

/* The FMA peak of the whole job, GFLOP/s: fma_peak_gflops (one rank's
 * compute threads) times the ranks, where ranks x threads beyond the cores
 * of rank 0's machine add nothing (*capped = 1 then; capped may be NULL);
 * fma_peak_gflops itself for one process. NAN when not calibrated. */
double record_job_peak(const RunRecord *r, int *capped);

/* MFU: images_per_s x flops_per_image / the job's FMA peak, 0..1 (as llm.c
 * and the large-model papers count it); NAN when a figure is unknown. */
double record_mfu(const RunRecord *r, double images_per_s);

/* The executed share: images_per_s x flops_executed_per_image / the job's
 * FMA peak;
 * NAN when a figure is unknown. */
double record_executed_share(const RunRecord *r, double images_per_s);

/* Sets the machine's calibration figures of r for its batch: peak_gflops
 * (the SGEMM rate at the nearest timed batch), the FMA peak and its width,
 * and the rates of the time on paper (sketch_gflops, triad_gbps). */
void record_set_calibration(RunRecord *r, const Calibration *c);

/* Makes an empty record: version from CNNTOP_VERSION, date now, the
 * default config, unknown figures NAN/-1, no arrays.  Never fails. */
void record_init(RunRecord *r);

/* Frees what the record owns and leaves it empty (as after record_init()
 * but with the date and version cleared).  Idempotent. */
void record_done(RunRecord *r);

/* Copies argv into r->command, quoting words the shell would split.
 * Returns 0 or -CN_ENOMEM. */
int record_set_command(RunRecord *r, int argc, char **argv);

/* The same quoting of argv (NULL-terminated) into r->exec.command, and
 * have_exec set.  Returns 0 or -CN_ENOMEM. */
int record_set_exec_command(RunRecord *r, char **argv);

/* One counter reading as the record keeps it, for role (a ThreadRole, or
 * a ProcRole for exec_counters). */
void record_counter_from(RecordCounter *c, const CounterReading *cr, int role);

/* Appends c to the exec run's counters, a role's row, a process's row.
 * 0 or -CN_ENOMEM. */
int record_add_exec_counter(RunRecord *r, const RecordCounter *c);
int record_add_exec_role(RunRecord *r, const RecordExecRole *role);
int record_add_exec_proc(RunRecord *r, const RecordProc *p);
int record_add_exec_rank(RunRecord *r, const RecordExecRank *k);

/* Copies --progress's pattern into r->exec.progress (NULL clears).  0 or
 * -CN_ENOMEM. */
int record_set_exec_progress(RunRecord *r, const char *regex);

/* Copies a string into r->label / r->data_dir (and points config.data_dir
 * at it) / r->error.  NULL clears.  Returns 0 or -CN_ENOMEM. */
int record_set_label(RunRecord *r, const char *label);
int record_set_data_dir(RunRecord *r, const char *dir);
int record_set_error(RunRecord *r, const char *error);

/* Copies cfg into r->config, with its data_dir string. */
int record_set_config(RunRecord *r, const RunConfig *cfg);

/* Append one element (copied).  Return 0 or -CN_ENOMEM. */
int record_add_epoch(RunRecord *r, const RecordEpoch *e);
int record_add_sample(RunRecord *r, const Sample *s, int epoch, double ipc, double miss_rate);
int record_add_segment(RunRecord *r, const Segment *s);
int record_add_layer(RunRecord *r, const LayerTime *lt); /* its flops: NAN where 0 */

/* 1 when the layer's executed FLOPs are known and differ from the model's,
 * or the model counts none there (the Winograd layers; conv1 fwd, the
 * input's moments, and bn1+relu+pool1 fwd, where conv1's convolution
 * runs): where the tables show the executed rate beside the model's. */
int record_layer_executed_differs(const RecordLayer *l);

/* The same test on a layer's counts as the engine gives them (a LayerTime:
 * 0 where none), or as the record keeps them (NAN where none). */
int record_flops_differ(double flops, double flops_executed);

/* The steps the record's layer times are summed over: the training steps,
 * or an exec record's layer window's; 0 when there are none. */
long record_layer_steps(const RunRecord *r);

/* The window's cost: a step in it over a step after it, minus 1 (0.03:
 * 3% slower while measured); NAN when either is unknown. */
double record_model_overhead(const RunRecord *r);
int record_add_counter(RunRecord *r, const RecordCounter *c);
int record_add_role(RunRecord *r, const RecordRole *role);
int record_add_repeat(RunRecord *r, const RecordRepeat *rep);
int record_add_eval(RunRecord *r, const RecordEval *ev);
int record_add_dist_rank(RunRecord *r, const DistRank *d);

/*
 * Fills r from e's last engine_train() call: the configuration in effect,
 * data, machine, training figures, loader rate, per-layer profile (with
 * each layer's IPC and miss rate when cs counted), segments, interval
 * samples, evaluations and epochs (and time_to_target when
 * r->target_accuracy is set), peak memory, and with cs (may be NULL) the
 * counters of every role as they read now.  eval (may be NULL: none) is
 * the final test-set evaluation (engine_evaluate_final()).  The one
 * builder of a record from a run, for every front end; the caller adds
 * what only it knows (command, label, peak_gflops, repeats, error).  Call
 * it on the thread that trained, or once engine_train() has returned.
 * Returns 0 or -CN_ENOMEM (the record then holds part of the figures).
 */
int record_fill(RunRecord *r, Engine *e, CounterSet *cs, const EvalResult *eval);

/* The label of a record: r->label, or one made from the configuration
 * ("batch 64, 2 workers, 8 threads"; ", 2 ranks" more for a distributed
 * run), in buf. */
const char *record_label(const RunRecord *r, char *buf, size_t len);

/*
 * The wall times of the record's runs: one per repeat, or the one training
 * run when there are no repeats (n == 1; an exec record's exec.wall).  Fills up to max; returns how many.
 * record_throughputs() is the same for images/s.
 */
size_t record_times(const RunRecord *r, double *out, size_t max);
size_t record_throughputs(const RunRecord *r, double *out, size_t max);

/*
 * The fastest of n records and the runner-up, as `cnntop sweep` recommends
 * and its Markdown export says: ranked by the mean images/s, or with
 * by_time by the mean wall time (lower is faster), among the records that
 * ended well (not interrupted, no error, the figure known).  best and
 * second are indices into runs (-1: none); welch_ok 1 when Welch's t-test
 * between them could be made (two runs or more each), its result in welch.
 */
typedef struct RecordRank {
    int best, second;
    StatsSummary best_s, second_s; /* their rank figure over the runs */
    int welch_ok;
    StatsWelch welch;
} RecordRank;

void record_rank(const RunRecord *const *runs, size_t n, int by_time, RecordRank *out);

/* 1 when a record that ran has no images/s (an exec run without the hook's
 * figures): such a set is ranked by wall time. */
int record_rank_by_time(const RunRecord *const *runs, size_t n);

/*
 * The speedup of r over base, as `sweep` and its exports give it: images/s
 * over base's, or with by_time base's wall time over r's; *x the ratio,
 * *u its uncertainty propagated from both deviations (NAN unless both have
 * two runs or more).  r == base gives 1 and NAN.
 */
void record_speedup(const RunRecord *r, const RunRecord *base, int by_time, double *x,
                    double *u);

/* Export formats, chosen by the file name's extension. */
typedef enum ExportFormat { EXPORT_JSON, EXPORT_CSV, EXPORT_MD } ExportFormat;

/* The format for path's extension (.json, .csv, .md, any case); -CN_EINVAL
 * naming the supported ones otherwise. */
int export_format(const char *path, ExportFormat *fmt, char *err, size_t errlen);

/*
 * Checks, before a run starts, that an export to path can be written: a
 * known extension, a writable directory, and no existing file unless force.
 * Returns 0, -CN_EINVAL (extension) or -CN_EIO.
 */
int export_check(const char *path, int force, char *err, size_t errlen);

/* Writes the record to path in the format of its extension (see
 * export_check() for the refusals). */
int record_export(const RunRecord *r, const char *path, int force, char *err, size_t errlen);

/* Writes n records as one sweep: JSON {"schema":"cnntop.sweep/1","runs":[...],
 * "results":[...]}, CSV one row per record, Markdown one table. */
int record_export_sweep(const RunRecord *const *runs, size_t n, const char *path, int force,
                        char *err, size_t errlen);

/*
 * The exports as text in memory (for the dashboard and tests): *out is
 * malloc'ed and NUL-terminated, *len its length.  Return 0 or -CN_ENOMEM.
 */
int record_format(const RunRecord *r, ExportFormat fmt, char **out, size_t *len);
int record_format_sweep(const RunRecord *const *runs, size_t n, ExportFormat fmt,
                        char **out, size_t *len);

/*
 * Reads a cnntop.run/1 JSON export into *r (which this initialises; free
 * with record_done() whatever the result).  Errors, all naming the file:
 * -CN_EIO (cannot read), -CN_EFORMAT ("FILE:LINE:COL: ..." for broken JSON,
 * another schema or version, a missing or mistyped field).
 */
int record_load_json(const char *path, RunRecord *r, char *err, size_t errlen);

/*
 * Reads a run export or a sweep export: *out is a malloc'ed array of *n
 * records (one for a run file).  Free each with record_done(), then the
 * array.  Errors as record_load_json().
 */
int record_load_any(const char *path, RunRecord **out, size_t *n, char *err, size_t errlen);

/*
 * Checks what a record's values mean (record_check.c): whole numbers within
 * what cnntop's writers produce (the field table's ranges), times and rates not negative, shares within 0..1, no
 * more correct answers than images, and something to report (a step, an
 * evaluation or an error).  `what` names the record in the message, e.g.
 * "runs.json" or "sweep.json: runs[2]".  Returns 0 or -CN_EFORMAT.
 */
int record_check(const RunRecord *r, const char *what, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
