/*
 * events.c: `cnntop events` (see events.h).
 *
 * Every status shown comes from opening the event on this thread, not from
 * libpfm4's tables: a PMU that libpfm4 recognises from the CPU model may
 * still be hidden from this machine (a virtual machine), and only the
 * kernel can say so.
 */
#include <stdio.h>
#include <string.h>

#include "cnntop/counters.h"
#include "cmd/events.h"
#include "common/exit.h"
#include "common/fmt.h"

#define EVENTS_MAX_PMUS 64

static void print_pmus(void)
{
    CounterPmu pmus[EVENTS_MAX_PMUS];
    char err[256];
    int n = counters_list_pmus(pmus, EVENTS_MAX_PMUS, err, sizeof err);

    if (n < 0) {
        printf("PMUs: n/a: %s\n", err);
        return;
    }
    printf("PMUs libpfm4 detects (%d):\n", n);
    for (int i = 0; i < n && i < EVENTS_MAX_PMUS; i++) {
        printf("  %-12s %-36s %s, %d event%s", pmus[i].name, pmus[i].desc, pmus[i].type,
               pmus[i].nevents, fmt_plural(pmus[i].nevents));
        if (pmus[i].counters)
            printf(", %d counters + %d fixed", pmus[i].counters, pmus[i].fixed);
        printf("\n");
    }
}

static void print_set(CounterSet *cs, const char *spec)
{
    int n = counters_count(cs), ok = 0;

    printf("\n%s events, opened on this thread:\n", spec && *spec && *spec != '+' ?
           "Requested" : spec && *spec == '+' ? "Default and added" : "Default");
    for (int i = 0; i < n; i++) {
        CounterEventInfo info;
        counters_event_info(cs, i, &info);
        if (info.status == CTR_OK) {
            ok++;
            printf("  %-26s ok%s\n", info.name, info.user_only ? " (user space only: the "
                   "kernel refused kernel counting)" : "");
        } else {
            printf("  %-26s n/a: %s\n", info.name, info.reason);
        }
    }
    printf("%d of %d event%s can be counted here.\n", ok, n, fmt_plural(n));
}

typedef struct ListState {
    char pmu[64];
    int shown, need_umask;
} ListState;

static int print_event(void *ud, const char *pmu, const char *full, const char *desc,
                       int encodes)
{
    ListState *st = ud;
    char d[72];

    if (strcmp(st->pmu, pmu) != 0) {
        snprintf(st->pmu, sizeof st->pmu, "%s", pmu);
        printf("\n%s:\n", pmu);
    }
    /* Descriptions are one line in perf list; keep the first 70 characters. */
    snprintf(d, sizeof d, "%s", desc);
    d[strcspn(d, "\n")] = '\0';
    printf("  %-44s %s%s\n", full, d, encodes ? "" : " [needs a unit mask]");
    st->shown++;
    st->need_umask += !encodes;
    return 0;
}

int events_main(const Options *o)
{
    CounterSet *cs;
    char err[256];

    int rc = counters_new(&cs, o->events, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "cnntop events: %s\n", err);
        return rc == -CN_EINVAL ? EXIT_USAGE : EXIT_FAIL;
    }
    print_pmus();
    print_set(cs, o->events);
    counters_free(cs);
    if (o->all) {
        ListState st;
        memset(&st, 0, sizeof st);
        printf("\nEvery event libpfm4 knows for these PMUs (encoding is not opening: "
               "see the statuses above):\n");
        if (counters_list_events(print_event, &st, err, sizeof err) < 0) {
            fprintf(stderr, "cnntop events: %s\n", err);
            return EXIT_FAIL;
        }
        printf("\n%d event%s, %d of them need a unit mask (pmu::EVENT:UMASK).\n", st.shown,
               fmt_plural(st.shown), st.need_umask);
    } else {
        printf("Names: perf's (cycles, task-clock, ...) or pmu::EVENT[:UMASK]; "
               "`cnntop events --all` lists them.\n");
    }
    return EXIT_OK;
}
