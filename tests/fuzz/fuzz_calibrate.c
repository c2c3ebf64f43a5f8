/*
 * fuzz_calibrate.c: libFuzzer target for the calibration cache reader,
 * calibrate_parse(), which reads a file any process of the user can write.
 *
 * On failure the message must be one line.  On success the figures are
 * written back with calibrate_format() and read again: cnntop must read
 * what it writes, and a second round must give the same text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_calibrate: contract broken: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Calibration c, c2;
    char err[512] = "", t1[8192], t2[8192];

    if (calibrate_parse((const char *)data, size, &c, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            fuzz_fail("error message empty or not one line");
        return 0;
    }
    size_t n1 = calibrate_format(&c, t1, sizeof t1);
    if (n1 >= sizeof t1)
        fuzz_fail("formatted text does not fit");
    if (calibrate_parse(t1, n1, &c2, err, sizeof err) != 0) {
        fprintf(stderr, "written:\n%s\nerror: %s\n", t1, err);
        fuzz_fail("cnntop cannot read the cache it writes");
    }
    size_t n2 = calibrate_format(&c2, t2, sizeof t2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0)
        fuzz_fail("read and write are not idempotent");
    return 0;
}
