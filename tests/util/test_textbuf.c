/*
 * test_textbuf.c: the growable text (src/util/textbuf.h): appends of every
 * kind across many growths keep every byte, a formatted piece larger than
 * the room left and larger than the first allocation lands whole, an empty
 * text is "" rather than NULL, and a failed text hands nothing over.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/textbuf.h"

static void test_growth(void)
{
    TextBuf t = {0};
    char *out = NULL, big[10000];
    size_t len = 0, want = 0;

    for (int i = 0; i < 5000; i++) {
        textbuf_printf(&t, "%d,", i);
        textbuf_putc(&t, 'x');
        textbuf_write(&t, "ab\0c", 4); /* a NUL inside is kept */
    }
    for (int i = 0; i < 5000; i++)
        want += (size_t)snprintf(NULL, 0, "%d,", i) + 5;
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    textbuf_printf(&t, "[%s]", big); /* more than the room left and the first size */
    want += sizeof big + 1;
    CHECK_INT(textbuf_finish(&t, &out, &len), ==, 0);
    CHECK_INT(len, ==, want);
    CHECK(out && out[len] == '\0');
    CHECK(out && !memcmp(out, "0,xab\0c1,xab\0c", 14));
    CHECK(out && out[len - 1] == ']' && out[len - 2] == 'y' && out[len - sizeof big - 1] == '[');
    CHECK(t.buf == NULL && t.len == 0); /* handed over */
    free(out);
}

static void test_empty_and_failed(void)
{
    TextBuf t = {0};
    char *out = NULL;
    size_t len = 1;

    CHECK_INT(textbuf_finish(&t, &out, &len), ==, 0);
    CHECK(out && out[0] == '\0' && len == 0);
    free(out);
    textbuf_printf(&t, "%s", "kept?");
    t.failed = 1; /* as after a realloc() that failed */
    textbuf_printf(&t, "%s", " no");
    CHECK_INT((int)t.len, ==, 5);
    CHECK_INT(textbuf_finish(&t, &out, &len), ==, -1);
    CHECK(out == NULL && len == 0);
    textbuf_putc(&t, 'z');
    textbuf_free(&t);
    textbuf_free(&t); /* idempotent */
    CHECK(t.buf == NULL);
}

int main(void)
{
    test_growth();
    test_empty_and_failed();
    return check_report();
}
