/*
 * fields.c: the record's fields (fields.h), the one place that says what a
 * run export holds.
 *
 * Each table lists an object's members in the order the JSON export writes
 * them.  To add a member: one line here (with the revision it appears in:
 * a new RECORD_REV_* after the last, so that older files still read), one
 * paragraph in the man page's "JSON: one run" (a test compares the two), and
 * the value in test_record_fields' fully filled record.
 *
 * A whole number's range (.lo, .hi) is what its writers can produce, taken
 * from their own limits (the settings', the hook's, the process tree's),
 * so that every record cnntop writes is one it reads back: a limit that
 * grows moves the range with it.  record_check() holds a record to them.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <signal.h>

#include "cnntop/figures.h"
#include "cnntop/hookfeed.h"
#include "cnntop/json.h"
#include "cnntop/proctree.h"
#include "record/fields.h"

#include "record/fields_table.h"

static const FieldName aug[] = {
    {CN_AUG_SHIFT, "shift"}, {CN_AUG_ROTATE, "rotate"}, {CN_AUG_ELASTIC, "elastic"},
};
const FieldNames record_aug_names = {"augmentation", sizeof aug / sizeof *aug, aug};

static const FieldName roles[] = {{CN_ROLE_TRAIN, "train"}, {CN_ROLE_LOAD, "load"}};
const FieldNames record_role_names = {"role", sizeof roles / sizeof *roles, roles};

static const FieldName bn_modes[] = {{0, "sync"}, {1, "local"}};
const FieldNames record_bn_names = {"BatchNorm mode", sizeof bn_modes / sizeof *bn_modes,
                                    bn_modes};

/* An exec record's counter roles: ProcRole's values (cnntop/proctree.h). */
static const FieldName proc_roles[] = {{0, "main"}, {1, "worker"}, {2, "other"}, {3, "rank"}};
const FieldNames record_proc_role_names = {"role", sizeof proc_roles / sizeof *proc_roles,
                                           proc_roles};

static const FieldName statuses[] = {
    {RECORD_CTR_OK, "ok"}, {RECORD_CTR_UNAVAILABLE, "unavailable"},
    {RECORD_CTR_NOT_COUNTED, "not-counted"},
};
const FieldNames record_status_names = {"status", sizeof statuses / sizeof *statuses, statuses};

static const FieldName ctr_statuses[] = {
    {CTR_OK, "ok"}, {CTR_NOT_COUNTED, "not-counted"}, {CTR_UNSUPPORTED, "not-supported"},
    {CTR_NO_ACCESS, "no-access"}, {CTR_UNKNOWN_EVENT, "unknown-event"}, {CTR_ERROR, "error"},
};
const FieldNames record_ctr_status_names = {"counter status",
                                            sizeof ctr_statuses / sizeof *ctr_statuses,
                                            ctr_statuses};

static const FieldName kinds[] = {
    {CTR_KIND_OTHER, "other"}, {CTR_KIND_CYCLES, "cycles"},
    {CTR_KIND_INSTRUCTIONS, "instructions"}, {CTR_KIND_CACHE_REFS, "cache-references"},
    {CTR_KIND_CACHE_MISSES, "cache-misses"}, {CTR_KIND_BRANCHES, "branches"},
    {CTR_KIND_BRANCH_MISSES, "branch-misses"}, {CTR_KIND_TASK_CLOCK, "task-clock"},
    {CTR_KIND_CPU_CLOCK, "cpu-clock"}, {CTR_KIND_CTX_SWITCHES, "context-switches"},
    {CTR_KIND_MIGRATIONS, "cpu-migrations"}, {CTR_KIND_PAGE_FAULTS, "page-faults"},
};
const FieldNames record_kind_names = {"counter kind", sizeof kinds / sizeof *kinds, kinds};

const char *field_name(const FieldNames *names, unsigned value)
{
    for (size_t i = 0; i < names->n; i++)
        if (names->v[i].value == value)
            return names->v[i].name;
    return names->v[0].name;
}

/* ---- the ranges ---- */

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
/* threads_used: --threads, every core (--threads 0), or torch's threads as
 * the hook said them. */
#define MAX_THREADS_USED MAX2(MAX2(CN_MAX_THREADS, CN_MAX_CORES), HOOK_MAX_COUNT)
/* A wait status: its exit status has 8 bits, its signal 7 (WTERMSIG); a
 * shell's exit code for a signal N is 128 + N. */
#define MAX_STATUS 255
#define MAX_SIGNAL 127
_Static_assert(128 + MAX_SIGNAL <= MAX_STATUS, "an exit code 128 + signal fits 0..255");
_Static_assert(NSIG - 1 <= MAX_SIGNAL, "this system's signals fit the record's range");
_Static_assert(RECORD_MAX_STEPS <= 0x7fffffffffffffffLL / CN_MAX_BATCH, "train.images fits");
_Static_assert(CN_MAX_STEPS <= 0x7fffffff, "train.epochs_done (int) holds CN_MAX_STEPS");

/* ---- what the writer computes ---- */

static double sgemm_of_peak(const void *r)
{
    return ((const RunRecord *)r)->peak_gflops / ((const RunRecord *)r)->fma_peak_gflops;
}

