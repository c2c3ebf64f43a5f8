/*
 * envp.c: a child's environment, made before the fork (envp.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/envp.h"

extern char **environ;

/* Whether entry ("NAME=VALUE") sets the variable name (n bytes). */
static int names(const char *entry, const char *name, size_t n)
{
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

char **envp_with(const char *const set[], size_t nset, const char *const unset[],
                 size_t nunset)
{
    size_t n = 0, k = 0;

    while (environ && environ[n])
        n++;
    char **e = malloc((n + nset + 1) * sizeof *e);
    if (!e)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int drop = 0;
        for (size_t a = 0; a < nset && !drop; a++)
            drop = names(environ[i], set[a], strcspn(set[a], "="));
        for (size_t a = 0; a < nunset && !drop; a++)
            drop = names(environ[i], unset[a], strlen(unset[a]));
        if (!drop)
            e[k++] = environ[i];
    }
    for (size_t a = 0; a < nset; a++)
        e[k++] = (char *)set[a];
    e[k] = NULL;
    return e;
}
