/*
 * counters_spec.h: the -e grammar (see counters_new in cnntop/counters.h).
 */
#ifndef CNNTOP_COUNTERS_SPEC_H
#define CNNTOP_COUNTERS_SPEC_H

#include <stddef.h>

#include "cnntop/counters.h"

/*
 * Splits `spec` into event names: NULL or "" the defaults, "a,b" exactly
 * those, "+a,b" the defaults then a and b; blanks around names are
 * dropped and a name already listed is kept once.  Returns how many, or
 * -CN_EINVAL with a message for an empty name, a name of CTR_NAME_LEN or
 * more, or more than `max` events.  Pure.
 */
int counters_parse_spec(const char *spec, char (*names)[CTR_NAME_LEN], int max,
                        char *err, size_t errlen);

#endif