static double train_gflops(const void *base)
{
    const RunRecord *r = base;
    return r->train.images_per_s * r->flops_per_image * 1e-9;
}

static double train_mfu(const void *r)
{
    return record_mfu(r, ((const RunRecord *)r)->train.images_per_s);
}

static double train_executed(const void *r)
{
    return record_executed_share(r, ((const RunRecord *)r)->train.images_per_s);
}

/* A counter's value means something only when it counted. */
static double counter_value(const void *base)
{
    const RecordCounter *c = base;
    return c->status == RECORD_CTR_OK ? c->value : NAN;
}

/* ---- the tables ---- */

static const Field config_fields[] = {
    F("batch", FT_INT, R(config.batch), FIRST, "images per step", .lo = 1, .hi = CN_MAX_BATCH),
    F("epochs", FT_INT, R(config.epochs), FIRST, "epochs to train", .hi = CN_MAX_EPOCHS),
    F("steps", FT_INT, R(config.steps), FIRST, "steps to train; 0: by epochs",
     .hi = CN_MAX_STEPS),
    F("limit", FT_INT, R(config.limit), FIRST, "training images used; 0: all",
     .hi = CN_MAX_IMAGES),
    F("test_limit", FT_INT, R(config.test_limit), FIRST, "test images used; 0: all",
     .hi = CN_MAX_IMAGES),
    F("threads", FT_INT, R(config.threads), FIRST, "compute threads asked for; 0: all cores",
     .hi = CN_MAX_THREADS),
    F("lr", FT_NUM, R(config.lr), FIRST, "Adam's learning rate"),
    F("seed", FT_UINT64, R(config.seed), FIRST, "the seed, unsigned 64-bit"),
    F("workers", FT_INT, R(config.workers), FIRST, "loader threads; 0: inline",
     .hi = CN_MAX_WORKERS),
    F("prefetch", FT_INT, R(config.prefetch), FIRST, "queue capacity in batches; 0: 2 per worker",
     .hi = CN_MAX_PREFETCH),
    F("augment", FT_FLAGS, R(config.augment), FIRST, "augmentations, by name",
     .names = &record_aug_names),
    F("bn", FT_NAME, R(config.bn_local), RECORD_REV_DIST,
      "BatchNorm statistics with several ranks: sync or local", .names = &record_bn_names),
    END,
};

static const Field data_fields[] = {
    F("dir", FT_DUP, R(data_dir), FIRST, "the data directory used"),
    F("train_images", FT_COUNT, R(train_images), FIRST, "training images after --limit",
     .hi = CN_MAX_IMAGES),
    F("test_images", FT_COUNT, R(test_images), FIRST, "test images after --test-limit",
     .hi = CN_MAX_IMAGES),
    END,
};

static const Field machine_fields[] = {
    F("cpu_model", FT_STR, R(machine.cpu_model), FIRST, "the CPU"),
    F("cores", FT_INT, R(machine.cores), FIRST, "cores this process may use"),
    F("blas_core", FT_STR, R(machine.blas_core), FIRST, "OpenBLAS's kernel"),
    F("blas_config", FT_STR, R(machine.blas_config), FIRST, "OpenBLAS's build string"),
    F("blas_warning", FT_STR, R(machine.blas_warning), FIRST, "narrower vectors than the CPU has"),
    F("blas_note", FT_STR, R(machine.blas_note), RECORD_REV_FMA_PEAK, "who chose the kernel"),
    F("cpu_isa", FT_STR, R(machine.cpu_isa), RECORD_REV_FMA_PEAK, "the CPU's widest vectors"),
    F("blas_isa", FT_STR, R(machine.blas_isa), RECORD_REV_FMA_PEAK, "the kernel's vectors"),
    F("peak_gflops", FT_NUM, R(peak_gflops), FIRST, "calibrated SGEMM rate at the model's shapes"),
    F("fma_peak_gflops", FT_NUM, R(fma_peak_gflops), RECORD_REV_FMA_PEAK, "the FMA peak"),
    F("fma_peak_isa", FT_STR, R(fma_peak_isa), RECORD_REV_FMA_PEAK, "the FMA peak's vectors"),
    F("sketch_gflops", FT_NUM, R(sketch_gflops), RECORD_REV_SUMMARY,
      "the compute rate of the time on paper"),
    F("triad_gbps", FT_NUM, R(triad_gbps), RECORD_REV_SUMMARY, "the calibrated bandwidth"),
    F("sgemm_of_peak", FT_DERIVED, NOWHERE, RECORD_REV_FMA_PEAK, "peak_gflops / fma_peak_gflops",
     .derive = sgemm_of_peak),
    END,
};

static const Field split_fields[] = {
    FV("data", FT_NUM, R(train.split.data), FIRST, "seconds waiting for data"),
    FV("forward", FT_NUM, R(train.split.forward), FIRST, "seconds in the forward pass"),
    FV("backward", FT_NUM, R(train.split.backward), FIRST, "seconds in the backward pass"),
    FV("optimizer", FT_NUM, R(train.split.optimizer), FIRST, "seconds in Adam"),
    FV("comm", FT_NUM, R(train.split.comm), RECORD_REV_DIST,
       "seconds waiting for the other ranks (all-reduces)"),
    END,
};

