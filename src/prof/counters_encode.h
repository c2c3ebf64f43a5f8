/*
 * counters_encode.h: libpfm4, behind one header (STYLE 5).
 *
 * An event name ("cycles", "perf::cycles", "icl::INST_RETIRED:ANY") becomes
 * a perf_event_attr here, and only here and in the listing
 * (counters_list.c) does cnntop speak libpfm4.  The set (counters_set.c)
 * and the tests use these; nothing above src/prof includes this header.
 */
#ifndef CNNTOP_COUNTERS_ENCODE_H
#define CNNTOP_COUNTERS_ENCODE_H

#include <stddef.h>
#include <perfmon/pfmlib_perf_event.h>

#include "cnntop/counters.h"

/* Starts libpfm4 once per process (thread-safe); PFM_SUCCESS or libpfm4's
 * error, for pfm_strerror(). */
int counters_pfm_ready(void);

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

#endif
