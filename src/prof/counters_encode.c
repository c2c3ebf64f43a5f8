/*
 * counters_encode.c: event names to perf_event_attr, by libpfm4.
 *
 * libpfm4 writes the event and its privilege bits; everything cnntop
 * reads back (both times, counting from open, user and kernel, never
 * pinned) is set after it, because libpfm4 rewrites those fields.  The
 * kind of an event comes from its encoding, not its spelling, so
 * "cycles" and "perf::PERF_COUNT_HW_CPU_CYCLES" are one kind.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "prof/counters_encode.h"
#include "prof/counters_say.h"
#include "prof/counters_spec.h"
#include "util/err.h"

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = PFM_ERR_NOINIT;

static void pfm_start(void)
{
    pfm_status = pfm_initialize();
}

int counters_pfm_ready(void)
{
    pthread_once(&pfm_once, pfm_start);
    return pfm_status;
}

/* 1 when name begins "PMU::" for a PMU that libpfm4 has a table for,
 * whether this machine has it or not (is_present). */
static int names_known_pmu(const char *name)
{
    const char *sep = strstr(name, "::");
    int pmu;

    if (!sep || sep == name)
        return 0;
    pfm_for_all_pmus(pmu) {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm_get_pmu_info(pmu, &info) == PFM_SUCCESS && info.name &&
            strlen(info.name) == (size_t)(sep - name) && !strncmp(info.name, name, (size_t)(sep - name)))
            return 1;
    }
    return 0;
}

CtrStatus counters_encode(const char *name, struct perf_event_attr *attr, char *encoding,
                          size_t enclen, char *reason, size_t rlen)
{
    pfm_perf_encode_arg_t arg;
    char *fstr = NULL;
    int ret = counters_pfm_ready();

    memset(attr, 0, sizeof *attr);
    if (encoding && enclen)
        encoding[0] = '\0';
    if (ret != PFM_SUCCESS) {
        counters_say(reason, rlen, "libpfm4 could not start: %s", pfm_strerror(ret));
        return CTR_UNKNOWN_EVENT;
    }
    memset(&arg, 0, sizeof arg);
    arg.attr = attr;
    arg.fstr = &fstr;
    arg.size = sizeof arg;
    ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    if (ret != PFM_SUCCESS) {
        const char *force = getenv("LIBPFM_FORCE_PMU");
        if (names_known_pmu(name))
            counters_say(reason, rlen, "PMU %.*s not on this machine (libpfm4: %s)",
                         (int)(strstr(name, "::") - name), name, pfm_strerror(ret));
        else if (force && *force)
            counters_say(reason, rlen,
                     "unknown event '%s' (%s; LIBPFM_FORCE_PMU=%s hides the generic perf events; "
                     "see cnntop events)", name, pfm_strerror(ret), force);
        else
            counters_say(reason, rlen, "unknown event '%s' (%s; see cnntop events)", name,
                     pfm_strerror(ret));
        free(fstr);
        return CTR_UNKNOWN_EVENT;
    }
    if (encoding && enclen)
        counters_say(encoding, enclen, "%s", fstr ? fstr : name);
    free(fstr);
    /* libpfm4 has written the privilege bits from dfl_plm and cleared
     * pinned; everything below is cnntop's choice and must come after. */
    attr->size = sizeof *attr;
    attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr->disabled = 0;
    attr->inherit = 0;
    attr->pinned = 0;
    attr->exclude_user = 0;
    attr->exclude_kernel = 0;
    attr->exclude_hv = 0;
    attr->sample_period = 0;
    attr->sample_type = 0;
    if (reason && rlen)
        reason[0] = '\0';
    return CTR_OK;
}

CtrKind counters_kind(const struct perf_event_attr *attr)
{
    if (attr->type == PERF_TYPE_HARDWARE) {
        switch (attr->config) {
        case PERF_COUNT_HW_CPU_CYCLES: return CTR_KIND_CYCLES;
        case PERF_COUNT_HW_INSTRUCTIONS: return CTR_KIND_INSTRUCTIONS;
        case PERF_COUNT_HW_CACHE_REFERENCES: return CTR_KIND_CACHE_REFS;
        case PERF_COUNT_HW_CACHE_MISSES: return CTR_KIND_CACHE_MISSES;
        case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return CTR_KIND_BRANCHES;
        case PERF_COUNT_HW_BRANCH_MISSES: return CTR_KIND_BRANCH_MISSES;
        default: return CTR_KIND_OTHER;
        }
    }
    if (attr->type == PERF_TYPE_SOFTWARE) {
        switch (attr->config) {
        case PERF_COUNT_SW_TASK_CLOCK: return CTR_KIND_TASK_CLOCK;
        case PERF_COUNT_SW_CPU_CLOCK: return CTR_KIND_CPU_CLOCK;
        case PERF_COUNT_SW_CONTEXT_SWITCHES: return CTR_KIND_CTX_SWITCHES;
        case PERF_COUNT_SW_CPU_MIGRATIONS: return CTR_KIND_MIGRATIONS;
        case PERF_COUNT_SW_PAGE_FAULTS: return CTR_KIND_PAGE_FAULTS;
        default: return CTR_KIND_OTHER;
        }
    }
    return CTR_KIND_OTHER;
}

int counters_is_hardware(const struct perf_event_attr *attr)
{
    return attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_TRACEPOINT;
}

int counters_check_spec(const char *spec, char *err, size_t errlen)
{
    char names[CTR_MAX_EVENTS][CTR_NAME_LEN];
    int n = counters_parse_spec(spec, names, CTR_MAX_EVENTS, err, errlen);

    for (int i = 0; i < n; i++) {
        struct perf_event_attr attr;
        char why[256];
        if (counters_encode(names[i], &attr, NULL, 0, why, sizeof why) == CTR_OK ||
            names_known_pmu(names[i]))
            continue;
        return cn_fail(err, errlen, -CN_EINVAL, "%s", why);
    }
    return n < 0 ? n : 0;
}