static const Field train_fields[] = {
    F("steps", FT_INT, R(train.steps), FIRST, "steps done", .hi = RECORD_MAX_STEPS),
    F("images", FT_INT, R(train.images), FIRST, "images trained on",
     .hi = RECORD_MAX_STEPS * CN_MAX_BATCH),
    /* Epochs a run ends: at most its --epochs, or one a step. */
    F("epochs_done", FT_INT, R(train.epochs_done), FIRST, "complete epochs",
     .hi = MAX2(CN_MAX_EPOCHS, CN_MAX_STEPS)),
    FV("wall", FT_NUM, R(train.wall), FIRST, "training wall time"),
    FV("images_per_s", FT_NUM, R(train.images_per_s), FIRST, "images / wall"),
    FV("gflops", FT_DERIVED, NOWHERE, FIRST, "images_per_s x flops_per_image",
       .derive = train_gflops),
    FV("mfu", FT_DERIVED, NOWHERE, RECORD_REV_FMA_PEAK, "model FLOP/s over the FMA peak",
       .derive = train_mfu),
    FV("executed_share", FT_DERIVED, NOWHERE, RECORD_REV_FMA_PEAK, "executed FLOP/s over the peak",
       .derive = train_executed),
    FV("cpu_user", FT_NUM, R(train.cpu_user), FIRST, "user CPU seconds"),
    FV("cpu_sys", FT_NUM, R(train.cpu_sys), FIRST, "system CPU seconds"),
    FV("minor_faults", FT_INT, R(train.minor_faults), FIRST, "minor page faults"),
    F("last_loss", FT_NUM, R(train.last_loss), FIRST, "the last step's loss"),
    F("final_loss", FT_NUM, R(train.final_loss), FIRST, "mean loss over the last epoch"),
    F("stopped", FT_BOOL, R(train.stopped), FIRST, "stopped early"),
    F("split", FT_OBJECT, NOWHERE, FIRST, "where the step time went", .sub = split_fields),
    END,
};


static const Field eval_fields[] = {
    F("images", FT_INT, R(eval.images), FIRST, "test images evaluated", .hi = CN_MAX_IMAGES),
    F("correct", FT_INT, R(eval.correct), FIRST, "classified correctly", .hi = CN_MAX_IMAGES),
    F("accuracy", FT_NUM, R(eval.accuracy), FIRST, "correct / images"),
    F("loss", FT_NUM, R(eval.loss), FIRST, "mean cross-entropy"),
    FV("wall", FT_NUM, R(eval.wall), FIRST, "seconds"),
    END,
};

static const Field epoch_fields[] = {
    F("epoch", FT_INT, AT(RecordEpoch, epoch), FIRST, "0-based"),
    F("loss", FT_NUM, AT(RecordEpoch, loss), FIRST, "mean training loss"),
    F("accuracy", FT_NUM, AT(RecordEpoch, accuracy), FIRST, "test accuracy at its end"),
    FV("wall", FT_NUM, AT(RecordEpoch, wall), FIRST, "seconds at its end"),
    END,
};

static const Field eval_entry_fields[] = {
    F("step", FT_INT, AT(RecordEval, step), RECORD_REV_EVALS, "steps done"),
    F("epoch", FT_INT, AT(RecordEval, epoch), RECORD_REV_EVALS, "the epoch it ended or fell in"),
    F("epoch_end", FT_BOOL, AT(RecordEval, epoch_end), RECORD_REV_EVALS, "at an epoch's end"),
    FV("wall", FT_NUM, AT(RecordEval, wall), RECORD_REV_EVALS, "training seconds up to it"),
    F("accuracy", FT_NUM, AT(RecordEval, accuracy), RECORD_REV_EVALS, "test accuracy"),
    F("loss", FT_NUM, AT(RecordEval, loss), RECORD_REV_EVALS, "mean test cross-entropy"),
    END,
};

static const Field sample_fields[] = {
    FV("t", FT_NUM, AT(RecordSample, s.t), FIRST, "seconds of training at its end"),
    FV("dt", FT_NUM, AT(RecordSample, s.dt), RECORD_REV_SAMPLE_SPAN, "seconds it spans"),
    FV("epoch", FT_COUNT, AT(RecordSample, epoch), FIRST, "0-based epoch"),
    FV("step", FT_INT, AT(RecordSample, s.step), FIRST, "steps done"),
    FV("images", FT_INT, AT(RecordSample, s.images), FIRST, "images done"),
    FV("loss", FT_NUM, AT(RecordSample, s.loss), FIRST, "the last step's loss"),
    FV("images_per_s", FT_NUM, AT(RecordSample, s.images_per_s), FIRST, "over the interval"),
    FV("queue_fill", FT_FILL, AT(RecordSample, s.queue_fill), FIRST, "loader queue fill"),
    FV("data_wait_share", FT_NUM, AT(RecordSample, s.data_wait_share), FIRST, "waiting for data"),
    F("workers", FT_INT, AT(RecordSample, s.workers), FIRST, "loader threads"),
    F("batch", FT_INT, AT(RecordSample, s.batch), FIRST, "images per step"),
    F("segment", FT_INT, AT(RecordSample, s.segment), FIRST, "index into segments"),
    FV("ipc", FT_NUM, AT(RecordSample, ipc), FIRST, "compute threads' IPC"),
    FV("miss_rate", FT_NUM, AT(RecordSample, miss_rate), FIRST, "cache misses per reference"),
    END,
};

