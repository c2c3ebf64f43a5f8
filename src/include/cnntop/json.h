/*
 * json.h: a streaming JSON writer and a small strict DOM parser.
 *
 * Writer: JsonWriter appends to text in memory (an open_memstream).  The caller emits
 * begin/end of objects and arrays, keys and values in document order; the
 * writer puts the commas, the colons and (when pretty) the indentation.
 * Strings are escaped fully: quote, backslash, every control character, and
 * bytes that are not valid UTF-8 become U+FFFD.  Numbers are written with the
 * fewest digits that read back to the same double (at most 17); NaN and the
 * infinities, which JSON cannot hold, are written as null.  64-bit integers
 * are written exactly.  Misuse (a value where a key is due, unbalanced ends)
 * and allocation failure are remembered and reported by json_writer_finish().
 *
 * Parser: json_parse() reads RFC 8259 JSON strictly (no comments, no
 * trailing commas, no leading zeros, no trailing garbage, valid UTF-8 and
 * \u escapes with surrogate pairs) into a tree of JsonValue.  Nesting
 * deeper than JSON_MAX_DEPTH and inputs larger than JSON_MAX_INPUT are
 * refused; errors say "LINE:COLUMN: problem", counting from 1 and columns in
 * characters.  Recursion is bounded by the depth limit and no input can make
 * it read outside the buffer it was given.
 *
 * Lookups (json_get, json_at, json_as_*) accept NULL and values of the
 * wrong type and then return the default, so a reader can chain them and
 * check once.
 */
#ifndef CNNTOP_JSON_H
#define CNNTOP_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JSON_MAX_DEPTH 64                 /* nesting of arrays and objects */
#define JSON_MAX_INPUT ((size_t)256 << 20) /* bytes, 256 MiB */

/* ---- writer ---- */

typedef struct JsonWriter {
    FILE *out;        /* open_memstream() over buf and len; NULL: could not open */
    char *buf;        /* the text, complete once the stream is closed */
    size_t len;       /* its length, likewise */
    int started;      /* 1 once the top-level value has begun */
    int pretty;       /* 1: newlines and two-space indentation */
    int depth;        /* open containers */
    int failed;       /* 1 after allocation failure or misuse */
    unsigned char is_object[JSON_MAX_DEPTH]; /* per open container */
    unsigned char count[JSON_MAX_DEPTH];     /* 0: empty so far, 1: has items */
    int want_value;   /* a key was written; its value is due */
} JsonWriter;

/* Starts an empty document; pretty = 1 indents like hyperfine's exports. */
void json_writer_init(JsonWriter *w, int pretty);

/* Closes the stream and frees the text (unless json_writer_finish() took
 * it).  Idempotent. */
void json_writer_done(JsonWriter *w);

void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);

/* An object member's key; the next call writes its value. */
void json_key(JsonWriter *w, const char *key);

/* A string value; NULL writes null.  json_string_n takes a length and may
 * hold NUL bytes (written as \u0000). */
void json_string(JsonWriter *w, const char *s);
void json_string_n(JsonWriter *w, const char *s, size_t len);

/* A number; NaN and +-infinity are written as null. */
void json_number(JsonWriter *w, double x);
/* A float with the fewest digits that read back to the same float (<= 9). */
void json_float(JsonWriter *w, float x);
void json_int(JsonWriter *w, int64_t x);
void json_uint(JsonWriter *w, uint64_t x);
void json_bool(JsonWriter *w, int b);
void json_null(JsonWriter *w);

/*
 * Ends the document (a trailing newline when pretty) and hands the buffer to
 * the caller: *out (free() it) and *len.  Returns 0, or -1 when the writer
 * failed (out of memory, unbalanced or misplaced calls); nothing is handed
 * over then and the writer is freed either way.
 */
int json_writer_finish(JsonWriter *w, char **out, size_t *len);

/*
 * Formats x as a JSON number into buf (at least 32 bytes): the shortest
 * text of up to 17 (double) or 9 (float) significant digits that reads back
 * exactly, with '.' whatever the locale.  Returns 0, or -1 for NaN and the
 * infinities (buf is then "").  Also what the CSV exports use.
 */
int json_format_number(double x, char *buf, size_t len);
int json_format_float(float x, char *buf, size_t len);

/* ---- parser ---- */

typedef enum JsonType {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} JsonType;

typedef struct JsonValue JsonValue;
typedef struct JsonMember JsonMember;

struct JsonValue {
    JsonType type;
    int boolean;          /* JSON_BOOL: 0 or 1 */
    double number;        /* JSON_NUMBER: the nearest double */
    int int_exact;        /* JSON_NUMBER: 1 when an integer that fits int64 or uint64 */
    int negative;         /* with int_exact: the sign */
    uint64_t magnitude;   /* with int_exact: the absolute value */
    char *str;            /* JSON_STRING: UTF-8, NUL-terminated (may hold NULs) */
    size_t len;           /* JSON_STRING: bytes; ARRAY/OBJECT: elements */
    JsonValue *items;     /* JSON_ARRAY: len values */
    JsonMember *members;  /* JSON_OBJECT: len members, in document order */
};

struct JsonMember {
    char *key;            /* NUL-terminated */
    size_t key_len;
    JsonValue value;
};

/*
 * Parses text[0..len) (need not be NUL-terminated).  On success *out is a
 * tree owned by the caller (json_free()) and 0 is returned.  On failure *out
 * is NULL, -1 is returned and err holds "LINE:COLUMN: problem".
 */
int json_parse(const char *text, size_t len, JsonValue **out, char *err, size_t errlen);

/* Frees a tree from json_parse().  NULL is fine. */
void json_free(JsonValue *v);

/* The member `key` of an object (the first, if repeated), or NULL. */
const JsonValue *json_get(const JsonValue *obj, const char *key);

/* Element i of an array, or NULL. */
const JsonValue *json_at(const JsonValue *arr, size_t i);

/* Elements of an array or members of an object; 0 for anything else. */
size_t json_count(const JsonValue *v);

/* 1 if v is non-NULL and of type t. */
int json_is(const JsonValue *v, JsonType t);

/* The value as a number/integer/string/boolean, or def when v is NULL or of
 * another type (or, for the integers, not an integer in range). */
double json_as_number(const JsonValue *v, double def);
int64_t json_as_int(const JsonValue *v, int64_t def);
uint64_t json_as_uint(const JsonValue *v, uint64_t def);
const char *json_as_string(const JsonValue *v, const char *def);
int json_as_bool(const JsonValue *v, int def);

#ifdef __cplusplus
}
#endif
#endif
