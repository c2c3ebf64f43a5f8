/*
 * counters_list.c: what libpfm4 knows here, for `cnntop events`: the PMUs
 * it detects and every event of each, with whether the bare name encodes
 * (an event that needs a unit mask does not).
 */
#include <string.h>

#include "prof/counters_encode.h"
#include "prof/counters_say.h"
#include "util/err.h"

static const char *pmu_type_name(pfm_pmu_type_t t)
{
    switch (t) {
    case PFM_PMU_TYPE_CORE: return "core";
    case PFM_PMU_TYPE_UNCORE: return "uncore";
    case PFM_PMU_TYPE_OS_GENERIC: return "OS generic";
    default: return "unknown";
    }
}

/* 1 when PMU p is present here, with its description in *info. */
static int pmu_present(pfm_pmu_t p, pfm_pmu_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->size = sizeof *info;
    return pfm_get_pmu_info(p, info) == PFM_SUCCESS && info->is_present;
}

int counters_list_pmus(CounterPmu *out, int max, char *err, size_t errlen)
{
    int ret = counters_pfm_ready(), n = 0;
    pfm_pmu_t p;

    if (ret != PFM_SUCCESS)
        return cn_fail(err, errlen, -CN_EIO, "libpfm4: %s", pfm_strerror(ret));
    pfm_for_all_pmus(p) {
        pfm_pmu_info_t info;
        if (!pmu_present(p, &info))
            continue;
        if (n < max) {
            CounterPmu *c = &out[n];
            counters_say(c->name, sizeof c->name, "%s", info.name ? info.name : "?");
            counters_say(c->desc, sizeof c->desc, "%s", info.desc ? info.desc : "");
            c->type = pmu_type_name(info.type);
            c->nevents = info.nevents;
            c->counters = info.num_cntrs;
            c->fixed = info.num_fixed_cntrs;
        }
        n++;
    }
    return n;
}

/* 1 if libpfm4 encodes `full` for perf as it stands. */
static int encodes(const char *full)
{
    struct perf_event_attr a;
    pfm_perf_encode_arg_t arg;

    memset(&a, 0, sizeof a);
    memset(&arg, 0, sizeof arg);
    arg.attr = &a;
    arg.size = sizeof arg;
    return pfm_get_os_event_encoding(full, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) == PFM_SUCCESS;
}

int counters_list_events(CounterEventFn fn, void *ud, char *err, size_t errlen)
{
    int ret = counters_pfm_ready(), n = 0;
    pfm_pmu_t p;

    if (ret != PFM_SUCCESS)
        return cn_fail(err, errlen, -CN_EIO, "libpfm4: %s", pfm_strerror(ret));
    pfm_for_all_pmus(p) {
        pfm_pmu_info_t pinfo;
        if (!pmu_present(p, &pinfo))
            continue;
        for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
            pfm_event_info_t e;
            char full[256];
            memset(&e, 0, sizeof e);
            e.size = sizeof e;
            if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &e) != PFM_SUCCESS)
                continue;
            counters_say(full, sizeof full, "%s::%s", pinfo.name, e.name);
            n++;
            if (fn(ud, pinfo.name, full, e.desc ? e.desc : "", encodes(full)))
                return n;
        }
    }
    return n;
}