static const Field segment_fields[] = {
    F("first_step", FT_INT, AT(Segment, first_step), FIRST, "its first step"),
    F("steps", FT_INT, AT(Segment, steps), FIRST, "its steps"),
    FV("t0", FT_NUM, AT(Segment, t0), FIRST, "start, seconds into the run"),
    FV("wall", FT_NUM, AT(Segment, wall), FIRST, "length, seconds"),
    F("batch", FT_INT, AT(Segment, batch), FIRST, "images per step"),
    F("workers", FT_INT, AT(Segment, workers), FIRST, "loader threads"),
    F("prefetch", FT_INT, AT(Segment, prefetch), FIRST, "queue capacity"),
    F("images", FT_INT, AT(Segment, images), FIRST, "images trained on"),
    FV("images_per_s", FT_NUM, AT(Segment, images_per_s), FIRST, "mean after warm-up"),
    FV("images_per_s_sd", FT_NUM, AT(Segment, images_per_s_sd), FIRST, "their deviation"),
    F("warmup_steps", FT_INT, AT(Segment, warmup_steps), FIRST, "steps left out of the mean"),
    END,
};

static const Field layer_fields[] = {
    F("name", FT_STR, AT(RecordLayer, name), FIRST, "e.g. conv2 bwd"),
    FV("seconds", FT_NUM, AT(RecordLayer, seconds), FIRST, "summed over the run"),
    F("calls", FT_INT, AT(RecordLayer, calls), FIRST, "times it ran"),
    F("flops", FT_NUM, AT(RecordLayer, flops), FIRST, "the model's (direct convolution), summed"),
    FV("gflops", FT_NUM, AT(RecordLayer, gflops), FIRST, "flops / seconds / 1e9"),
    F("flops_executed", FT_NUM, AT(RecordLayer, flops_executed), RECORD_REV_LAYER_EXECUTED,
      "those the engine ran (Winograd), summed"),
    FV("gflops_executed", FT_NUM, AT(RecordLayer, gflops_executed), RECORD_REV_LAYER_EXECUTED,
       "flops_executed / seconds / 1e9"),
    F("bytes", FT_NUM, AT(RecordLayer, bytes), RECORD_REV_LAYER_BYTES,
      "moved to or from memory on paper, summed"),
    FV("ipc", FT_NUM, AT(RecordLayer, ipc), RECORD_REV_LAYER_COUNTERS, "the trainer's IPC in it"),
    FV("miss_rate", FT_NUM, AT(RecordLayer, miss_rate), RECORD_REV_LAYER_COUNTERS,
       "its cache-miss rate"),
    F("kind", FT_STR_NA, AT(RecordLayer, kind), RECORD_REV_MODEL,
      "an exec record's module class; null: the engine's layer"),
    END,
};

/* A counter's members after its role, from revision rev (both tables). */
#define COUNTER_MEMBERS(rev)                                                                   \
    F("name", FT_STR, AT(RecordCounter, name), rev, "the event"),                              \
        FV("value", FT_NUM, AT(RecordCounter, value), rev, "scaled count, when counted",       \
           .derive = counter_value),                                                           \
        F("unit", FT_STR, AT(RecordCounter, unit), rev, "ns, or empty"),                       \
        FV("scaled", FT_NUM, AT(RecordCounter, scaled), rev, "time running / time enabled"),   \
        F("status", FT_NAME, AT(RecordCounter, status), rev, "ok, unavailable, not-counted",   \
          .names = &record_status_names),                                                      \
        F("reason", FT_STR, AT(RecordCounter, reason), rev, "why not counted")

static const Field counter_fields[] = {
    F("role", FT_NAME, AT(RecordCounter, role), FIRST, "train or load",
     .names = &record_role_names),
    COUNTER_MEMBERS(FIRST),
    F("ctr_status", FT_NAME, AT(RecordCounter, ctr_status), RECORD_REV_SUMMARY,
      "the counter set's status", .names = &record_ctr_status_names),
    F("kind", FT_NAME, AT(RecordCounter, kind), RECORD_REV_SUMMARY, "what it counts",
      .names = &record_kind_names),
    END,
};

/* The scheduler's members a counters block prints (CounterSched), of a
 * T whose member sched holds them, from revision rev. */
#define SCHED_MEMBERS(T, rev)                                                                  \
    FV("threads", FT_INT, AT(T, sched.threads), rev, "threads seen"),                          \
        FV("wall", FT_NUM, AT(T, wall), rev, "seconds the rates cover"),                       \
        F("sched", FT_BOOL, AT(T, sched.available), rev, "scheduler figures read"),            \
        F("have_wait", FT_BOOL, AT(T, sched.have_wait), rev, "schedstat present"),             \
        F("reason", FT_STR, AT(T, sched.reason), rev, "why not"),                              \
        FV("wait_share", FT_NUM, AT(T, sched.wait_share), rev, "run-queue wait share"),        \
        FV("cs_per_s", FT_NUM, AT(T, sched.cs_per_s), rev, "context switches a second"),       \
        FV("vol_cs", FT_UINT64, AT(T, sched.vol_cs), rev, "voluntary context switches"),       \
        FV("invol_cs", FT_UINT64, AT(T, sched.invol_cs), rev, "involuntary ones"),             \
        FV("oversubscribed", FT_BOOL, AT(T, sched.oversubscribed), rev,                        \
           "waited for a CPU too long")

