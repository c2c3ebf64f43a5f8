/*
 * envp.h: a child's environment, made before the fork.
 *
 * A child forked from a threaded process (the dashboard's engine, sampler
 * and reader threads) should change no environment between fork and exec:
 * setenv() and putenv() allocate and take a lock that another thread may
 * have held at the fork.  Nor should the parent change its own environment
 * for one child: other threads read it, and what one run set stays for the
 * next.  So the launcher and the exec session give the child an array for
 * execve() or execvpe(), made in the parent from this process's environment.
 */
#ifndef CNNTOP_UTIL_ENVP_H
#define CNNTOP_UTIL_ENVP_H

#include <stddef.h>

/* This process's environment with each of set[] ("NAME=VALUE") in place
 * of any variable of that name, and the variables named in unset[] left
 * out; set's entries come last, in order.  The array is malloc'd (free()
 * it), its strings environ's and set's: keep them until the exec.  NULL
 * when out of memory. */
char **envp_with(const char *const set[], size_t nset, const char *const unset[],
                 size_t nunset);

#endif
