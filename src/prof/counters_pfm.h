/*
 * counters_pfm.h: engine-internal side of the counters module.
 *
 * The public API is cnntop/counters.h; this header adds the pieces the
 * tests and the engine may use that speak libpfm4's and the kernel's
 * types: spec parsing, encoding, opening one event, and turning an errno
 * into a reason a person can act on.  perf_event and libpfm4 stay behind
 * this header (STYLE 5): nothing else in src/ includes them.
 */
#ifndef CNNTOP_COUNTERS_INTERNAL_H
#define CNNTOP_COUNTERS_INTERNAL_H

#include <perfmon/pfmlib_perf_event.h>

#include "cnntop/counters.h"

/*
 * Splits `spec` into event names (see counters_new for the grammar).
 * Returns how many, or -CN_EINVAL with a message for an empty name or more
 * than `max` events.
 */
int counters_parse_spec(const char *spec, char (*names)[CTR_NAME_LEN], int max,
                        char *err, size_t errlen);

/*
 * Encodes `name` with libpfm4 (PFM_OS_PERF_EVENT_EXT) into *attr, then sets
 * the fields cnntop wants (size, read_format with both times, counting from
 * open, kernel and user counting, not pinned), because libpfm4 rewrites
 * the privilege bits and clears pinned.  `encoding` (may be NULL) receives
 * libpfm4's full name.  Returns CTR_OK or CTR_UNKNOWN_EVENT with `reason`.
 */
CtrStatus counters_encode(const char *name, struct perf_event_attr *attr, char *encoding,
                          size_t enclen, char *reason, size_t rlen);

/* The kind of an encoded event (CTR_KIND_OTHER for anything else). */
CtrKind counters_kind(const struct perf_event_attr *attr);

/* 1 if the event needs a PMU (anything but a software event). */
int counters_is_hardware(const struct perf_event_attr *attr);

/* perf_event_open(attr, pid=tid, cpu=-1, group=-1, CLOEXEC): an fd or -errno.
 * tid 0 is the calling thread. */
int counters_perf_open(struct perf_event_attr *attr, int tid);

/*
 * The status and reason for perf_event_open's errno `e` (positive) on an
 * event (`hardware`: see counters_is_hardware; `pmu`: 1 if this machine
 * exposes a PMU, 0 if not, -1 unknown).
 */
CtrStatus counters_open_reason(int e, int hardware, int pmu, char *reason, size_t rlen);

/* /proc/sys/kernel/perf_event_paranoid, or -99 when unreadable. */
int counters_paranoid(void);

#endif