/* A role of the counter set: what the counters block prints beside them. */
static const Field role_fields[] = {
    F("role", FT_NAME, AT(RecordRole, role), RECORD_REV_SUMMARY, "train or load",
      .names = &record_role_names),
    SCHED_MEMBERS(RecordRole, RECORD_REV_SUMMARY),
    END,
};

#define RSUM RECORD_REV_EXEC_SUMMARY

/* A process role of an exec run: its processes and what its counters
 * block prints beside them. */
static const Field exec_role_fields[] = {
    F("role", FT_NAME, AT(RecordExecRole, role), RSUM, "main, worker or other",
      .names = &record_proc_role_names),
    F("procs", FT_INT, AT(RecordExecRole, procs), RSUM, "processes of the role seen",
      .hi = PROC_MAX_PROCS),
    SCHED_MEMBERS(RecordExecRole, RSUM),
    END,
};

#define RRANK RECORD_REV_EXEC_RANKS

/* A rank of a data-parallel job, as the hook saw it. */
static const Field exec_rank_fields[] = {
    F("rank", FT_INT, AT(RecordExecRank, rank), RRANK, "its rank", .hi = HOOK_MAX_RANKS - 1),
    F("world", FT_INT, AT(RecordExecRank, world), RRANK, "the world size", .lo = 1,
      .hi = HOOK_MAX_COUNT),
    F("pid", FT_INT, AT(RecordExecRank, pid), RRANK, "its process; 0: unknown", .hi = HOOK_MAX_PID),
    F("threads", FT_COUNT, AT(RecordExecRank, threads), RRANK, "torch.get_num_threads()",
      .hi = HOOK_MAX_COUNT),
    F("loader_workers", FT_COUNT, AT(RecordExecRank, loader_workers), RRANK, "its num_workers",
      .hi = HOOK_MAX_COUNT),
    FV("batches", FT_INT, AT(RecordExecRank, batches), RRANK, "batches its DataLoader gave"),
    FV("images", FT_NUM, AT(RecordExecRank, images), RRANK, "images in its window"),
    FV("window", FT_NUM, AT(RecordExecRank, window), RRANK, "seconds its window spans"),
    FV("images_per_s", FT_NUM, AT(RecordExecRank, images_per_s), RRANK, "its rate"),
    FV("data_wait_share", FT_NUM, AT(RecordExecRank, data_wait_share), RRANK, "share next() waited"),
    FV("coll", FT_NUM, AT(RecordExecRank, coll), RRANK, "seconds in collectives"),
    END,
};

/* A process of an exec run's tree, as the summary's table shows it. */
static const Field exec_proc_fields[] = {
    F("pid", FT_INT, AT(RecordProc, pid), RSUM, "its pid", .hi = HOOK_MAX_PID),
    F("ppid", FT_INT, AT(RecordProc, ppid), RSUM, "its parent's", .hi = HOOK_MAX_PID),
    F("role", FT_NAME, AT(RecordProc, role), RSUM, "main, worker or other",
      .names = &record_proc_role_names),
    F("comm", FT_STR, AT(RecordProc, comm), RSUM, "its command name"),
    FV("threads", FT_INT, AT(RecordProc, threads), RSUM, "threads seen",
       .hi = PROC_MAX_THREADS),
    FV("cpu", FT_NUM, AT(RecordProc, cpu), RSUM, "user + system seconds"),
    FV("cpu_util", FT_NUM, AT(RecordProc, cpu_util), RSUM, "CPUs kept busy"),
    FV("wall", FT_NUM, AT(RecordProc, wall), RSUM, "seconds followed"),
    FV("minflt", FT_UINT64, AT(RecordProc, minflt), RSUM, "minor page faults"),
    FV("majflt", FT_UINT64, AT(RecordProc, majflt), RSUM, "major page faults"),
    FV("hwm_kib", FT_INT, AT(RecordProc, hwm_kib), RSUM, "peak resident set, KiB; 0: unknown"),
    END,
};

static const Field exec_counter_fields[] = {
    F("role", FT_NAME, AT(RecordCounter, role), RECORD_REV_EXEC, "main, worker or other",
     .names = &record_proc_role_names),
    COUNTER_MEMBERS(RECORD_REV_EXEC),
    F("ctr_status", FT_NAME, AT(RecordCounter, ctr_status), RSUM,
      "the counter set's status", .names = &record_ctr_status_names),
    F("kind", FT_NAME, AT(RecordCounter, kind), RSUM, "what it counts",
      .names = &record_kind_names),
    END,
};

