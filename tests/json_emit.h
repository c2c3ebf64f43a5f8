/*
 * json_emit.h: a parsed JSON tree written back with the JsonWriter, every
 * number as exactly as the tree holds it (integers exact, -0 kept), for the
 * tests that parse a document, change it and write it again
 * (fuzz/fuzz_json.c, record/test_record_fields.c).
 */
#ifndef CNNTOP_TEST_JSON_EMIT_H
#define CNNTOP_TEST_JSON_EMIT_H

#include <stdint.h>

#include "cnntop/json.h"

static inline void emit_tree(JsonWriter *w, const JsonValue *v)
{
    switch (v->type) {
    case JSON_NULL:
        json_null(w);
        break;
    case JSON_BOOL:
        json_bool(w, v->boolean);
        break;
    case JSON_NUMBER:
        /* -0 is an exact integer with the sign set; only json_number() keeps the sign. */
        if (v->int_exact && v->negative && v->magnitude == 0)
            json_number(w, v->number);
        else if (v->int_exact && v->negative && v->magnitude <= (uint64_t)INT64_MAX + 1)
            json_int(w, v->magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN
                                                               : -(int64_t)v->magnitude);
        else if (v->int_exact && !v->negative)
            json_uint(w, v->magnitude);
        else
            json_number(w, v->number);
        break;
    case JSON_STRING:
        json_string_n(w, v->str, v->len);
        break;
    case JSON_ARRAY:
        json_begin_array(w);
        for (size_t i = 0; i < v->len; i++)
            emit_tree(w, &v->items[i]);
        json_end_array(w);
        break;
    case JSON_OBJECT:
        json_begin_object(w);
        for (size_t i = 0; i < v->len; i++) {
            json_key(w, v->members[i].key);
            emit_tree(w, &v->members[i].value);
        }
        json_end_object(w);
        break;
    }
}

#endif
