/*
 * fuzz_json.c: libFuzzer target for the JSON parser (src/util/json.c), the door
 * through which `cnntop report` and the run history read files.
 *
 * Each input is handed to json_parse() as it is (not NUL-terminated).  On
 * failure the message must be one line, "LINE:COLUMN: problem".  On success
 * the tree is written back with the JsonWriter and parsed again, and that
 * second text must parse and write back to exactly the same bytes: the
 * parser accepts what the writer writes, and the two agree on every value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "../json_emit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_json: contract broken: %s\n", what);
    abort();
}

/* Parses text and writes it back; returns the new text (free it) or NULL
 * when it does not parse. */
static char *roundtrip(const char *text, size_t len, size_t *outlen, char *err, size_t errlen)
{
    JsonValue *v = NULL;
    JsonWriter w;
    char *out = NULL;

    if (json_parse(text, len, &v, err, errlen) != 0) {
        if (v)
            fuzz_fail("tree handed out on failure");
        return NULL;
    }
    json_writer_init(&w, 0);
    emit_tree(&w, v);
    json_free(v);
    if (json_writer_finish(&w, &out, outlen) != 0)
        fuzz_fail("the writer cannot write what the parser read");
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    size_t n1 = 0, n2 = 0;
    unsigned line, col;
    char *t1 = roundtrip((const char *)data, size, &n1, err, sizeof err);

    if (!t1) {
        if (strchr(err, '\n') || sscanf(err, "%u:%u:", &line, &col) != 2 || line < 1 || col < 1)
            fuzz_fail("error message is not one 'LINE:COLUMN: problem' line");
        return 0;
    }
    char *t2 = roundtrip(t1, n1, &n2, err, sizeof err);
    if (!t2) {
        fprintf(stderr, "written: %.*s\nerror: %s\n", (int)(n1 < 500 ? n1 : 500), t1, err);
        fuzz_fail("the parser refuses what the writer wrote");
    }
    if (n1 != n2 || memcmp(t1, t2, n1) != 0)
        fuzz_fail("parse and write are not idempotent");
    free(t1);
    free(t2);
    return 0;
}