#define EX(m) R(exec.m)
#define REXEC RECORD_REV_EXEC
#define RFIG RECORD_REV_EXEC_FIGURES
const Field record_exec_fields[] = {
    F("command", FT_DUP, EX(command), REXEC, "the command profiled, shell-quoted"),
    F("status", FT_COUNT, EX(status), REXEC, "its exit status; null: killed by a signal",
     .hi = MAX_STATUS),
    F("signal", FT_INT, EX(signal), REXEC, "the signal that killed it; 0: none",
     .hi = MAX_SIGNAL),
    FV("wall", FT_NUM, EX(wall), REXEC, "seconds from its exec to its exit"),
    FV("images_per_s", FT_NUM, EX(images_per_s), REXEC, "the hook's DataLoader rate"),
    FV("data_wait_share", FT_NUM, EX(data_wait_share), REXEC, "share of it next() waited"),
    FV("batches", FT_COUNT, EX(batches), REXEC, "batches the hook saw"),
    F("loader_workers", FT_COUNT, EX(loader_workers), RFIG, "num_workers of the DataLoader",
     .hi = HOOK_MAX_COUNT),
    F("torch", FT_STR_NA, EX(torch), RFIG, "torch's version; null: no hook figures"),
    F("worker_procs", FT_COUNT, EX(worker_procs), RFIG,
     "data-loader worker processes alive at once, at most", .hi = PROC_MAX_PROCS),
    FV("busy_threads", FT_COUNT, EX(busy_threads), RFIG, "busy main-process threads",
       .hi = PROC_MAX_THREADS),
    F("runs", FT_COUNT, EX(runs), RFIG, "runs summed (counters, batches) or averaged",
     .hi = CN_MAX_RUNS),
    F("hook_rejected", FT_COUNT, EX(hook_rejected), RECORD_REV_EXEC_HOOK,
     "lines of the Python hook rejected; null: no hook"),
    F("hook_why", FT_STR_NA, EX(hook_why), RSUM, "the first rejected line's reason"),
    FV("images", FT_NUM, EX(images), RSUM, "images in the hook's window"),
    FV("window", FT_NUM, EX(window), RSUM, "seconds the window spans"),
    FV("wait", FT_NUM, EX(wait), RSUM, "seconds next() waited in it"),
    FV("step_s", FT_NUM, EX(step_s), RSUM, "mean seconds between batches"),
    FV("first_wait", FT_NUM, EX(first_wait), RSUM, "seconds the first batch took"),
    FV("cpu", FT_NUM, EX(cpu), RSUM, "user + system seconds of the processes"),
    FV("minflt", FT_COUNT, EX(minflt), RSUM, "their minor page faults"),
    FV("majflt", FT_COUNT, EX(majflt), RSUM, "their major page faults"),
    F("dropped", FT_COUNT, EX(dropped), RSUM, "threads not followed"),
    F("dropped_why", FT_STR_NA, EX(dropped_why), RSUM, "why the first was not"),
    F("progress", FT_DUP, EX(progress), RSUM, "--progress's pattern"),
    FV("progress_matches", FT_COUNT, EX(progress_matches), RSUM, "records it matched"),
    FV("progress_last", FT_NUM, EX(progress_last), RSUM, "the last number"),
    FV("progress_mean", FT_NUM, EX(progress_mean), RSUM, "their mean"),
    FV("progress_min", FT_NUM, EX(progress_min), RSUM, "the least"),
    FV("progress_max", FT_NUM, EX(progress_max), RSUM, "the largest"),
    F("py_error", FT_STR_NA, EX(py_error), RECORD_REV_EXEC_ERROR,
      "the uncaught exception a Python process died of"),
    END,
};

/* An exec record's layer window (the hook's cnntop_layers.py): its own
 * block, RECORD_REV_MODEL. */
static double model_overhead(const void *r)
{
    return record_model_overhead(r);
}

static double model_mfu(const void *r)
{
    return record_mfu(r, ((const RunRecord *)r)->exec.images_per_s);
}

#define MO(m) R(model.m)
const Field record_model_fields[] = {
    F("first", FT_INT, MO(first), RECORD_REV_MODEL, "the window's first optimizer step",
      .lo = 1, .hi = HOOK_MAX_STEPS),
    F("steps", FT_INT, MO(steps), RECORD_REV_MODEL, "steps it measured", .lo = 1,
      .hi = HOOK_MAX_STEPS),
    FV("step_in", FT_NUM, MO(step_in), RECORD_REV_MODEL, "median step in it, s"),
    FV("step_out", FT_NUM, MO(step_out), RECORD_REV_MODEL, "median step after it, s"),
    FV("steps_out", FT_COUNT, MO(steps_out), RECORD_REV_MODEL, "steps after it",
       .hi = HOOK_MAX_STEPS),
    FV("overhead", FT_DERIVED, NOWHERE, RECORD_REV_MODEL, "step_in / step_out - 1",
       .derive = model_overhead),
    FV("mfu", FT_DERIVED, NOWHERE, RECORD_REV_MODEL,
       "exec.images_per_s x flops_per_image over the FMA peak", .derive = model_mfu),
    END,
};

static const Field repeat_fields[] = {
    FV("wall", FT_NUM, AT(RecordRepeat, wall), FIRST, "training seconds"),
    FV("images_per_s", FT_NUM, AT(RecordRepeat, images_per_s), FIRST, "images / wall"),
    FV("user", FT_NUM, AT(RecordRepeat, user), FIRST, "user CPU seconds"),
    FV("system", FT_NUM, AT(RecordRepeat, system), FIRST, "system CPU seconds"),
    F("accuracy", FT_NUM, AT(RecordRepeat, accuracy), FIRST, "test accuracy"),
    F("exit_code", FT_INT, AT(RecordRepeat, exit_code), FIRST, "what cnntop run returned",
     .hi = MAX_STATUS),
    END,
};

const Field record_run_fields[] = {
    F("cnntop_version", FT_STR, R(version), FIRST, "the cnntop that wrote it"),
    FV("date", FT_STR, R(date), FIRST, "start, ISO 8601 UTC"),
    FV("command", FT_DUP, R(command), FIRST, "the command line"),
    F("label", FT_DUP, R(label), FIRST, "a short name for tables"),
    F("config", FT_MAYBE, NOWHERE, FIRST, "the settings; null in an exec record",
     .sub = config_fields, .n_off = offsetof(RunRecord, have_train)),
    F("data", FT_MAYBE, NOWHERE, FIRST, "the data; null in an exec record", .sub = data_fields,
     .n_off = offsetof(RunRecord, have_train)),
    F("threads_used", FT_COUNT, R(threads_used), FIRST, "compute threads in effect",
     .hi = MAX_THREADS_USED),
    F("gemm_path", FT_STR, R(gemm_path), RECORD_REV_GEMM, "where the Winograd GEMMs ran"),
    F("machine", FT_OBJECT, NOWHERE, FIRST, "the machine", .sub = machine_fields),
    F("flops_per_image", FT_NUM, R(flops_per_image), FIRST, "training FLOPs per image"),
    F("flops_executed_per_image", FT_NUM, R(flops_executed_per_image), RECORD_REV_FMA_PEAK,
     "FLOPs the step executes per image"),
    F("train", FT_MAYBE, NOWHERE, FIRST, "the training figures; null in an exec record",
     .sub = train_fields, .n_off = offsetof(RunRecord, have_train)),
    F("eval", FT_MAYBE, NOWHERE, FIRST, "the final evaluation", .sub = eval_fields,
     .n_off = offsetof(RunRecord, have_eval)),
    FV("peak_rss_kib", FT_COUNT, R(peak_rss_kib), FIRST, "peak resident memory"),
    FV("loader_samples_per_s", FT_NUM, R(loader_samples_per_s), FIRST, "the loader alone"),
    FV("run_queue_wait", FT_NUM, R(run_queue_wait), RECORD_REV_VERDICT, "waiting for a CPU"),
    FV("ipc", FT_NUM, R(ipc), RECORD_REV_VERDICT, "compute threads' IPC"),
    F("ipc_na", FT_STR_NA, R(ipc_na), RECORD_REV_VERDICT, "why ipc is null"),
    FV("miss_rate", FT_NUM, R(miss_rate), RECORD_REV_VERDICT, "compute threads' cache-miss rate"),
    F("miss_rate_na", FT_STR_NA, R(miss_rate_na), RECORD_REV_VERDICT, "why miss_rate is null"),
    F("interrupted", FT_BOOL, R(interrupted), FIRST, "stopped by a signal"),
    F("exit_code", FT_INT, R(exit_code), FIRST, "what cnntop run returned", .hi = MAX_STATUS),
    F("error", FT_DUP, R(error), FIRST, "why the run failed"),
    F("epochs", FT_ARRAY, ARRAY(epochs, RecordEpoch), FIRST, "each finished epoch",
     .sub = epoch_fields, COUNTS(epochs)),
    F("target_accuracy", FT_NUM, R(target_accuracy), RECORD_REV_EVALS, "--target-accuracy"),
    FV("time_to_target", FT_NUM, R(time_to_target), RECORD_REV_EVALS, "seconds to reach it"),
    F("evals", FT_ARRAY, ARRAY(evals, RecordEval), RECORD_REV_EVALS, "each evaluation",
     .sub = eval_entry_fields, COUNTS(evals)),
    F("samples", FT_ARRAY, ARRAY(samples, RecordSample), FIRST, "interval samples",
     .sub = sample_fields, COUNTS(samples)),
    F("segments", FT_ARRAY, ARRAY(segments, Segment), FIRST, "stretches of one setting",
     .sub = segment_fields, COUNTS(segments)),
    F("layers", FT_ARRAY, ARRAY(layers, RecordLayer), FIRST, "the per-layer profile",
     .sub = layer_fields, COUNTS(layers)),
    F("counters", FT_ARRAY, ARRAY(counters, RecordCounter), FIRST, "counters per role",
     .sub = counter_fields, COUNTS(counters)),
    F("roles", FT_ARRAY, ARRAY(roles, RecordRole), RECORD_REV_SUMMARY,
      "the counter set's roles", .sub = role_fields, COUNTS(roles)),
    F("repeats", FT_ARRAY, ARRAY(repeats, RecordRepeat), FIRST, "each run of --runs",
     .sub = repeat_fields, COUNTS(repeats)),
    F("dist", FT_MAYBE, NOWHERE, RECORD_REV_DIST, "a data-parallel run's communication",
      .sub = record_dist_fields, .n_off = offsetof(RunRecord, have_dist)),
    F("dist_ranks", FT_ARRAY, ARRAY(dist_ranks, DistRank), RECORD_REV_DIST,
      "each rank's figures, by rank", .sub = record_dist_rank_fields, COUNTS(dist_ranks)),
    F("exec", FT_MAYBE, NOWHERE, REXEC, "the command `cnntop exec` ran", .sub = record_exec_fields,
     .n_off = offsetof(RunRecord, have_exec)),
    F("exec_counters", FT_ARRAY, ARRAY(exec_counters, RecordCounter), REXEC,
     "counters per process role", .sub = exec_counter_fields, COUNTS(exec_counters)),
    F("model", FT_MAYBE, NOWHERE, RECORD_REV_MODEL, "exec's layer window of the model",
      .sub = record_model_fields, .n_off = offsetof(RunRecord, have_model)),
    F("exec_roles", FT_ARRAY, ARRAY(exec_roles, RecordExecRole), RSUM,
      "each process role's processes and scheduler figures", .sub = exec_role_fields,
      COUNTS(exec_roles)),
    F("exec_procs", FT_ARRAY, ARRAY(exec_procs, RecordProc), RSUM, "the tree's processes",
      .sub = exec_proc_fields, COUNTS(exec_procs)),
    F("exec_ranks", FT_ARRAY, ARRAY(exec_ranks, RecordExecRank), RRANK, "a data-parallel job's ranks",
      .sub = exec_rank_fields, COUNTS(exec_ranks)),
    END,
};

#define RES(m) AT(RecordResult, m)

const Field record_result_fields[] = {
    FV("command", FT_DUP, RES(command), FIRST, "the command line, or the label"),
    FV("mean", FT_NUM, RES(time.mean), FIRST, "mean training wall time"),
    FV("stddev", FT_NUM, RES(time.sd), FIRST, "its standard deviation"),
    FV("median", FT_NUM, RES(time.median), FIRST, "median wall time"),
    FV("user", FT_NUM, RES(user), FIRST, "mean user CPU seconds"),
    FV("system", FT_NUM, RES(system), FIRST, "mean system CPU seconds"),
    FV("min", FT_NUM, RES(time.min), FIRST, "shortest"),
    FV("max", FT_NUM, RES(time.max), FIRST, "longest"),
    FV("times", FT_NUM_LIST, RES(times), FIRST, "each run's wall time",
       .n_off = offsetof(RecordResult, n_times)),
    F("exit_codes", FT_INT_LIST, RES(exit_codes), FIRST, "each run's exit status",
     .n_off = offsetof(RecordResult, n_exit_codes)),
    END,
};

void field_set_unknown(const Field *f, void *base)
{
    void *p = field_at(f, base);

    switch (f->type) {
    case FT_STR:
    case FT_STR_NA:
        memset(p, 0, f->size);
        break;
    case FT_NUM:
        if (f->size == sizeof(float))
            *(float *)p = NAN;
        else
            *(double *)p = NAN;
        break;
    case FT_COUNT:
    case FT_FILL:
        if (f->type == FT_FILL)
            *(float *)p = -1.0f;
        else if (f->size == sizeof(long))
            *(long *)p = -1;
        else
            *(int *)p = -1;
        break;
    case FT_NAME:
        *(unsigned *)p = f->names->v[0].value; /* the first name: "ok", "other" */
        break;
    default:
        break; /* an absent array stays empty, a string NULL; nothing else is optional */
    }
}

const Field *field_find(const Field *fields, const char *key)
{
    for (const Field *f = fields; f->key; f++)
        if (!strcmp(f->key, key))
            return f;
    return NULL;
}

/* An int or a long, by the member's size. */
static long long int_of(const Field *f, const void *p)
{
    return f->size == sizeof(int) ? *(const int *)p : *(const long *)p;
}

/* A number as the JSON writes it; 1 (buf "") when it is unknown. */
static int num_text(double x, char *buf, size_t len)
{
    return json_format_number(x, buf, len) == 0 ? 0 : (buf[0] = '\0', 1);
}

int field_text(const Field *f, const void *base, char *buf, size_t len)
{
    const void *p = field_cat(f, base);
    const char *s = NULL;

    buf[0] = '\0';
    switch (f->type) {
    case FT_STR: s = p; break;
    case FT_STR_NA: s = *(const char *)p ? p : NULL; break;
    case FT_DUP: s = *(char *const *)p; break;
    case FT_NAME: s = field_name(f->names, (unsigned)*(const int *)p); break;
    case FT_BOOL: s = *(const int *)p ? "true" : "false"; break;
    case FT_INT:
        snprintf(buf, len, "%lld", int_of(f, p));
        return 0;
    case FT_COUNT:
        if (int_of(f, p) < 0)
            return 1;
        snprintf(buf, len, "%lld", int_of(f, p));
        return 0;
    case FT_NUM:
        if (f->derive)
            return num_text(f->derive(base), buf, len);
        return num_text(f->size == sizeof(float) ? *(const float *)p : *(const double *)p, buf,
                        len);
    case FT_DERIVED: return num_text(f->derive(base), buf, len);
    default: return 1; /* objects, arrays and lists have no one text */
    }
    if (!s)
        return 1;
    snprintf(buf, len, "%s", s);
    return 0;
}
